import { builtin, type BuiltinSpec } from '../api/builtinResources.js';
import type { ResourceType } from '../api/resourceType.js';

/**
 * The kinds only RBAC answers: the create-only access reviews of
 * authorization.k8s.io/v1 and the SelfSubjectReview and TokenReview of
 * authentication.k8s.io/v1, with the scope and verbs kube-apiserver 1.32
 * reports. ServiceAccounts (with their `token` subresource) and the four
 * rbac.authorization.k8s.io/v1 kinds are stored built-ins
 * (`api/builtinResources.ts`).
 */

function kind(spec: Omit<BuiltinSpec, 'version'> & { verbs?: readonly string[] }): ResourceType {
  const { verbs, ...rest } = spec;
  const type = builtin({ ...rest, version: 'v1' });
  return verbs === undefined ? type : Object.freeze({ ...type, verbs });
}

export const rbacGroup = 'rbac.authorization.k8s.io';
export const authorizationGroup = 'authorization.k8s.io';

/** The access reviews: answered, never stored. */
export const accessReviewResources: Readonly<Record<string, string>> = {
  selfsubjectaccessreviews: 'SelfSubjectAccessReview',
  subjectaccessreviews: 'SubjectAccessReview',
  localsubjectaccessreviews: 'LocalSubjectAccessReview',
  selfsubjectrulesreviews: 'SelfSubjectRulesReview',
};

export const authenticationGroup = 'authentication.k8s.io';

/** The authentication reviews: who am I (`kubectl auth whoami`), and whom does this token name. */
export const authenticationReviewResources: Readonly<Record<string, string>> = {
  selfsubjectreviews: 'SelfSubjectReview',
  tokenreviews: 'TokenReview',
};

export function rbacResources(): ResourceType[] {
  return [
    ...Object.entries(accessReviewResources).map(([resource, k]) =>
      kind({ group: authorizationGroup, resource, kind: k, namespaced: resource.startsWith('local'), verbs: ['create'] }),
    ),
    ...Object.entries(authenticationReviewResources).map(([resource, k]) => kind({ group: authenticationGroup, resource, kind: k, namespaced: false, verbs: ['create'] })),
  ];
}
