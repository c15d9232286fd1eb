import { badRequest } from '../api/statusError.js';
import type { Authenticator } from './authenticator.js';
import { authenticationGroup, authenticationReviewResources } from './rbacResources.js';
import { apiAudience } from './serviceAccountTokens.js';
import type { UserInfo } from './user.js';

/**
 * The authentication.k8s.io/v1 reviews, answered and never stored:
 * SelfSubjectReview (who am I? `kubectl auth whoami`) and TokenReview
 * (whom does this token name? what an authenticating proxy or webhook asks),
 * for the tokens this server takes.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function userInfo(user: UserInfo): Json {
  return { username: user.name, ...(user.uid !== undefined ? { uid: user.uid } : {}), groups: [...user.groups] };
}

export function answerAuthenticationReview(authenticator: Authenticator, resource: string, body: unknown, requester: UserInfo | undefined): Json {
  const kind = authenticationReviewResources[resource] as string;
  if (!isObject(body)) throw badRequest(`the body of a ${kind} must be a JSON object`);
  if (body.kind !== undefined && body.kind !== kind) throw badRequest(`the object provided is a ${String(body.kind)}, not a ${kind} (sent to ${resource})`);
  const head = { kind, apiVersion: `${authenticationGroup}/v1`, metadata: { ...(isObject(body.metadata) ? body.metadata : {}), creationTimestamp: null } };
  if (resource === 'selfsubjectreviews') return { ...head, status: requester === undefined ? {} : { userInfo: userInfo(requester) } };
  const spec = isObject(body.spec) ? body.spec : {};
  const token = typeof spec.token === 'string' ? spec.token : '';
  const audiences = Array.isArray(spec.audiences) ? spec.audiences.filter((a): a is string => typeof a === 'string') : [];
  const user = token === '' ? undefined : authenticator.authenticate(`Bearer ${token}`);
  // This server takes only tokens for its own audience: a review for others finds none valid.
  const valid = user !== undefined && (audiences.length === 0 || audiences.includes(apiAudience));
  return { ...head, spec, status: valid ? { authenticated: true, user: userInfo(user), audiences: [apiAudience] } : { user: {} } };
}
