import { Observable, from, type ObservableInput } from 'rxjs';
import type { KubeObject, ListWatchEvent } from '../types.js';

/** A watch event as the API server writes it, one per line of a watch response. */
export interface RawWatchEvent<T extends KubeObject = KubeObject> {
  /** The watch event type, as the API server sends it. */
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  /** The object; for `ERROR`, the Status that says what went wrong. */
  object: T | WatchStatus;
}

/** The `Status` object of an `ERROR` watch event. */
export interface WatchStatus {
  /** `Status` on an ERROR event. */
  kind?: 'Status';
  /** `Failure` on an ERROR event. */
  status?: string;
  /** What went wrong. */
  message?: string;
  /** The machine-readable cause (`Expired` for a 410). */
  reason?: string;
  /** The HTTP status code the error stands for (410 Gone, ...). */
  code?: number;
}

/** An `ERROR` event from the server, or an event that is not a watch event at all. */
export class WatchEventError extends Error {
  override readonly name = 'WatchEventError';
  constructor(
    message: string,
    /** The HTTP-like code of an `ERROR` event's Status (410 means the watch's resourceVersion expired). */
    readonly code?: number,
    readonly reason?: string,
  ) {
    super(message);
  }
}

/** Options of `fromWatchEvents()`. */
export interface FromWatchEventsOptions {
  /**
   * The events begin with the current state, as a watch opened with
   * `sendInitialEvents=true` sends it: `ADDED` for every object, then a
   * `BOOKMARK` annotated `k8s.io/initial-events-end`. They become `Restart`,
   * one `Listed` each, and `Synced`, exactly as a paged list would.
   */
  initialEvents?: boolean;
}

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

function describeEvent(index: number, raw: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(raw) ?? String(raw);
  } catch {
    text = String(raw);
  }
  return `watch event #${index} (${text.length > 120 ? `${text.slice(0, 120)}…` : text})`;
}

/**
 * Turns raw watch events (`{type: 'ADDED' | ..., object}`) into the
 * `ListWatchEvent`s every rxkube stage reads: for tests, and for callers that
 * bring their own transport.
 *
 * ```
 * raw:   ─ADDED(a)─MODIFIED(a)─BOOKMARK(rv 9)─DELETED(a)─|
 * out:   ─Added(a)─Modified(a)─Bookmark(9)───Deleted(a)─|
 * ```
 *
 * An `ERROR` event ends the stream with a `WatchEventError` that carries the
 * Status code (410 for an expired resourceVersion), as a real watch ends.
 * Anything that is not a watch event (no known type, no object, an object
 * without metadata, a bookmark without a resourceVersion) ends it with an
 * error naming the event and what was wrong, rather than passing on
 * something every later stage would have to second-guess.
 */
export function fromWatchEvents<T extends KubeObject = KubeObject>(
  events: ObservableInput<RawWatchEvent<T>> | RawWatchEvent<T>[],
  options: FromWatchEventsOptions = {},
): Observable<ListWatchEvent<T>> {
  return new Observable<ListWatchEvent<T>>((subscriber) => {
    let index = 0;
    let listing = options.initialEvents === true;
    if (listing) subscriber.next({ type: 'Restart' });
    return from(events).subscribe({
      next(raw) {
        const at = index++;
        const fail = (what: string, code?: number, reason?: string) =>
          subscriber.error(new WatchEventError(`${describeEvent(at, raw)}: ${what}`, code, reason));
        if (raw === null || typeof raw !== 'object') return fail('not an object');
        const object = (raw as { object?: unknown }).object;
        if (object === null || typeof object !== 'object') return fail('has no object');
        if (raw.type === 'ERROR') {
          const status = object as WatchStatus;
          return subscriber.error(
            new WatchEventError(
              `watch failed: ${status.message ?? 'ERROR event without a message'} (${status.code ?? 'no code'}${status.reason ? ` ${status.reason}` : ''})`,
              status.code,
              status.reason,
            ),
          );
        }
        const metadata = (object as { metadata?: unknown }).metadata;
        if (metadata === null || typeof metadata !== 'object') return fail('object has no metadata');
        const meta = metadata as KubeObject['metadata'];
        switch (raw.type) {
          case 'BOOKMARK': {
            const resourceVersion = meta.resourceVersion;
            if (typeof resourceVersion !== 'string' || resourceVersion === '') {
              return fail('bookmark has no metadata.resourceVersion');
            }
            if (listing && meta.annotations?.[INITIAL_EVENTS_END] === 'true') {
              listing = false;
              subscriber.next({ type: 'Synced', resourceVersion });
            } else {
              subscriber.next({ type: 'Bookmark', resourceVersion });
            }
            return;
          }
          case 'ADDED':
            subscriber.next(listing ? { type: 'Listed', object: object as T } : { type: 'Added', object: object as T });
            return;
          case 'MODIFIED':
            subscriber.next({ type: 'Modified', object: object as T });
            return;
          case 'DELETED':
            subscriber.next({ type: 'Deleted', object: object as T });
            return;
          default:
            return fail(`unknown type ${JSON.stringify((raw as { type?: unknown }).type)}`);
        }
      },
      error: (err: unknown) => subscriber.error(err),
      complete: () => subscriber.complete(),
    });
  });
}
