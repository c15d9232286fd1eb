import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { EventInput, EventRecorder, EventRecorderStats } from '../../sinks/events/eventRecorder.js';
import { objectReference, type ObjectReference } from '../../sinks/events/objectReference.js';
import type { KubeObject, ObjectKey } from '../../types.js';

/** One Event a reconcile recorded. */
export interface RecordedEvent {
  /** When it was recorded, on the recorder's scheduler (virtual ms in a marble test). */
  at: number;
  /** `Normal` or `Warning`. */
  type: EventInput['type'];
  /** Why (CamelCase). */
  reason: string;
  /** What was done or failed. */
  action: string;
  /** The sentence for people, if one was given. */
  note?: string;
  /** What it is about, as the real recorder references it. */
  regarding: ObjectReference;
  /** `namespace/name` (or `name`) of `regarding`. */
  key: ObjectKey;
  /** A second object the Event is about, if any. */
  related?: ObjectReference;
}

/** A `record` call the real recorder would have refused (and only logged). */
export interface RefusedEvent {
  /** When the call came, on the recorder's scheduler. */
  at: number;
  /** Why the real recorder would refuse it. */
  error: string;
  /** The arguments as given. */
  input: unknown;
}

/**
 * An `EventRecorder` that keeps what it is given, for tests: each `record`
 * call becomes one `RecordedEvent`, at the scheduler's time.
 *
 * It checks input as the real recorder does (type `Normal` or `Warning`,
 * reason and action of 1 to 128 characters, a named object to be about)
 * and, like it, never throws into the reconcile: a refused call lands in
 * `refused`, where a test (and `runReconcile`, which fails on it) sees it.
 * It does not coalesce repeats into series as the real one does: a test
 * sees every call.
 */
export interface MemoryRecorder extends EventRecorder {
  /** Every Event recorded, in order. */
  readonly events: readonly RecordedEvent[];
  /** Every call the real recorder would have refused. */
  readonly refused: readonly RefusedEvent[];
}

/** The short form a string among the expected values of `expectEvents` is compared with: `Normal Scaled default/web`. */
export function describeEvent(e: RecordedEvent): string {
  return `${e.type} ${e.reason} ${e.key}`;
}

/** The short form and the note, for failure messages. */
export function describeEventFully(e: RecordedEvent): string {
  return `${describeEvent(e)}${e.note === undefined ? '' : `: ${e.note}`}`;
}

function problem(event: EventInput): string | undefined {
  if (event === null || typeof event !== 'object') return `expected an event, got ${String(event)}`;
  if (event.type !== 'Normal' && event.type !== 'Warning') return `event type must be "Normal" or "Warning", got ${JSON.stringify(event.type)}`;
  for (const field of ['reason', 'action'] as const) {
    const value: unknown = event[field];
    if (typeof value !== 'string' || value === '' || value.length > 128) return `event ${field} must be 1 to 128 characters, got ${JSON.stringify(value)}`;
  }
  return undefined;
}

/** A recorder that keeps every Event it is given, at `scheduler`'s time, and checks them as the real one does. */
export function memoryRecorder(options: { scheduler?: SchedulerLike } = {}): MemoryRecorder {
  const scheduler = options.scheduler ?? asyncScheduler;
  const events: RecordedEvent[] = [];
  const refused: RefusedEvent[] = [];
  let closed = false;
  let dropped = 0;
  return {
    events,
    refused,
    record(regarding: KubeObject | ObjectReference, event: EventInput): void {
      const at = scheduler.now();
      if (closed) {
        dropped += 1;
        return;
      }
      let ref: ObjectReference;
      let related: ObjectReference | undefined;
      try {
        const wrong = problem(event);
        if (wrong !== undefined) throw new TypeError(wrong);
        ref = objectReference(regarding);
        related = event.related === undefined ? undefined : objectReference(event.related);
      } catch (err) {
        refused.push({ at, error: err instanceof Error ? err.message : String(err), input: { regarding, event } });
        return;
      }
      events.push({
        at,
        type: event.type,
        reason: event.reason,
        action: event.action,
        ...(event.note !== undefined ? { note: String(event.note) } : {}),
        regarding: ref,
        key: ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name,
        ...(related !== undefined ? { related } : {}),
      });
    },
    flush: () => Promise.resolve(),
    close: () => {
      closed = true;
      return Promise.resolve();
    },
    stats: (): EventRecorderStats => ({ recorded: events.length, created: events.length, patched: 0, failed: refused.length, dropped, tracked: 0 }),
  };
}
