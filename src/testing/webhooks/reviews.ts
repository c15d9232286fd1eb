import type { Operation } from 'fast-json-patch';
import { randomUUID } from 'node:crypto';
import { applyJsonPatch } from '../../apiserver/writes/jsonPatch.js';
import type { JsonValue } from '../../apiserver/writes/jsonValue.js';
import type { KubeObject } from '../../types.js';
import { cloneJson, jsonEqual } from '../../util/json.js';
import type { AdmissionWebhook } from '../../sinks/webhooks/admission.js';
import type { ConversionWebhook } from '../../sinks/webhooks/conversion.js';
import type { AdmissionOperation, AdmissionRequest, AdmissionResponse, AdmissionReview, ConversionResponse, ConversionReview } from '../../sinks/webhooks/reviewTypes.js';

/**
 * Unit tests of webhook handlers without a server: build the review
 * kube-apiserver would send for an object and an operation, call the
 * handler as the server does, and check the answer, with the patch of a
 * mutating handler decoded and applied.
 */

export interface AdmissionReviewOptions {
  /** The live object, for UPDATE and DELETE. */
  oldObject?: KubeObject;
  /** Default: the kind in lower case with an `s`, as most kinds are named. */
  resource?: string;
  /** The subresource written, such as `status`; absent for the main resource. */
  subResource?: string;
  /** Marks the request as not to be persisted (default false). */
  dryRun?: boolean;
  /** The review's uid (default: a random UUID). */
  uid?: string;
  /** Who sent the request (default `system:admin` in `system:masters`). */
  userInfo?: AdmissionRequest['userInfo'];
}

function groupVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** The `AdmissionReview` the API server sends for `operation` on `object` (for DELETE, `object` is the live one). */
export function admissionReview(operation: AdmissionOperation, object: KubeObject, options: AdmissionReviewOptions = {}): AdmissionReview {
  if (typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') throw new Error('admissionReview: the object needs apiVersion and kind');
  const { group, version } = groupVersion(object.apiVersion);
  const kind = { group, version, kind: object.kind };
  const resource = { group, version, resource: options.resource ?? `${object.kind.toLowerCase()}s` };
  const isDelete = operation === 'DELETE';
  const request: AdmissionRequest = {
    uid: options.uid ?? randomUUID(),
    kind,
    resource,
    requestKind: kind,
    requestResource: resource,
    ...(options.subResource !== undefined ? { subResource: options.subResource, requestSubResource: options.subResource } : {}),
    ...(object.metadata.name !== undefined ? { name: object.metadata.name } : {}),
    ...(object.metadata.namespace !== undefined ? { namespace: object.metadata.namespace } : {}),
    operation,
    userInfo: options.userInfo ?? { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] },
    object: isDelete ? null : cloneJson(object),
    oldObject: isDelete ? cloneJson(object) : options.oldObject !== undefined ? cloneJson(options.oldObject) : null,
    dryRun: options.dryRun ?? false,
  };
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
}

/** What a handler answered, with its patch decoded and applied to the request's object. */
export interface AdmissionResult {
  /** The response as the handler returned it. */
  response: AdmissionResponse;
  /** The RFC 6902 operations of the patch ([] without one). */
  patch: Operation[];
  /** The request's object with the patch applied (the object itself without a patch). */
  patched: KubeObject | null;
}

/** Calls an admission handler as the webhook server does. A handler that throws rejects, naming the error. */
export async function callAdmission(webhook: AdmissionWebhook, review: AdmissionReview, signal: AbortSignal = new AbortController().signal): Promise<AdmissionResult> {
  const request = review.request;
  if (request === undefined) throw new Error('callAdmission: the review has no request');
  const response = await webhook.admit(cloneJson(request), signal);
  const patch = response.patch === undefined ? [] : (JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as Operation[]);
  const object = request.object ?? null;
  // Applied as kube-apiserver applies it, a member named `__proto__` included.
  const patched = object === null || patch.length === 0 ? object : (applyJsonPatch(object as unknown as JsonValue, patch) as unknown as KubeObject);
  return { response, patch, patched };
}

/** What a test expects of an admission answer; each field given is checked. */
export interface AdmissionExpectation {
  /** Whether the request is to be allowed. */
  allowed?: boolean;
  /** The denial's HTTP status code (`status.code`). */
  code?: number;
  /** A substring of the denial's message. */
  message?: string;
  /** The exact warnings, in order; a response without any matches `[]`. */
  warnings?: string[];
  /** The object after the patch. */
  patched?: KubeObject;
}

/** Throws an error saying what differs when `result` does not meet `expected`. */
export function expectAdmission(result: AdmissionResult, expected: AdmissionExpectation): void {
  const { response } = result;
  const faults: string[] = [];
  if (expected.allowed !== undefined && response.allowed !== expected.allowed) faults.push(`allowed is ${response.allowed}, expected ${expected.allowed} (${response.status?.message ?? 'no message'})`);
  if (expected.code !== undefined && response.status?.code !== expected.code) faults.push(`status.code is ${response.status?.code}, expected ${expected.code}`);
  if (expected.message !== undefined && !(response.status?.message ?? '').includes(expected.message)) {
    faults.push(`status.message is ${JSON.stringify(response.status?.message)}, expected it to contain ${JSON.stringify(expected.message)}`);
  }
  if (expected.warnings !== undefined && !jsonEqual(response.warnings ?? [], expected.warnings)) faults.push(`warnings are ${JSON.stringify(response.warnings ?? [])}, expected ${JSON.stringify(expected.warnings)}`);
  if (expected.patched !== undefined && !jsonEqual(result.patched, expected.patched)) {
    faults.push(`the patched object is ${JSON.stringify(result.patched)}, expected ${JSON.stringify(expected.patched)} (patch ${JSON.stringify(result.patch)})`);
  }
  if (faults.length > 0) throw new Error(`admission answer: ${faults.join('; ')}`);
}

/** The `ConversionReview` the API server sends to convert `objects` to `desiredAPIVersion`. */
export function conversionReview(desiredAPIVersion: string, objects: readonly KubeObject[], uid: string = randomUUID()): ConversionReview {
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid, desiredAPIVersion, objects: objects.map((o) => cloneJson(o)) } };
}

/** Calls a conversion handler as the webhook server does. */
export async function callConversion(webhook: ConversionWebhook, review: ConversionReview, signal: AbortSignal = new AbortController().signal): Promise<ConversionResponse> {
  if (review.request === undefined) throw new Error('callConversion: the review has no request');
  return webhook.convert(cloneJson(review.request), signal);
}
