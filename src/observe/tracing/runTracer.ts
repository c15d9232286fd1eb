import { INVALID_SPAN_CONTEXT, SpanKind, SpanStatusCode, type Attributes, type Link, type Span, type SpanContext, type Tracer } from '@opentelemetry/api';
import type { Lister } from '../../store/store.js';
import type { EventEntry, InformerEntry, RunEndEntry, TimelineEntry, TriggerCause, TriggerEntry } from '../timeline.js';
import { splitKey, type KubeObject, type ObjectKey } from '../../types.js';
import { traceContextOf } from './traceparent.js';

/** What the timeline's hub tells a tracer of directly: a run starts (its span must exist before the run's entry, which carries its trace ID). */
export interface RunSpans {
  /** A run of `key` starts at `at` (attempt from 1) after `queuedMs` in the queue; returns its trace ID. */
  runStart(key: ObjectKey, at: number, attempt: number, queuedMs: number): string | undefined;
}

/** What the tracer keeps of one key between its trigger and its going idle. */
interface KeyTrace {
  /** The causes of its next run, as links (at most `MAX_LINKS`). */
  links: Link[];
  /** Triggers since its last run started, linked or not. */
  triggers: number;
  /** The span of its run under way. */
  span: Span | undefined;
  /** The span of its last run, when that failed or asked to be requeued: the next run is its retry. */
  previous: { context: SpanContext; via: 'retry' | 'requeue' } | undefined;
}

/** Links kept per run: a run that coalesced more triggers links the first ones and counts them all. */
const MAX_LINKS = 32;

/**
 * Turns a controller's timeline into OpenTelemetry spans (docs/tracing.md):
 * one span per run, `reconcile <controller>`, with the key, namespace,
 * name, attempt, result, requeue delay, error and queue wait as attributes;
 * linked to each trigger it coalesced (the informer event's type and
 * resourceVersion, the owned or watched object mapped to it, the resync or
 * the external trigger, as link attributes; the link's span context is the
 * run that wrote that object when it carries `rxkube.io/traceparent`) and
 * to the run it retries; the Events the run recorded as span events.
 *
 * It reads entries as they come (`entry`), and the hub tells it of each
 * run's start (`runStart`) so that the entry can carry the trace ID. State
 * per key lives from its trigger until it goes idle.
 */
export class RunTracer implements RunSpans {
  private readonly keys = new Map<ObjectKey, KeyTrace>();
  /** The informer entry last seen: a trigger that follows it at once (a watch event mapped to a key) is its delta's. */
  private lastInformer: InformerEntry | undefined;

  constructor(
    private readonly controller: string,
    private readonly tracer: Tracer,
    private readonly stores: Readonly<Record<string, Lister>>,
    /** The clock spans are timed on: the controller's measuring clock (sub-ms in real time, the scheduler's in virtual time), as its requests' spans are. */
    private readonly now: () => number,
  ) {}

  /** The span of the run of `key` under way, if any: its requests are its children. */
  spanOf(key: ObjectKey): Span | undefined {
    return this.keys.get(key)?.span;
  }

  /** One timeline entry. */
  entry(entry: TimelineEntry): void {
    switch (entry.type) {
      case 'informer':
        this.lastInformer = entry.object === undefined ? undefined : entry;
        return;
      case 'trigger':
        return this.trigger(entry);
      case 'queue':
        if (entry.state === 'idle' && this.keys.get(entry.key)?.span === undefined) this.keys.delete(entry.key);
        return;
      case 'run-end':
        return this.runEnd(entry);
      case 'event':
        return this.event(entry);
      default:
        return;
    }
  }

  runStart(key: ObjectKey, _at: number, attempt: number, queuedMs: number): string {
    const at = this.now();
    const state = this.stateOf(key);
    const links = state.previous === undefined ? state.links : [{ context: state.previous.context, attributes: { 'rxkube.trigger.via': state.previous.via } }, ...state.links];
    const { namespace, name } = splitKey(key);
    const attributes: Attributes = {
      'rxkube.controller': this.controller,
      'rxkube.reconcile.key': key,
      'rxkube.reconcile.name': name,
      'rxkube.reconcile.attempt': attempt,
      'rxkube.reconcile.triggers': state.triggers,
      'rxkube.queue.wait_ms': queuedMs,
    };
    if (namespace !== undefined) attributes['k8s.namespace.name'] = namespace;
    // A root: the run belongs to no request that happened to be active; its causes are links.
    const span = this.tracer.startSpan(`reconcile ${this.controller}`, { kind: SpanKind.INTERNAL, root: true, startTime: at, links, attributes });
    state.span?.end(at); // a start without the last run's end (the view began meanwhile): never left open
    state.span = span;
    state.links = [];
    state.triggers = 0;
    state.previous = undefined;
    return span.spanContext().traceId;
  }

  private stateOf(key: ObjectKey): KeyTrace {
    let state = this.keys.get(key);
    if (state === undefined) {
      state = { links: [], triggers: 0, span: undefined, previous: undefined };
      this.keys.set(key, state);
    }
    return state;
  }

  private trigger(entry: TriggerEntry): void {
    const state = this.stateOf(entry.key);
    state.triggers++;
    if (state.links.length >= MAX_LINKS) return;
    const { cause } = entry;
    const object = this.objectOf(cause);
    const attributes: Attributes = {
      'rxkube.trigger.via': cause.via,
      'rxkube.trigger.resource': cause.resource,
      'rxkube.trigger.delta': cause.delta,
      'rxkube.trigger.object': cause.objectKey,
    };
    if (cause.initial === true) attributes['rxkube.trigger.initial'] = true;
    const resourceVersion = object?.metadata?.resourceVersion;
    if (resourceVersion !== undefined) attributes['rxkube.trigger.resource_version'] = resourceVersion;
    // The run that wrote the object, when it says so; else no span to point at (OpenTelemetry keeps a link with attributes and no context).
    const context = traceContextOf(object) ?? INVALID_SPAN_CONTEXT;
    state.links.push({ context, attributes });
  }

  /** The object whose delta `cause` is: the informer entry just before (a watch event, deletes included), else what the store holds. */
  private objectOf(cause: TriggerCause): KubeObject | undefined {
    const last = this.lastInformer;
    if (last !== undefined && last.resource === cause.resource && last.key === cause.objectKey) return last.object;
    if (cause.via === 'trigger' || !Object.hasOwn(this.stores, cause.resource)) return undefined;
    return this.stores[cause.resource]?.get(cause.objectKey);
  }

  private runEnd(entry: RunEndEntry): void {
    const state = this.keys.get(entry.key);
    const span = state?.span;
    if (state === undefined || span === undefined) return; // its start was before tracing began
    span.setAttribute('rxkube.reconcile.result', entry.result);
    if (entry.requeueAfter !== undefined) span.setAttribute('rxkube.reconcile.requeue_after_ms', entry.requeueAfter);
    if (entry.error !== undefined) {
      span.recordException({ name: 'Error', message: entry.error }, this.now());
      span.setStatus({ code: SpanStatusCode.ERROR, message: entry.error });
    }
    span.end(this.now());
    state.span = undefined;
    const rerun = entry.result === 'error' ? 'retry' : entry.result === 'requeue' || entry.result === 'requeue_after' ? 'requeue' : undefined;
    state.previous = rerun === undefined ? undefined : { context: span.spanContext(), via: rerun };
  }

  private event(entry: EventEntry): void {
    const span = this.keys.get(entry.key)?.span;
    if (span === undefined) return;
    const attributes: Attributes = { 'rxkube.event.type': entry.eventType, 'rxkube.event.reason': entry.reason, 'rxkube.event.note': entry.message };
    if (entry.action !== undefined) attributes['rxkube.event.action'] = entry.action;
    if (entry.regarding !== undefined) attributes['rxkube.event.regarding'] = entry.regarding;
    span.addEvent(`event ${entry.reason}`, attributes, this.now());
  }
}
