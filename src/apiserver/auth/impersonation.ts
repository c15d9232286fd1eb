import { badRequest } from '../api/statusError.js';
import { forbiddenRequest } from './forbidden.js';
import type { RbacAuthorizer } from './rbacAuthorizer.js';
import type { RequestAttributes } from './requestAttributes.js';
import { authenticatedGroup, parseServiceAccountUserName, serviceAccountUser, type UserInfo } from './user.js';

/**
 * Impersonation (`kubectl --as alice --as-group devs`), as kube's filter does
 * it: the requester needs the `impersonate` verb on `users` (or on the
 * ServiceAccount, for `system:serviceaccount:ns:name`) and on each of
 * `groups`, or gets the 403 for that; the request then goes on as the
 * impersonated user, in the groups asked for (a ServiceAccount's own when
 * none are) and `system:authenticated`.
 */

export interface ImpersonationHeaders {
  readonly impersonateUser?: string;
  readonly impersonateGroups?: readonly string[];
}

function impersonating(resource: string, name: string, namespace = ''): RequestAttributes {
  return { verb: 'impersonate', resourceRequest: true, apiGroup: '', apiVersion: '', resource, subresource: '', namespace, name, path: '' };
}

/** The user a request acts as: `requester`, or whom it impersonates when it may. */
export function actingUser(authorizer: RbacAuthorizer, requester: UserInfo, headers: ImpersonationHeaders): UserInfo {
  const name = headers.impersonateUser;
  const groups = headers.impersonateGroups ?? [];
  if (name === undefined) {
    if (groups.length > 0) throw badRequest(`requested impersonation of groups ${JSON.stringify(groups)} without impersonating a user`);
    return requester;
  }
  const account = parseServiceAccountUserName(name);
  const checks = [account === undefined ? impersonating('users', name) : impersonating('serviceaccounts', account.name, account.namespace), ...groups.map((g) => impersonating('groups', g))];
  for (const check of checks) {
    const decision = authorizer.authorize(requester, check);
    if (!decision.allowed) throw forbiddenRequest(requester.name, check, decision.reason);
  }
  const base = groups.length === 0 && account !== undefined ? serviceAccountUser(account.namespace, account.name).groups.filter((g) => g !== authenticatedGroup) : groups;
  const addAuthenticated = name !== 'system:anonymous' && !base.includes(authenticatedGroup) && !base.includes('system:unauthenticated');
  return { name, groups: addAuthenticated ? [...base, authenticatedGroup] : [...base] };
}
