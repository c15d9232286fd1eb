import { randomBytes } from 'node:crypto';
import type { Cluster, WriteGuard } from '../cluster.js';
import type { ResourceType } from '../api/resourceType.js';
import { answerReview, type AccessDecider } from './accessReview.js';
import { Authenticator } from './authenticator.js';
import { bootstrapClusterRoleBindings, bootstrapClusterRoles } from './bootstrapPolicy.js';
import { ClusterRoleAggregation } from './clusterRoleAggregation.js';
import { checkRbacWrite, type RbacWriteRequest } from './escalationCheck.js';
import { forbiddenRequest } from './forbidden.js';
import { actingUser, type ImpersonationHeaders } from './impersonation.js';
import type { PolicyRule } from './policyRule.js';
import { RbacAuthorizer, type Decision } from './rbacAuthorizer.js';
import { accessReviewResources, authenticationGroup, authenticationReviewResources, authorizationGroup, rbacGroup } from './rbacResources.js';
import { answerAuthenticationReview } from './authenticationReview.js';
import type { RequestAttributes } from './requestAttributes.js';
import { answerTokenRequest, issueServiceAccountToken } from './tokenRequest.js';
import { mastersGroup, type UserInfo } from './user.js';

/**
 * Who may do what on one server. With `rbac` off (the default) every
 * request that carries the server's token (or any, when it has none) may do
 * anything, as with kube's AlwaysAllow; with it on, requests authenticate
 * with a bearer token (401 otherwise) and RBAC decides (403 otherwise), the
 * default kubeconfig being a `system:masters` admin. Either way the server
 * issues ServiceAccount tokens, answers access reviews, and aggregates
 * ClusterRoles.
 */

export interface AccessOptions {
  readonly rbac: boolean;
  /** The admin's token; with RBAC and none given, the server makes one. */
  readonly token: string | undefined;
}

/**
 * Whom a kubeconfig or token is for: a ServiceAccount `"namespace/name"`
 * (which must exist; its token lasts `expirationSeconds`, default an hour),
 * or a user and its groups.
 */
export type AccessSubject =
  | { readonly serviceAccount: string; readonly expirationSeconds?: number }
  | { readonly user: string; readonly groups?: readonly string[] };

const allRules: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

export class Access implements AccessDecider {
  /** The admin token, when requests need one. */
  readonly token: string | undefined;
  readonly authenticator: Authenticator;
  /** Undefined with RBAC off. */
  readonly authorizer: RbacAuthorizer | undefined;
  private readonly aggregation: ClusterRoleAggregation;

  constructor(
    private readonly cluster: Cluster,
    options: AccessOptions,
  ) {
    this.token = options.token ?? (options.rbac ? randomBytes(24).toString('base64url') : undefined);
    this.authenticator = new Authenticator(cluster, this.token);
    this.aggregation = new ClusterRoleAggregation(cluster);
    if (!options.rbac) return;
    this.authorizer = new RbacAuthorizer(cluster);
    const roles = cluster.registry.lookup(rbacGroup, 'v1', 'clusterroles') as ResourceType;
    const bindings = cluster.registry.lookup(rbacGroup, 'v1', 'clusterrolebindings') as ResourceType;
    for (const role of bootstrapClusterRoles()) cluster.put(roles, role, 'kube-apiserver');
    for (const binding of bootstrapClusterRoleBindings()) cluster.put(bindings, binding, 'kube-apiserver');
  }

  close(): void {
    this.aggregation.close();
  }

  decide(user: UserInfo | undefined, request: RequestAttributes): Decision {
    if (this.authorizer === undefined) return { allowed: true, reason: '' };
    if (user === undefined) return { allowed: false, reason: '' };
    return this.authorizer.authorize(user, request);
  }

  /** Throws the 403 for a request RBAC does not allow. */
  authorize(user: UserInfo | undefined, request: RequestAttributes): void {
    const decision = this.decide(user, request);
    if (!decision.allowed) throw forbiddenRequest(user?.name ?? '', request, decision.reason);
  }

  /**
   * What kube's RBAC storage checks of what `user` stores through `request`: no Role or binding
   * that grants more than she holds (see escalationCheck.ts). None without RBAC, or for
   * `system:masters`, whom kube never checks.
   */
  writeGuard(user: UserInfo | undefined, request: RbacWriteRequest): WriteGuard | undefined {
    const authorizer = this.authorizer;
    if (authorizer === undefined || user === undefined || user.groups.includes(mastersGroup)) return undefined;
    return (type, object, live) => checkRbacWrite(authorizer, user, request, type, object, live);
  }

  /** The user a request acts as, after `Impersonate-*` headers (only RBAC reads them). */
  impersonate(user: UserInfo, headers: ImpersonationHeaders): UserInfo {
    return this.authorizer === undefined ? user : actingUser(this.authorizer, user, headers);
  }

  rulesFor(user: UserInfo | undefined, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    if (this.authorizer === undefined) return { rules: allRules, errors: [] };
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    if (user !== undefined) {
      this.authorizer.visitRulesFor(user, namespace, (_source, rule, error) => {
        if (rule !== undefined) rules.push(rule);
        if (error !== undefined) errors.push(error);
        return true;
      });
    }
    return { rules, errors };
  }

  /** Whether a resource request is one this part answers (reviews, TokenRequest) rather than storage. */
  serves(type: ResourceType, subresource: string | undefined): boolean {
    if (type.group === authorizationGroup && accessReviewResources[type.resource] !== undefined) return subresource === undefined;
    if (type.group === authenticationGroup && authenticationReviewResources[type.resource] !== undefined) return subresource === undefined;
    return type.group === '' && type.resource === 'serviceaccounts' && subresource === 'token';
  }

  /** The body of the 201 answer to a create that `serves` says is this part's. */
  answer(type: ResourceType, namespace: string | undefined, name: string | undefined, body: unknown, requester: UserInfo | undefined): Record<string, unknown> {
    if (type.group === authorizationGroup) return answerReview(this, type.resource, namespace, body, requester);
    if (type.group === authenticationGroup) return answerAuthenticationReview(this.authenticator, type.resource, body, requester);
    return answerTokenRequest(this.cluster, this.authenticator.serviceAccountTokens, namespace ?? '', name ?? '', body);
  }

  /** A token that authenticates as `subject` (a ServiceAccount's must exist). */
  tokenFor(subject: AccessSubject): string {
    if ('user' in subject) return this.authenticator.userToken(subject.user, subject.groups);
    const [namespace, name, ...rest] = subject.serviceAccount.split('/');
    if (rest.length > 0 || namespace === '' || name === undefined || name === '') {
      throw new Error(`serviceAccount must be "namespace/name", got ${JSON.stringify(subject.serviceAccount)}`);
    }
    const type = this.cluster.registry.lookup('', 'v1', 'serviceaccounts') as ResourceType;
    if (this.cluster.find(type, namespace, name) === undefined) {
      throw new Error(`the ServiceAccount ${namespace}/${name} does not exist: create it first (a token is only valid while its ServiceAccount exists)`);
    }
    const tokens = this.authenticator.serviceAccountTokens;
    return issueServiceAccountToken(this.cluster, tokens, namespace, name, undefined, subject.expirationSeconds).token;
  }
}
