/**
 * Errors of the API server, as a value a reconcile can branch on. The server
 * answers a failed request with a `Status` object (`code`, `reason`,
 * `message`, `details`); `KubeApiError` carries it together with what was
 * being done (verb, resource, name), so a log line says both what failed and
 * why. The `is…` helpers read the `reason` first and fall back to the HTTP
 * code only when the reason is not one kube defines, as client-go's
 * `apierrors` do: a 409 can be `Conflict` (stale resourceVersion, field
 * manager conflict) or `AlreadyExists`, and they mean different things.
 */

import type { KubeStatus, StatusDetails } from '../../types.js';

/** What the client was doing when the error came back. */
export interface RequestDescription {
  /** `get`, `create`, `update`, `patch`, `apply`, `delete`, `list`, … */
  verb: string;
  /** The resource (plural), with its group when it has one: `configmaps`, `deployments.apps`. */
  resource: string;
  /** The object's name, when the request named one. */
  name?: string;
  /** The namespace of the request, when it had one. */
  namespace?: string;
  /** The subresource, e.g. `status`. */
  subresource?: string;
}

/** The reasons kube defines (metav1.StatusReason…); a code is read only when the reason is none of these. */
const knownReasons = new Set([
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'AlreadyExists',
  'Conflict',
  'Gone',
  'Invalid',
  'ServerTimeout',
  'StoreReadError',
  'Timeout',
  'TooManyRequests',
  'BadRequest',
  'MethodNotAllowed',
  'NotAcceptable',
  'RequestEntityTooLarge',
  'UnsupportedMediaType',
  'InternalError',
  'Expired',
  'ServiceUnavailable',
]);

function describeTarget(request: RequestDescription): string {
  const resource = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
  if (request.name === undefined) {
    return request.namespace ? `${resource} in namespace "${request.namespace}"` : resource;
  }
  const key = request.namespace ? `${request.namespace}/${request.name}` : request.name;
  return `${resource} "${key}"`;
}

/**
 * Marks every KubeApiError, whichever copy of this module made it: a
 * process can hold two (a module loaded by `import()` beside a graph loaded
 * by `require`, or two rxkube versions in one application's dependencies),
 * and `isNotFound` of one must still know the other's 404. `Symbol.for`
 * so that both copies name the same symbol.
 */
const kubeApiErrorBrand = Symbol.for('rxkube.KubeApiError');

/**
 * An error answered by the API server (or a transport failure on the way to
 * it, with `code` 0 and reason `Unknown`). The message reads
 * `<verb> <resource> "<namespace>/<name>": <server message> (<code> <reason>)`.
 *
 * `instanceof KubeApiError` and the `is…` predicates recognize one made by
 * another copy of rxkube in the same process (see `kubeApiErrorBrand`);
 * `instanceof` a subclass is the ordinary prototype check.
 */
export class KubeApiError extends Error {
  /** True for a KubeApiError of any copy of rxkube (by its brand); for a subclass, the ordinary prototype check. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== KubeApiError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[kubeApiErrorBrand] === true;
  }

  /** `KubeApiError`, or the name of the subclass. */
  override readonly name: string = 'KubeApiError';
  /** The HTTP status code; 0 when no response came back. */
  readonly code: number;
  /** The Status reason, e.g. `NotFound`, `Conflict`; `Unknown` when the server gave none. */
  readonly reason: string;
  /** The server's own message, without the request description. */
  readonly serverMessage: string;
  /** The Status details: the object concerned, field causes of an `Invalid`. */
  readonly details: StatusDetails | undefined;
  /** What the client was doing: verb, resource, namespace and name. */
  readonly request: RequestDescription;
  /** The `Retry-After` the server asked for, in seconds, if any. */
  readonly retryAfterSeconds: number | undefined;
  /** The Status object as the server sent it, when it sent one. */
  readonly status: KubeStatus | undefined;

  constructor(
    request: RequestDescription,
    init: {
      code: number;
      reason?: string;
      message: string;
      details?: StatusDetails;
      retryAfterSeconds?: number;
      status?: KubeStatus;
      cause?: unknown;
    },
  ) {
    const reason = init.reason !== undefined && init.reason !== '' ? init.reason : 'Unknown';
    const codeText = init.code === 0 ? reason : `${init.code} ${reason}`;
    super(`${request.verb} ${describeTarget(request)}: ${init.message} (${codeText})`, { cause: init.cause });
    this.code = init.code;
    this.reason = reason;
    this.serverMessage = init.message;
    this.details = init.details;
    this.request = request;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.status = init.status;
    Object.defineProperty(this, kubeApiErrorBrand, { value: true });
  }
}

function isStatusObject(value: unknown): value is KubeStatus {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'Status';
}

/**
 * Reads a `Retry-After` header as whole seconds (the only form kube sends;
 * client-go reads no other). Anything else is no hint.
 */
export function parseRetryAfter(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  if (!/^\d+$/.test(trimmed)) return undefined;
  return Number(trimmed);
}

/**
 * Builds the error for a response that is not a success: from its `Status`
 * body when there is one, else from the code and the start of the body text.
 */
export function errorFromResponse(
  request: RequestDescription,
  code: number,
  bodyText: string,
  retryAfterHeader?: string,
): KubeApiError {
  let parsed: unknown;
  try {
    parsed = bodyText === '' ? undefined : JSON.parse(bodyText);
  } catch {
    parsed = undefined;
  }
  const headerRetry = parseRetryAfter(retryAfterHeader);
  if (isStatusObject(parsed)) {
    const retryAfterSeconds = headerRetry ?? parsed.details?.retryAfterSeconds;
    return new KubeApiError(request, {
      code,
      reason: parsed.reason,
      message: parsed.message ?? `the server responded with HTTP ${code}`,
      details: parsed.details,
      retryAfterSeconds,
      status: parsed,
    });
  }
  const snippet = bodyText.length > 200 ? `${bodyText.slice(0, 200)}…` : bodyText;
  return new KubeApiError(request, {
    code,
    message:
      snippet === ''
        ? `the server responded with HTTP ${code} and no body`
        : `the server responded with HTTP ${code}: ${snippet}`,
    retryAfterSeconds: headerRetry,
  });
}

function reasonAndCode(err: unknown): { reason: string; code: number } | undefined {
  if (err instanceof KubeApiError) return { reason: err.reason, code: err.code };
  return undefined;
}

function matches(err: unknown, reason: string, code?: number): boolean {
  const rc = reasonAndCode(err);
  if (rc === undefined) return false;
  if (rc.reason === reason) return true;
  return code !== undefined && !knownReasons.has(rc.reason) && rc.code === code;
}

/** The object (or its resource type) does not exist: 404 `NotFound`. */
export function isNotFound(err: unknown): boolean {
  return matches(err, 'NotFound', 404);
}

/**
 * The write lost a race: 409 `Conflict` (a stale resourceVersion, or a
 * server-side apply field conflict). Not `AlreadyExists`, which is also a 409.
 */
export function isConflict(err: unknown): boolean {
  return matches(err, 'Conflict', 409);
}

/** A create found the name taken: 409 `AlreadyExists`. */
export function isAlreadyExists(err: unknown): boolean {
  return matches(err, 'AlreadyExists');
}

/**
 * The resourceVersion asked for is no longer available: HTTP 410, whether
 * its reason is `Gone` or `Expired` (watch history compacted). Both mean the
 * same thing to a client: list again. Use `isResourceExpired` to tell them apart.
 */
export function isGone(err: unknown): boolean {
  const rc = reasonAndCode(err);
  return rc !== undefined && (rc.reason === 'Gone' || rc.reason === 'Expired' || rc.code === 410);
}

/** 410 with reason `Expired`: the watch's resourceVersion is older than the server keeps. */
export function isResourceExpired(err: unknown): boolean {
  return matches(err, 'Expired');
}

/** The server is throttling: 429 `TooManyRequests`. */
export function isTooManyRequests(err: unknown): boolean {
  return matches(err, 'TooManyRequests', 429);
}

/** Not allowed for this user: 403 `Forbidden`. */
export function isForbidden(err: unknown): boolean {
  return matches(err, 'Forbidden', 403);
}

/** The request was understood and refused as invalid (validation, a failed JSON patch `test`): 422 `Invalid`. */
export function isInvalid(err: unknown): boolean {
  return matches(err, 'Invalid', 422);
}

/** Credentials are missing or wrong: 401 `Unauthorized`. */
export function isUnauthorized(err: unknown): boolean {
  return matches(err, 'Unauthorized', 401);
}

/**
 * A write gave up after re-reading and retrying a 409 Conflict the bounded
 * number of times. It is still a `Conflict` (`isConflict` holds), so a
 * reconcile that requeues on conflicts keeps doing so; `cause` is the last
 * conflict the server sent.
 */
export class ConflictRetriesExhaustedError extends KubeApiError {
  /** Always `ConflictRetriesExhaustedError`. */
  override readonly name: string = 'ConflictRetriesExhaustedError';

  constructor(
    request: RequestDescription,
    readonly attempts: number,
    last: KubeApiError,
  ) {
    super(request, {
      code: last.code,
      reason: last.reason,
      message:
        `gave up after ${attempts} attempts, each re-reading the object after a 409 Conflict; ` +
        `last conflict: ${last.serverMessage}`,
      details: last.details,
      status: last.status,
      cause: last,
    });
  }
}
