import jsonPatch from 'fast-json-patch';
import type { KubeObject } from '../../types.js';
import { cloneJson } from '../../util/json.js';
import type { AdmissionRequest, AdmissionResponse } from './reviewTypes.js';

/**
 * Admission handlers: a validating one says allowed or denied, a mutating
 * one returns the object it wants stored and rxkube sends the difference as
 * an RFC 6902 patch (as controller-runtime's `PatchResponseFromRaw` does).
 * Either may be async; each gets an `AbortSignal` that fires when the
 * review's deadline passes (the `timeout` the API server puts on the URL).
 * A handler that throws or rejects answers `allowed: false` with code 500
 * and its message, as kube-apiserver expects from a failing webhook.
 */

/** What a validating handler decides. Build one with `allow()` or `deny()`. */
export type AdmissionVerdict =
  | { allowed: true; warnings?: string[] }
  | { allowed: false; message: string; code?: number; reason?: string; warnings?: string[] };

/** Decides whether one request may proceed; `signal` aborts when the review's deadline passes. */
export type ValidateHandler<T extends KubeObject = KubeObject> = (
  request: AdmissionRequest<T>,
  signal: AbortSignal,
) => AdmissionVerdict | Promise<AdmissionVerdict>;

/**
 * Gets a mutable copy of the object to be stored; returns the object to
 * store instead (or nothing, having changed the copy in place), or a
 * `deny()` to refuse the request.
 */
export type MutateHandler<T extends KubeObject = KubeObject> = (
  object: T,
  request: AdmissionRequest<T>,
  signal: AbortSignal,
) => T | void | AdmissionVerdict | Promise<T | void | AdmissionVerdict>;

/** One admission endpoint of the webhook server. */
export interface AdmissionWebhook {
  /** Which webhook configuration the endpoint belongs in: a ValidatingWebhookConfiguration or a MutatingWebhookConfiguration. */
  readonly type: 'validating' | 'mutating';
  /** The response to one request; a throw means the handler failed (the server answers code 500). */
  admit(request: AdmissionRequest, signal: AbortSignal): Promise<AdmissionResponse>;
}

/** Lets the request through, with optional warnings for the client. */
export function allow(warnings?: string[]): AdmissionVerdict {
  return warnings === undefined || warnings.length === 0 ? { allowed: true } : { allowed: true, warnings };
}

/** Refuses the request: kube-apiserver shows `admission webhook "name" denied the request: message`. */
export function deny(message: string, options: { code?: number; reason?: string; warnings?: string[] } = {}): AdmissionVerdict {
  return { allowed: false, message, ...options };
}

function isVerdict(value: unknown): value is AdmissionVerdict {
  return typeof value === 'object' && value !== null && typeof (value as { allowed?: unknown }).allowed === 'boolean' && !('metadata' in value);
}

function fromVerdict(uid: string, verdict: AdmissionVerdict): AdmissionResponse {
  const warnings = verdict.warnings !== undefined && verdict.warnings.length > 0 ? { warnings: [...verdict.warnings] } : {};
  if (verdict.allowed) return { uid, allowed: true, ...warnings };
  const code = verdict.code ?? 403;
  const status = { code, message: verdict.message, status: 'Failure' as const, ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}) };
  return { uid, allowed: false, status, ...warnings };
}

/** An endpoint that allows or denies. */
export function validatingWebhook<T extends KubeObject = KubeObject>(validate: ValidateHandler<T>): AdmissionWebhook {
  return {
    type: 'validating',
    async admit(request, signal) {
      const verdict: unknown = await validate(request as AdmissionRequest<T>, signal);
      if (!isVerdict(verdict)) {
        throw new Error(`the validating handler returned ${JSON.stringify(verdict) ?? String(verdict)}, not allow() or deny()`);
      }
      return fromVerdict(request.uid, verdict);
    },
  };
}

/** The response that turns `original` into `mutated`: a base64 JSON patch, or none when they are equal. */
export function patchResponse(uid: string, original: unknown, mutated: unknown): AdmissionResponse {
  const operations = jsonPatch.compare(original as object, mutated as object);
  if (operations.length === 0) return { uid, allowed: true };
  return { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(operations)).toString('base64') };
}

/**
 * An endpoint that changes the object. A request without an object (a
 * DELETE) is allowed unchanged without calling the handler: there is
 * nothing a patch could change.
 */
export function mutatingWebhook<T extends KubeObject = KubeObject>(mutate: MutateHandler<T>): AdmissionWebhook {
  return {
    type: 'mutating',
    async admit(request, signal) {
      const original = request.object;
      if (original === undefined || original === null) return { uid: request.uid, allowed: true };
      const draft = cloneJson(original) as T;
      const result = await mutate(draft, request as AdmissionRequest<T>, signal);
      if (isVerdict(result)) {
        if (!result.allowed) return fromVerdict(request.uid, result);
        return { ...patchResponse(request.uid, original, draft), ...(result.warnings !== undefined ? { warnings: result.warnings } : {}) };
      }
      const mutated = result ?? draft;
      if (typeof mutated !== 'object' || mutated === null || Array.isArray(mutated)) {
        throw new Error(`the mutating handler returned ${JSON.stringify(mutated)}, not an object`);
      }
      return patchResponse(request.uid, original, mutated);
    },
  };
}
