import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The tokens this server issues to ServiceAccounts (TokenRequest, the
 * per-ServiceAccount kubeconfigs): JWTs with kube's claims (`iss`, `sub`,
 * `aud`, `exp`, `iat`, `nbf`, `jti` and `kubernetes.io.namespace` /
 * `serviceaccount.{name,uid}`), so code that decodes its token sees what it
 * would see in a cluster. They are signed with HS256 under a key each server
 * makes at start (kube signs with RS256 keys it publishes; nothing outside
 * this server verifies these), so they are worthless once it stops.
 */

/** The issuer and the API audience, as a kind cluster names them. */
export const apiAudience = 'https://kubernetes.default.svc.cluster.local';

export interface ServiceAccountRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** What a valid token says. */
export interface ServiceAccountClaims extends ServiceAccountRef {
  readonly audiences: readonly string[];
  /** Seconds since the epoch. */
  readonly expiresAt: number;
}

interface Payload {
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  iss: string;
  jti: string;
  sub: string;
  'kubernetes.io': { namespace: string; serviceaccount: { name: string; uid: string } };
}

function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function isPayload(value: unknown): value is Payload {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Partial<Payload>;
  const k = p['kubernetes.io'];
  return (
    Array.isArray(p.aud) &&
    typeof p.exp === 'number' &&
    typeof p.nbf === 'number' &&
    p.iss === apiAudience &&
    typeof k?.namespace === 'string' &&
    typeof k.serviceaccount?.name === 'string' &&
    typeof k.serviceaccount.uid === 'string'
  );
}

export class ServiceAccountTokens {
  private readonly key = randomBytes(32);
  private readonly keyId = randomBytes(8).toString('hex');
  private readonly header = base64url(JSON.stringify({ alg: 'HS256', kid: this.keyId }));

  private sign(text: string): Buffer {
    return createHmac('sha256', this.key).update(text).digest();
  }

  /** A token for `account`, valid for `expirationSeconds` from `nowMs`. */
  issue(account: ServiceAccountRef, audiences: readonly string[], expirationSeconds: number, nowMs: number): { token: string; expiresAt: number } {
    const iat = Math.floor(nowMs / 1000);
    const payload: Payload = {
      aud: [...audiences],
      exp: iat + expirationSeconds,
      iat,
      nbf: iat,
      iss: apiAudience,
      jti: randomBytes(16).toString('hex'),
      sub: `system:serviceaccount:${account.namespace}:${account.name}`,
      'kubernetes.io': { namespace: account.namespace, serviceaccount: { name: account.name, uid: account.uid } },
    };
    const unsigned = `${this.header}.${base64url(JSON.stringify(payload))}`;
    return { token: `${unsigned}.${base64url(this.sign(unsigned))}`, expiresAt: payload.exp };
  }

  /** The claims of a token this server signed that is valid at `nowMs` for the API audience; undefined for any other string. */
  verify(token: string, nowMs: number): ServiceAccountClaims | undefined {
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== this.header) return undefined;
    const expected = this.sign(`${parts[0]}.${parts[1]}`);
    const given = Buffer.from(parts[2], 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    if (!isPayload(payload)) return undefined;
    const now = nowMs / 1000;
    if (now >= payload.exp || now < payload.nbf || !payload.aud.includes(apiAudience)) return undefined;
    const k = payload['kubernetes.io'];
    return { namespace: k.namespace, name: k.serviceaccount.name, uid: k.serviceaccount.uid, audiences: payload.aud, expiresAt: payload.exp };
  }
}
