/**
 * Errors as kube-apiserver reports them: a `Status` body whose `reason`,
 * `code` and message wording match what clients (client-go's `errors.Is*`,
 * kubectl's messages, client-node's `ApiException`) key on.
 */

// The same Status shapes the client side reads: one declaration (src/types.ts) for both ends.
import type { StatusCause, StatusDetails } from '../../types.js';

export type { StatusCause, StatusDetails };

/** The body kube sends for a failed request (and some successful deletes): a `meta/v1` Status. */
export interface Status {
  /** Always `Status`. */
  kind: 'Status';
  /** Always `v1`. */
  apiVersion: 'v1';
  /** `continue` for a list whose paging token expired, so the client can start again; otherwise empty. */
  metadata: { continue?: string; resourceVersion?: string };
  /** `Failure` for every error. */
  status: 'Success' | 'Failure';
  /** What went wrong, in kube's words. */
  message?: string;
  /** The machine-readable cause: `NotFound`, `Conflict`, `Invalid`, `Expired`, ... */
  reason?: string;
  /** The object concerned, field causes of an `Invalid`, `retryAfterSeconds` of a 429. */
  details?: StatusDetails;
  /** The HTTP status code. */
  code: number;
}

/** A group and a resource (plural), the way kube names a resource in messages: `deployments.apps`. */
export interface GroupResource {
  group: string;
  resource: string;
}

/** A group and a kind, as `Invalid` errors name the object: `Deployment.apps`. */
export interface GroupKindRef {
  group: string;
  /** The kind (`Deployment`). */
  kind: string;
}

export function qualifiedResource(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

/** An error that becomes a `Status` response. */
export class ApiError extends Error {
  /** Always `ApiError`. */
  override readonly name = 'ApiError';
  constructor(
    /** The HTTP status code. */
    readonly code: number,
    /** The Status reason (`NotFound`, `Conflict`, ...). */
    readonly reason: string,
    message: string,
    /** The Status details: the object concerned, field causes, `retryAfterSeconds`. */
    readonly details?: StatusDetails,
    /** Extra response headers (`Retry-After`). */
    readonly headers: Readonly<Record<string, string>> = {},
    /** For an expired list continue token: the token to start again with, sent as `metadata.continue`. */
    readonly listContinue?: string,
  ) {
    super(message);
  }

  /** The Status body the server answers with. */
  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.listContinue === undefined ? {} : { continue: this.listContinue },
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details === undefined ? {} : { details: this.details }),
      code: this.code,
    };
    return status;
  }
}

function resourceDetails(gr: GroupResource, name: string): StatusDetails {
  const details: StatusDetails = {};
  if (name !== '') details.name = name;
  if (gr.group !== '') details.group = gr.group;
  details.kind = gr.resource;
  return details;
}

export function notFound(gr: GroupResource, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, resourceDetails(gr, name));
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, resourceDetails(gr, name));
}

export const staleObjectMessage = 'the object has been modified; please apply your changes to the latest version and try again';

export function conflict(gr: GroupResource, name: string, why: string = staleObjectMessage): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`,
    resourceDetails(gr, name),
  );
}

export function forbidden(gr: GroupResource, name: string, why: string): ApiError {
  const subject = name === '' ? qualifiedResource(gr) : `${qualifiedResource(gr)} "${name}"`;
  return new ApiError(403, 'Forbidden', `${subject} is forbidden: ${why}`, resourceDetails(gr, name));
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

/** One field error of an `Invalid` (422) response. */
export interface FieldError {
  field: string;
  type: 'Required value' | 'Invalid value' | 'Forbidden' | 'Unsupported value' | 'Duplicate value' | 'Too long' | 'Too many';
  detail: string;
  /** For `Invalid value`: the value that was rejected, shown JSON-encoded as kube does. */
  value?: unknown;
  /** The value as kube prints it (Go's `%q`, `%v` or `%#v`), shown after the type instead of `value`. */
  shown?: string;
  /** The cause's reason when it is not the type's usual one (`FieldValueTypeInvalid`). */
  reason?: string;
}

const causeReasons: Record<FieldError['type'], string> = {
  'Required value': 'FieldValueRequired',
  'Invalid value': 'FieldValueInvalid',
  Forbidden: 'FieldValueForbidden',
  'Unsupported value': 'FieldValueNotSupported',
  'Duplicate value': 'FieldValueDuplicate',
  'Too long': 'FieldValueTooLong',
  'Too many': 'FieldValueTooMany',
};

function fieldErrorText(error: FieldError): string {
  const shown =
    error.shown !== undefined ? `${error.type}: ${error.shown}` : error.type === 'Invalid value' ? `${error.type}: ${JSON.stringify(error.value ?? null)}` : error.type;
  return error.detail === '' ? shown : `${shown}: ${error.detail}`;
}

export function invalid(gk: GroupKindRef, name: string, errors: readonly FieldError[]): ApiError {
  const qualified = gk.group === '' ? gk.kind : `${gk.kind}.${gk.group}`;
  const parts = errors.map((e) => `${e.field}: ${fieldErrorText(e)}`);
  const list = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  const details: StatusDetails = { name, kind: gk.kind };
  if (gk.group !== '') details.group = gk.group;
  details.causes = errors.map((e) => ({ reason: e.reason ?? causeReasons[e.type], message: fieldErrorText(e), field: e.field }));
  return new ApiError(422, 'Invalid', `${qualified} "${name}" is invalid: ${list}`, details);
}

export function unsupportedMediaType(contentType: string, accepted: readonly string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format (${contentType || 'no Content-Type'}) - accepted media types include: ${accepted.join(', ')}`,
  );
}

export function methodNotAllowed(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
}

export function routeNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function expired(message: string, listContinue?: string): ApiError {
  return new ApiError(410, 'Expired', message, undefined, {}, listContinue);
}

export function tooOldResourceVersion(requested: number, oldest: number): ApiError {
  return expired(`too old resource version: ${requested} (${oldest})`);
}

export function tooLargeResourceVersion(requested: number, current: number): ApiError {
  return new ApiError(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

export function requestEntityTooLarge(limit: number): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
}

const defaultReasons: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

const defaultMessages: Record<number, string> = {
  429: 'Too many requests, please try again later.',
  500: 'Internal error occurred: injected fault',
  503: 'the server is currently unable to handle the request',
  504: 'the server was unable to return a response in the time allotted, but may still be processing the request',
};

/** An error of any code, with the reason and wording kube uses for that code unless given. */
export function statusFor(
  code: number,
  /** The Status reason; default kube's for the code. */
  options: { reason?: string; message?: string; retryAfterSeconds?: number; details?: StatusDetails } = {},
): ApiError {
  const reason = options.reason ?? defaultReasons[code] ?? 'Unknown';
  const message = options.message ?? defaultMessages[code] ?? `injected ${code} ${reason}`;
  const headers: Record<string, string> = {};
  let details = options.details;
  const retryAfter = options.retryAfterSeconds ?? (code === 429 ? 1 : undefined);
  if (retryAfter !== undefined) {
    headers['Retry-After'] = String(retryAfter);
    details = { ...details, retryAfterSeconds: retryAfter };
  }
  return new ApiError(code, reason, message, details, headers);
}
