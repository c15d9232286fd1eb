import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../types.js';
import { isPlainObject } from '../../util/json.js';
import { ApiError, forbidden, notFound } from '../api/statusError.js';
import type { ResourceType } from '../api/resourceType.js';
import type { PolicyRule } from './policyRule.js';
import type { RbacAuthorizer } from './rbacAuthorizer.js';
import { roleRefOf } from './roleRefUpdate.js';
import { rbacGroup } from './rbacResources.js';
import { goQuote } from '../validation/goText.js';
import { compactRules, compactString, goQuotedList, uncoveredRules } from './ruleCovers.js';
import type { UserInfo } from './user.js';

/**
 * Kube's RBAC storage, which refuses to store a grant the requester could
 * not make herself (pkg/registry/rbac: the policy-based storages and their
 * escalation check). A Role or ClusterRole is stored only when she holds
 * every rule it grants, in the role's namespace or cluster-wide for a
 * ClusterRole, or may `escalate` roles (a ClusterRole with an
 * `aggregationRule`, which can gather anything, needs every permission
 * there is). A binding is stored only when she may `bind` the role it
 * refers to, in the binding's namespace (cluster-wide for a
 * ClusterRoleBinding), or holds every rule of that role; a role that does
 * not exist is a 404. An update that changes only what the garbage
 * collector changes (ownerReferences, finalizers) is not checked. A
 * refusal is kube's 403, listing what she lacks:
 *   rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "u" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
 *   {APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}
 * `system:masters` is never checked (kube's privileged loopback group), and
 * the caller does not ask for it.
 */

/** The request that writes an RBAC object: the namespace and name of its URL ("" for none). */
export interface RbacWriteRequest {
  readonly namespace: string;
  readonly name: string;
}

/** What kube's check of a ClusterRole with an aggregationRule asks for: everything. */
const fullAuthority: readonly PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

/** The rules an object grants, read defensively: a field of the wrong type grants nothing. */
function rulesOf(object: KubeObject): PolicyRule[] {
  const rules = (object as { rules?: unknown }).rules;
  if (!Array.isArray(rules)) return [];
  return rules.filter(isPlainObject).map((r) => ({
    verbs: strings(r.verbs),
    apiGroups: strings(r.apiGroups),
    resources: strings(r.resources),
    resourceNames: strings(r.resourceNames),
    nonResourceURLs: strings(r.nonResourceURLs),
  }));
}

function hasAggregationRule(object: KubeObject | undefined): boolean {
  const rule = (object as { aggregationRule?: { clusterRoleSelectors?: unknown } } | undefined)?.aggregationRule;
  return Array.isArray(rule?.clusterRoleSelectors) && rule.clusterRoleSelectors.length > 0;
}

/** Kube's IsOnlyMutatingGCFields: the update changes nothing but ownerReferences and finalizers. */
function onlyGarbageCollectorFields(next: KubeObject, live: KubeObject): boolean {
  const strip = (o: KubeObject): unknown => {
    const { ownerReferences: _o, finalizers: _f, resourceVersion: _rv, selfLink: _s, ...meta } = o.metadata as Record<string, unknown>;
    return { ...o, metadata: meta };
  };
  return isDeepStrictEqual(strip(next), strip(live));
}

/** Kube's errors aggregate: one message as it is, several (each once) in brackets. */
function aggregate(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * Kube's ConfirmNoEscalation: the refusal (without the resource that is refused) when `user`
 * does not hold every rule of `wanted` in `namespace` ("" for cluster-wide only), else undefined.
 */
export function escalationRefusal(authorizer: RbacAuthorizer, user: UserInfo, namespace: string, wanted: readonly PolicyRule[]): string | undefined {
  const held: PolicyRule[] = [];
  const errors: string[] = [];
  authorizer.visitRulesFor(
    user,
    namespace,
    (_source, rule, error) => {
      if (rule !== undefined) held.push(rule);
      if (error !== undefined) errors.push(error);
      return true;
    },
    'registry',
  );
  const missing = uncoveredRules(held, wanted);
  if (missing.length === 0) return undefined;
  const lines = [...new Set(compactRules(missing).map(compactString))].sort(byteOrder);
  const message = `user ${goQuote(user.name)} (groups=${goQuotedList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  return errors.length === 0 ? message : `${message}; resolution errors: [${aggregate(errors)}]`;
}

function allowed(authorizer: RbacAuthorizer, user: UserInfo, verb: string, resource: string, apiGroup: string, namespace: string, name: string): boolean {
  return authorizer.authorize(user, { verb, resourceRequest: true, apiGroup, apiVersion: '*', resource, subresource: '', namespace, name, path: '' }).allowed;
}

function checkRole(authorizer: RbacAuthorizer, user: UserInfo, request: RbacWriteRequest, type: ResourceType, object: KubeObject, live: KubeObject | undefined): void {
  if (allowed(authorizer, user, 'escalate', type.resource, type.group, request.namespace, request.name)) return;
  if (live !== undefined && onlyGarbageCollectorFields(object, live)) return;
  const gr = { group: type.group, resource: type.resource };
  const name = object.metadata.name ?? '';
  const refusal = escalationRefusal(authorizer, user, request.namespace, rulesOf(object));
  if (refusal !== undefined) throw forbidden(gr, name, refusal);
  if (type.resource !== 'clusterroles' || !(hasAggregationRule(object) || hasAggregationRule(live))) return;
  if (escalationRefusal(authorizer, user, request.namespace, fullAuthority) !== undefined) {
    throw forbidden(gr, name, 'must have cluster-admin privileges to use the aggregationRule');
  }
}

function checkBinding(authorizer: RbacAuthorizer, user: UserInfo, request: RbacWriteRequest, type: ResourceType, object: KubeObject, live: KubeObject | undefined): void {
  if (live !== undefined && onlyGarbageCollectorFields(object, live)) return;
  const roleRef = roleRefOf(object);
  const roleResource = roleRef.kind === 'ClusterRole' ? 'clusterroles' : roleRef.kind === 'Role' ? 'roles' : undefined;
  if (roleResource !== undefined && allowed(authorizer, user, 'bind', roleResource, roleRef.apiGroup ?? '', request.namespace, roleRef.name ?? '')) return;
  const reference = authorizer.roleReferenceRules(roleRef, request.namespace, 'registry');
  if (reference.missing !== undefined) throw notFound({ group: rbacGroup, resource: reference.missing.resource }, reference.missing.name);
  // Kube's storage returns this error as it is, which its handler answers as an unknown 500.
  if (reference.error !== undefined) throw new ApiError(500, 'Unknown', reference.error);
  const refusal = escalationRefusal(authorizer, user, request.namespace, reference.rules);
  if (refusal !== undefined) throw forbidden({ group: type.group, resource: type.resource }, object.metadata.name ?? '', refusal);
}

/**
 * Throws kube's refusal when `user` may not store `object` (with `live` the stored object, on an
 * update) through `request`; RBAC objects only, anything else passes.
 */
export function checkRbacWrite(authorizer: RbacAuthorizer, user: UserInfo, request: RbacWriteRequest, type: ResourceType, object: KubeObject, live: KubeObject | undefined): void {
  if (!type.builtin || type.group !== rbacGroup) return;
  if (type.resource === 'roles' || type.resource === 'clusterroles') checkRole(authorizer, user, request, type, object, live);
  else if (type.resource === 'rolebindings' || type.resource === 'clusterrolebindings') checkBinding(authorizer, user, request, type, object, live);
}
