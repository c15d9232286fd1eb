import { isSpanContextValid, TraceFlags, type SpanContext } from '@opentelemetry/api';

/**
 * The annotation a traced write carries its run's trace context in, in the
 * W3C Trace Context `traceparent` format (`00-<trace id>-<span id>-<flags>`),
 * when the controller's `tracing.annotate` is on. A reconcile triggered by
 * an object that carries it links to that run: one user's `kubectl apply`
 * can be followed through every controller it sets off.
 */
export const TRACEPARENT_ANNOTATION = 'rxkube.io/traceparent';

/** `context` as a W3C `traceparent` header value (version 00). */
export function formatTraceparent(context: SpanContext): string {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  return `00-${context.traceId}-${context.spanId}-${flags}`;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The span context a `traceparent` value names, marked remote; undefined
 * for anything else (not a string, a bad shape, version `ff`, an all-zero
 * trace or span id, or a version-00 value with more after the flags), as the
 * W3C Trace Context's parsing rules say. Newer versions are read by their
 * first four fields, as the specification asks.
 */
export function parseTraceparent(value: unknown): SpanContext | undefined {
  if (typeof value !== 'string' || value.length > 512) return undefined;
  const match = TRACEPARENT.exec(value.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const context: SpanContext = { traceId, spanId, traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED, isRemote: true };
  return isSpanContextValid(context) ? context : undefined;
}

/** The trace context `object` carries in `rxkube.io/traceparent` (the write that made or last changed it, when traced), if any. */
export function traceContextOf(object: { metadata?: { annotations?: Readonly<Record<string, string>> } } | undefined): SpanContext | undefined {
  const annotations = object?.metadata?.annotations;
  return annotations === undefined || !Object.hasOwn(annotations, TRACEPARENT_ANNOTATION) ? undefined : parseTraceparent(annotations[TRACEPARENT_ANNOTATION]);
}
