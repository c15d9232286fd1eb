import { badRequest, invalid, type FieldError } from '../api/statusError.js';
import type { Decision } from './rbacAuthorizer.js';
import type { PolicyRule } from './policyRule.js';
import { accessReviewResources, authorizationGroup } from './rbacResources.js';
import { nonResourceAttributes, type RequestAttributes } from './requestAttributes.js';
import type { UserInfo } from './user.js';

/**
 * The authorization.k8s.io/v1 reviews, answered and never stored:
 * SelfSubjectAccessReview (may the requester do this? what
 * `kubectl auth can-i` asks), SubjectAccessReview (may this user or these
 * groups?), LocalSubjectAccessReview (the same, in the URL's namespace) and
 * SelfSubjectRulesReview (what may the requester do in a namespace?
 * `kubectl auth can-i --list`). They are checked as kube checks them, and
 * answered with the review, its `status` filled in, and 201.
 */

/** How the server decides: RBAC's decision, and the rules a user has in a namespace. */
export interface AccessDecider {
  decide(user: UserInfo | undefined, request: RequestAttributes): Decision;
  rulesFor(user: UserInfo | undefined, namespace: string): { rules: PolicyRule[]; errors: string[] };
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function resourceAttributes(attrs: Json): RequestAttributes {
  return {
    verb: text(attrs.verb),
    resourceRequest: true,
    apiGroup: text(attrs.group),
    apiVersion: text(attrs.version),
    resource: text(attrs.resource),
    subresource: text(attrs.subresource),
    namespace: text(attrs.namespace),
    name: text(attrs.name),
    path: '',
  };
}

function fail(kind: string, errors: FieldError[]): never {
  throw invalid({ group: authorizationGroup, kind }, '', errors);
}

function attributesOf(kind: string, spec: Json, local: boolean): RequestAttributes {
  const resource = spec.resourceAttributes;
  const nonResource = spec.nonResourceAttributes;
  if (local && nonResource !== undefined && nonResource !== null) {
    fail(kind, [{ field: 'spec.nonResourceAttributes', type: 'Invalid value', value: nonResource, detail: 'disallowed on this kind of request' }]);
  }
  const hasResource = isObject(resource);
  const hasNonResource = isObject(nonResource);
  if (hasResource && hasNonResource) {
    fail(kind, [{ field: 'spec.nonResourceAttributes', type: 'Invalid value', value: nonResource, detail: 'cannot be specified in combination with resourceAttributes' }]);
  }
  if (hasResource) return resourceAttributes(resource);
  if (hasNonResource) return nonResourceAttributes(text(nonResource.verb), text(nonResource.path));
  return fail(kind, [{ field: 'spec.resourceAttributes', type: 'Invalid value', value: nonResource ?? null, detail: 'exactly one of nonResourceAttributes or resourceAttributes must be specified' }]);
}

function statusOf(decision: Decision): Json {
  return { allowed: decision.allowed, ...(decision.reason !== '' ? { reason: decision.reason } : {}) };
}

function rulesReview(decider: AccessDecider, requester: UserInfo | undefined, spec: Json): Json {
  const namespace = text(spec.namespace);
  if (namespace === '') throw badRequest('no namespace on request');
  const { rules, errors } = decider.rulesFor(requester, namespace);
  const resourceRules = rules
    .filter((r) => (r.resources ?? []).length > 0)
    .map((r) => ({ verbs: r.verbs ?? [], apiGroups: r.apiGroups ?? [], resources: r.resources ?? [], ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}) }));
  const nonResourceRules = rules.filter((r) => (r.nonResourceURLs ?? []).length > 0).map((r) => ({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs ?? [] }));
  return { resourceRules, nonResourceRules, incomplete: errors.length > 0, ...(errors.length > 0 ? { evaluationError: errors.join(', ') } : {}) };
}

/** The answer to a review created at `resource` (one of `accessReviewResources`) in `urlNamespace`. */
export function answerReview(decider: AccessDecider, resource: string, urlNamespace: string | undefined, body: unknown, requester: UserInfo | undefined): Json {
  const kind = accessReviewResources[resource] as string;
  if (!isObject(body)) throw badRequest(`the body of a ${kind} must be a JSON object`);
  if (body.kind !== undefined && body.kind !== kind) throw badRequest(`the object provided is a ${String(body.kind)}, not a ${kind} (sent to ${resource})`);
  const spec = isObject(body.spec) ? body.spec : {};
  const answer = (status: Json): Json => ({ kind, apiVersion: `${authorizationGroup}/v1`, metadata: { ...(isObject(body.metadata) ? body.metadata : {}), creationTimestamp: null }, spec, status });
  if (resource === 'selfsubjectrulesreviews') return answer(rulesReview(decider, requester, spec));
  if (resource === 'selfsubjectaccessreviews') return answer(statusOf(decider.decide(requester, attributesOf(kind, spec, false))));
  const local = resource === 'localsubjectaccessreviews';
  const user = text(spec.user);
  const groups = Array.isArray(spec.groups) ? spec.groups.filter((g): g is string => typeof g === 'string') : [];
  if (user === '' && groups.length === 0) fail(kind, [{ field: 'spec.user', type: 'Invalid value', value: user, detail: 'at least one of user or group must be specified' }]);
  let attributes = attributesOf(kind, spec, local);
  if (local) {
    if (attributes.namespace === '') attributes = { ...attributes, namespace: urlNamespace ?? '' };
    if (attributes.namespace !== urlNamespace) throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${urlNamespace ?? ''}`);
  }
  const subject: UserInfo = { name: user, ...(typeof spec.uid === 'string' ? { uid: spec.uid } : {}), groups };
  return answer(statusOf(decider.decide(subject, attributes)));
}
