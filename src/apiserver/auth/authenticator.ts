import { randomBytes } from 'node:crypto';
import { joinKey } from '../../types.js';
import type { Cluster } from '../cluster.js';
import { ServiceAccountTokens } from './serviceAccountTokens.js';
import { adminUser, authenticatedGroup, serviceAccountUser, type UserInfo } from './user.js';

/**
 * Bearer-token authentication, as kube-apiserver's token authenticators
 * chain: the admin token of the server's default kubeconfig (a
 * `system:masters` user), tokens handed out for named users (kube's static
 * token file), and the ServiceAccount tokens this server signs, which are
 * valid only while their ServiceAccount exists with the uid they name (a
 * deleted and re-created account does not inherit old tokens).
 */
export class Authenticator {
  readonly serviceAccountTokens = new ServiceAccountTokens();
  private readonly userTokens = new Map<string, UserInfo>();

  constructor(
    private readonly cluster: Cluster,
    /** Undefined: no token is the admin's. */
    readonly adminToken: string | undefined,
  ) {}

  /** A new token that authenticates as `name` in `groups` (and `system:authenticated`). */
  userToken(name: string, groups: readonly string[] = []): string {
    const token = randomBytes(24).toString('base64url');
    this.userTokens.set(token, { name, groups: [...new Set([...groups, authenticatedGroup])] });
    return token;
  }

  /** The user of an `Authorization` header, or undefined when it carries no token this server knows. */
  authenticate(authorization: string | undefined): UserInfo | undefined {
    if (authorization === undefined) return undefined;
    const match = /^bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match === null) return undefined;
    const token = match[1];
    if (this.adminToken !== undefined && token === this.adminToken) return adminUser;
    const user = this.userTokens.get(token);
    if (user !== undefined) return user;
    const claims = this.serviceAccountTokens.verify(token, this.cluster.now());
    if (claims === undefined) return undefined;
    const type = this.cluster.registry.lookup('', 'v1', 'serviceaccounts');
    const account = type === undefined ? undefined : this.cluster.store.get(type.storageKey, joinKey(claims.namespace, claims.name));
    const meta = account?.object.metadata;
    if (meta === undefined || meta.uid !== claims.uid || meta.deletionTimestamp !== undefined) return undefined;
    return serviceAccountUser(claims.namespace, claims.name, claims.uid);
  }
}
