/**
 * What a controller's reconcile may do on the API server beyond watching
 * its informers: declared next to the wiring (`permissions` of
 * `controller()`), so that `rxkube manifests` derives the least RBAC from
 * the code rather than from markers that drift from it. `controller()`
 * checks the declaration's shape; the API server's RBAC enforces it.
 */

/** The verbs a reconcile may be granted. Never `*`: a grant names what it allows. */
export type PermissionVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

const verbs: ReadonlySet<string> = new Set<PermissionVerb>(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection']);

/** One grant: verbs on one resource (or one of its subresources). */
export interface ControllerPermission {
  /** The API group; "" (or omitted) for the core group. */
  group?: string;
  /** The plural resource as RBAC names it: `deployments`, or a subresource `podautoscalers/status`. */
  resource: string;
  /** What the reconcile does to it. */
  verbs: readonly PermissionVerb[];
  /** Only these objects (RBAC's `resourceNames`; `create` cannot be limited by name). */
  resourceNames?: readonly string[];
  /**
   * Where the grant holds: a namespace, or `'*'` for every namespace and
   * cluster-scoped resources (a ClusterRole). Default: where the primary
   * resource is watched (its namespace; every namespace when it has none).
   */
  namespace?: string;
}

const resourcePattern = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(\/[a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/;

/** Throws a TypeError naming the first malformed grant of `permissions` (a wildcard, an unknown verb, a `create` limited by name). */
export function checkPermissions(controller: string, permissions: unknown): void {
  if (permissions === undefined) return;
  if (!Array.isArray(permissions)) throw new TypeError(`controller "${controller}": permissions must be an array, got ${JSON.stringify(permissions)}`);
  permissions.forEach((grant: unknown, index) => {
    const where = `controller "${controller}": permissions[${index}]`;
    const p = grant as Partial<ControllerPermission> | null;
    if (p === null || typeof p !== 'object') throw new TypeError(`${where} must be { group, resource, verbs }, got ${JSON.stringify(grant)}`);
    if (typeof p.resource !== 'string' || !resourcePattern.test(p.resource)) {
      throw new TypeError(`${where}.resource must be a plural resource name such as "deployments" or "podautoscalers/status" (no wildcard), got ${JSON.stringify(p.resource)}`);
    }
    if (p.group !== undefined && (typeof p.group !== 'string' || p.group.includes('*'))) throw new TypeError(`${where}.group must be an API group name (no wildcard), got ${JSON.stringify(p.group)}`);
    if (!Array.isArray(p.verbs) || p.verbs.length === 0) throw new TypeError(`${where}.verbs must list at least one verb`);
    for (const verb of p.verbs) {
      if (!verbs.has(verb)) throw new TypeError(`${where}.verbs: ${JSON.stringify(verb)} is not one of ${[...verbs].join(', ')}`);
    }
    if (p.resourceNames !== undefined) {
      if (!Array.isArray(p.resourceNames) || p.resourceNames.length === 0 || p.resourceNames.some((n) => typeof n !== 'string' || n === '' || n.includes('*'))) {
        throw new TypeError(`${where}.resourceNames must list object names (no wildcard), got ${JSON.stringify(p.resourceNames)}`);
      }
      if (p.verbs.includes('create')) throw new TypeError(`${where}: "create" cannot be limited by resourceNames (the name is not known when RBAC decides); grant it in a separate permission`);
    }
    if (p.namespace !== undefined && (typeof p.namespace !== 'string' || p.namespace === '')) throw new TypeError(`${where}.namespace must be a namespace or "*", got ${JSON.stringify(p.namespace)}`);
  });
}
