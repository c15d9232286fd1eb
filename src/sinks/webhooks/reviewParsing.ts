import { nestsDeeperThan } from '../../util/jsonDepth.js';
import type { AdmissionRequest, ConversionRequest } from './reviewTypes.js';

/**
 * Reading the body of a review. Anything that is not the review kube-apiserver
 * sends (not JSON, another kind or version, no request, no `request.uid`) is
 * a `MalformedReviewError`, which the server answers with HTTP 400 and the
 * message, since there is no request to answer with `allowed: false`.
 * So is a body nested more than 1000 levels deep, whatever its shape,
 * before anything recursive (a handler's copy, a message) reads it.
 */
export class MalformedReviewError extends Error {
  /** Always `MalformedReviewError`, to tell this error apart without `instanceof`. */
  override readonly name = 'MalformedReviewError';
}

/**
 * How deep a review may nest. Kube's decoder (and controller-runtime's) stops
 * at 10,000 levels; the handlers' copies and patches here are recursive, so
 * the limit is the embedded API server's, far beyond any real object.
 */
export const maxReviewDepth = 1000;

function excerpt(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** What a body that is not an object is, for the message: an array, or the scalar's JSON (short). */
function shapeOf(body: unknown): string {
  return Array.isArray(body) ? `an array of ${body.length}` : JSON.stringify(excerpt(JSON.stringify(body)));
}

function parseReview(text: string, apiVersion: string, kind: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new MalformedReviewError(`the body is not JSON (${(error as Error).message}): ${JSON.stringify(excerpt(text))}`);
  }
  if (nestsDeeperThan(body, maxReviewDepth)) throw new MalformedReviewError(`the body nests arrays and objects more than ${maxReviewDepth} levels deep`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new MalformedReviewError(`expected a ${apiVersion} ${kind} object, got ${shapeOf(body)}`);
  }
  const review = body as Record<string, unknown>;
  if (review.apiVersion !== apiVersion || review.kind !== kind) {
    throw new MalformedReviewError(`expected a ${apiVersion} ${kind}, got apiVersion ${JSON.stringify(review.apiVersion)} kind ${JSON.stringify(review.kind)}`);
  }
  const request = review.request;
  if (typeof request !== 'object' || request === null || Array.isArray(request)) throw new MalformedReviewError(`the ${kind} has no request`);
  const uid = (request as { uid?: unknown }).uid;
  if (typeof uid !== 'string' || uid === '') throw new MalformedReviewError(`the ${kind} has no request.uid`);
  return request as Record<string, unknown>;
}

export function parseAdmissionReview(text: string): AdmissionRequest {
  const request = parseReview(text, 'admission.k8s.io/v1', 'AdmissionReview');
  if (typeof request.operation !== 'string') throw new MalformedReviewError('the AdmissionReview has no request.operation');
  return request as unknown as AdmissionRequest;
}

export function parseConversionReview(text: string): ConversionRequest {
  const request = parseReview(text, 'apiextensions.k8s.io/v1', 'ConversionReview');
  if (typeof request.desiredAPIVersion !== 'string' || request.desiredAPIVersion === '') {
    throw new MalformedReviewError('the ConversionReview has no request.desiredAPIVersion');
  }
  if (!Array.isArray(request.objects)) throw new MalformedReviewError('the ConversionReview has no request.objects list');
  return request as unknown as ConversionRequest;
}

/** The deadline kube-apiserver puts on a webhook's URL (`?timeout=10s`), in ms; undefined when absent or unreadable. */
export function reviewTimeout(query: URLSearchParams): number | undefined {
  const text = query.get('timeout');
  if (text === null) return undefined;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text);
  if (match === null) return undefined;
  const value = Number(match[1]);
  return match[2] === 'ms' ? value : match[2] === 's' ? value * 1000 : value * 60_000;
}
