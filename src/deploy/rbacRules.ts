import type { ControllerOptions } from '../controller/controller.js';
import { permissionVerbs } from '../controller/permissions.js';
import type { KubeObject } from '../types.js';

/**
 * The least RBAC a controller needs, derived from its wiring rather than
 * written beside it:
 *
 * - `list` and `watch` on every informer (`for`, `owns`, `watches`,
 *   metadata-only ones too: RBAC does not tell them apart), in the
 *   informer's namespace, or cluster-wide when it watches all of them;
 * - what `permissions` declares, where it says (default: where `for` is);
 * - `create` and `patch` on `events.k8s.io` Events where `for` is, since
 *   the Event recorder writes `events.k8s.io/v1` (a repeat patches its series);
 * - with leader election, `create` on Leases and `get` and `update` on the
 *   one Lease, in its namespace (the elector reads, creates and renews it).
 *
 * Grants of one namespace become one Role, cluster-wide ones one
 * ClusterRole. The verbs are the union per resource; nothing is ever `*`.
 */

/** An RBAC rule, as Role and ClusterRole hold them. */
export interface RbacRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** The rules of one scope: a namespace (a Role) or `undefined` (a ClusterRole). */
export interface ScopedRules {
  namespace: string | undefined;
  rules: RbacRule[];
}

/** What the derivation reads of a controller's options. */
export type RbacInput = Pick<ControllerOptions<KubeObject>, 'name' | 'for' | 'owns' | 'watches' | 'permissions' | 'leaderElection' | 'sharding'>;

/** `"ns/name"` as the Lease of leader election names it; the error says what was given. */
function leaseOf(lease: string): { namespace: string; name: string } {
  const [namespace, name, ...rest] = lease.split('/');
  if (namespace === undefined || namespace === '' || name === undefined || name === '' || rest.length > 0) {
    throw new TypeError(`leaderElection.lease must be "namespace/name", got ${JSON.stringify(lease)}`);
  }
  return { namespace, name };
}

/** By group, then resource, then names (a rule for any name first). */
function byGroupResourceNames(a: RbacRule, b: RbacRule): number {
  const text = (r: RbacRule): string[] => [r.apiGroups[0] ?? '', r.resources[0] ?? '', (r.resourceNames ?? []).join(',')];
  const [x, y] = [text(a), text(b)];
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return (x[i] as string) < (y[i] as string) ? -1 : 1;
  return 0;
}

/** Every rule the controller needs, by scope: the ClusterRole's first (if any), then each namespace's, sorted. */
export function controllerRbac(options: RbacInput): ScopedRules[] {
  // scope → "group|resource|names" → verbs
  const grants = new Map<string, Map<string, Set<string>>>();
  const cluster = '\0cluster';
  const grant = (namespace: string | undefined, group: string, resource: string, verbs: readonly string[], names?: readonly string[]): void => {
    const scope = namespace ?? cluster;
    const rules = grants.get(scope) ?? new Map<string, Set<string>>();
    grants.set(scope, rules);
    const key = JSON.stringify([group, resource, [...(names ?? [])].sort()]);
    const set = rules.get(key) ?? new Set<string>();
    rules.set(key, set);
    for (const verb of verbs) set.add(verb);
  };

  const informers = [options.for, ...(options.owns ?? []), ...(options.watches ?? []).map((w) => w.resource)];
  for (const resource of informers) grant(resource.namespace, resource.group ?? '', resource.resource, ['list', 'watch']);
  const home = options.for.namespace;
  for (const p of options.permissions ?? []) {
    const namespace = p.namespace === undefined ? home : p.namespace === '*' ? undefined : p.namespace;
    grant(namespace, p.group ?? '', p.resource, p.verbs, p.resourceNames);
  }
  grant(home, 'events.k8s.io', 'events', ['create', 'patch']);
  if (options.leaderElection !== undefined) {
    const lease = leaseOf(options.leaderElection.lease);
    grant(lease.namespace, 'coordination.k8s.io', 'leases', ['create']);
    grant(lease.namespace, 'coordination.k8s.io', 'leases', ['get', 'update'], [lease.name]);
  }
  if (options.sharding !== undefined) {
    // One Lease per replica, named after its identity (the pod's, unknown here), and a list of the others' by label.
    grant(options.sharding.namespace ?? 'default', 'coordination.k8s.io', 'leases', ['get', 'list', 'create', 'update', 'delete']);
  }

  const scopes = [...grants.keys()].sort((a, b) => (a === cluster ? -1 : b === cluster ? 1 : a.localeCompare(b)));
  return scopes.map((scope) => ({
    namespace: scope === cluster ? undefined : scope,
    rules: [...(grants.get(scope) as Map<string, Set<string>>).entries()]
      .map(([key, verbs]) => {
        const [group, resource, names] = JSON.parse(key) as [string, string, string[]];
        const rule: RbacRule = { apiGroups: [group], resources: [resource], verbs: permissionVerbs.filter((v) => verbs.has(v)) };
        if (names.length > 0) rule.resourceNames = names;
        return rule;
      })
      .sort(byGroupResourceNames),
  }));
}
