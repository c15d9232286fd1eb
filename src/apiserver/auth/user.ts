/**
 * Who a request comes from, as kube's authenticators name it: a user name,
 * an optional uid, and groups. Service accounts are users named
 * `system:serviceaccount:<ns>:<name>` in the groups `system:serviceaccounts`
 * and `system:serviceaccounts:<ns>`; every authenticated user is in
 * `system:authenticated`; `system:masters` may do anything.
 */
export interface UserInfo {
  readonly name: string;
  readonly uid?: string;
  readonly groups: readonly string[];
}

export const mastersGroup = 'system:masters';
export const authenticatedGroup = 'system:authenticated';
export const serviceAccountsGroup = 'system:serviceaccounts';
const serviceAccountPrefix = 'system:serviceaccount:';

/** The admin the server's default kubeconfig authenticates as. */
export const adminUser: UserInfo = Object.freeze({ name: 'rxkube-admin', groups: Object.freeze([mastersGroup, authenticatedGroup]) });

export function serviceAccountUserName(namespace: string, name: string): string {
  return `${serviceAccountPrefix}${namespace}:${name}`;
}

/** The user a service account authenticates as. */
export function serviceAccountUser(namespace: string, name: string, uid?: string): UserInfo {
  return {
    name: serviceAccountUserName(namespace, name),
    ...(uid !== undefined ? { uid } : {}),
    groups: [serviceAccountsGroup, `${serviceAccountsGroup}:${namespace}`, authenticatedGroup],
  };
}

/** The namespace and name of a service account's user name, or undefined for any other user. */
export function parseServiceAccountUserName(user: string): { namespace: string; name: string } | undefined {
  if (!user.startsWith(serviceAccountPrefix)) return undefined;
  const parts = user.slice(serviceAccountPrefix.length).split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return undefined;
  return { namespace: parts[0], name: parts[1] };
}
