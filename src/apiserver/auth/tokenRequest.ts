import { badRequest, invalid, notFound } from '../api/statusError.js';
import type { Cluster } from '../cluster.js';
import type { ResourceType } from '../api/resourceType.js';
import { kubeTime } from '../../util/time.js';
import { apiAudience, type ServiceAccountTokens } from './serviceAccountTokens.js';

/**
 * TokenRequest, the `token` subresource of ServiceAccounts (what
 * `kubectl create token` sends): a token for an existing ServiceAccount,
 * for `spec.audiences` (default: this API server), valid for
 * `spec.expirationSeconds` (default an hour, at least ten minutes, as kube
 * validates). `boundObjectRef` is not supported: such tokens are not bound
 * to a Pod or Secret here.
 */

const defaultExpirationSeconds = 3600;
const minExpirationSeconds = 600;
const maxExpirationSeconds = 2 ** 32;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface IssuedToken {
  readonly token: string;
  /** Seconds since the epoch. */
  readonly expiresAt: number;
}

/** A token for the ServiceAccount `namespace/name`; 404 when it does not exist. */
export function issueServiceAccountToken(
  cluster: Cluster,
  tokens: ServiceAccountTokens,
  namespace: string,
  name: string,
  audiences: readonly string[] = [apiAudience],
  expirationSeconds = defaultExpirationSeconds,
): IssuedToken {
  const type = cluster.registry.lookup('', 'v1', 'serviceaccounts') as ResourceType;
  const account = cluster.find(type, namespace, name);
  if (account === undefined) throw notFound({ group: '', resource: 'serviceaccounts' }, name);
  return tokens.issue({ namespace, name, uid: account.object.metadata.uid as string }, audiences, expirationSeconds, cluster.now());
}

export function answerTokenRequest(cluster: Cluster, tokens: ServiceAccountTokens, namespace: string, name: string, body: unknown): Json {
  if (!isObject(body)) throw badRequest('the body of a TokenRequest must be a JSON object');
  if (body.kind !== undefined && body.kind !== 'TokenRequest') throw badRequest(`the object provided is a ${String(body.kind)}, not a TokenRequest`);
  const spec = isObject(body.spec) ? body.spec : {};
  const seconds = spec.expirationSeconds ?? defaultExpirationSeconds;
  const fieldError = (detail: string): never => {
    throw invalid({ group: 'authentication.k8s.io', kind: 'TokenRequest' }, name, [{ field: 'spec.expirationSeconds', type: 'Invalid value', value: seconds, detail }]);
  };
  if (typeof seconds !== 'number' || !Number.isInteger(seconds)) fieldError('must be an integer number of seconds');
  if ((seconds as number) < minExpirationSeconds) fieldError('may not specify a duration less than 10 minutes');
  if ((seconds as number) > maxExpirationSeconds) fieldError('may not specify a duration larger than 2^32 seconds');
  const given = Array.isArray(spec.audiences) ? spec.audiences.filter((a): a is string => typeof a === 'string') : [];
  const audiences = given.length > 0 ? given : [apiAudience];
  const issued = issueServiceAccountToken(cluster, tokens, namespace, name, audiences, seconds as number);
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name, namespace, creationTimestamp: null },
    spec: { audiences, expirationSeconds: seconds, boundObjectRef: null },
    status: { token: issued.token, expirationTimestamp: kubeTime(issued.expiresAt * 1000) },
  };
}
