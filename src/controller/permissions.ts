import type { ResourceRef } from '../types.js';

/**
 * What a controller's reconcile may do on the API server beyond watching
 * its informers: declared next to the wiring (`permissions` of
 * `controller()`), so that `rxkube manifests` derives the least RBAC from
 * the code rather than from markers that drift from it. `controller()` and
 * `rxkube manifests` (and `rxkube run`) check the wiring and the
 * declaration with one function, `checkControllerAccess`; the API server's
 * RBAC enforces what it grants.
 */

/**
 * The verbs a reconcile may be granted. Never `*`: a grant names what it
 * allows. `escalate`, `bind` and `impersonate` let the controller act with
 * more than its own grants (write a Role with verbs it does not hold, bind
 * one, act as another user): a grant holding one needs
 * `allowPrivilegeEscalation: true`.
 */
export type PermissionVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'escalate' | 'bind' | 'impersonate';

/** The verbs of `PermissionVerb`, in the order RBAC rules list them. */
export const permissionVerbs: readonly PermissionVerb[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', 'escalate', 'bind', 'impersonate'];

const verbs: ReadonlySet<string> = new Set<string>(permissionVerbs);

/** The verbs that grant more than the controller holds (kube's RBAC escalation checks and impersonation). */
const escalating: ReadonlySet<string> = new Set<PermissionVerb>(['escalate', 'bind', 'impersonate']);

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
  /**
   * Says that the grant is meant to let the controller act beyond its own
   * permissions: required (`true`) when `verbs` holds `escalate`, `bind` or
   * `impersonate`, which kube's RBAC otherwise refuses to let anyone use to
   * raise their own access.
   */
  allowPrivilegeEscalation?: boolean;
}

const resourcePattern = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(\/[a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/;
const informerResourcePattern = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** An informer's resource, as the check reads it. */
type InformedResource = ResourceRef & { kind: string };

/** What `checkControllerAccess` reads of a controller's options. */
export interface ControllerAccess {
  readonly name: string;
  readonly for: InformedResource;
  readonly owns?: readonly InformedResource[];
  readonly watches?: readonly { readonly resource: InformedResource }[];
  readonly permissions?: readonly ControllerPermission[];
}

/**
 * Throws a TypeError naming the first entry of the controller's wiring
 * that is malformed or would grant more than the controller names: an
 * informer without `{ group, version, resource, kind }` or with a wildcard
 * (whose list and watch on everything would cover every Secret), or a
 * grant `checkPermissions` refuses. The one check of `controller()` and of
 * the commands that derive RBAC from a definition.
 */
export function checkControllerAccess(options: ControllerAccess): void {
  const informers: [string, InformedResource | undefined][] = [
    ['for', options.for],
    ...(options.owns ?? []).map((r, i): [string, InformedResource] => [`owns[${i}]`, r]),
    ...(options.watches ?? []).map((w, i): [string, InformedResource | undefined] => [`watches[${i}].resource`, w?.resource]),
  ];
  for (const [role, resource] of informers) {
    if (!resource || typeof resource.resource !== 'string' || typeof resource.version !== 'string' || typeof resource.kind !== 'string') {
      throw new TypeError(`controller "${options.name}": ${role} needs { group, version, resource, kind }`);
    }
    if (!informerResourcePattern.test(resource.resource)) {
      throw new TypeError(`controller "${options.name}": ${role}.resource must be a plural resource name such as "deployments" (no wildcard), got ${JSON.stringify(resource.resource)}`);
    }
    const group: unknown = resource.group;
    if (group !== undefined && (typeof group !== 'string' || group.includes('*'))) {
      throw new TypeError(`controller "${options.name}": ${role}.group must be an API group name (no wildcard), got ${JSON.stringify(group)}`);
    }
  }
  checkPermissions(options.name, options.permissions);
}

/** Throws a TypeError naming the first malformed grant of `permissions` (a wildcard, an unknown verb, an escalating verb not acknowledged, a `create` limited by name). */
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
      if (escalating.has(verb) && p.allowPrivilegeEscalation !== true) {
        throw new TypeError(`${where}.verbs: ${JSON.stringify(verb)} lets the controller act beyond its own permissions; say that it is meant with allowPrivilegeEscalation: true`);
      }
    }
    if (p.allowPrivilegeEscalation !== undefined && typeof p.allowPrivilegeEscalation !== 'boolean') {
      throw new TypeError(`${where}.allowPrivilegeEscalation must be true or false, got ${JSON.stringify(p.allowPrivilegeEscalation)}`);
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
