import { builtin, type BuiltinSpec } from '../api/builtinResources.js';
import type { ResourceType } from '../api/resourceType.js';

/**
 * The kinds RBAC needs served: ServiceAccounts (with their `token`
 * subresource, TokenRequest), the four rbac.authorization.k8s.io/v1 kinds,
 * the create-only access reviews of authorization.k8s.io/v1 and the
 * SelfSubjectReview and TokenReview of authentication.k8s.io/v1, with the
 * scope, short names and verbs kube-apiserver 1.32 reports. The registry
 * adds those it does not serve already, so a list of built-ins that names
 * them too wins.
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
    kind({
      group: '',
      resource: 'serviceaccounts',
      kind: 'ServiceAccount',
      namespaced: true,
      shortNames: ['sa'],
      extraSubresources: [{ name: 'token', kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] }],
    }),
    kind({ group: rbacGroup, resource: 'roles', kind: 'Role', namespaced: true }),
    kind({ group: rbacGroup, resource: 'rolebindings', kind: 'RoleBinding', namespaced: true }),
    kind({ group: rbacGroup, resource: 'clusterroles', kind: 'ClusterRole', namespaced: false }),
    kind({ group: rbacGroup, resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false }),
    ...Object.entries(accessReviewResources).map(([resource, k]) =>
      kind({ group: authorizationGroup, resource, kind: k, namespaced: resource.startsWith('local'), verbs: ['create'] }),
    ),
    ...Object.entries(authenticationReviewResources).map(([resource, k]) => kind({ group: authenticationGroup, resource, kind: k, namespaced: false, verbs: ['create'] })),
  ];
}
