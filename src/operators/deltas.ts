import { Observable, type OperatorFunction } from 'rxjs';
import { defaultLogger, type Logger } from '../logger.js';
import {
  InvalidObjectError,
  objectKey,
  type Delta,
  type DeltaEvent,
  type KubeObject,
  type ListWatchEvent,
  type ObjectKey,
} from '../types.js';
import { releaseCompact, trackCompact } from '../compact/compactObject.js';

/** Options of `deltas()`: what to do with objects that cannot be keyed, and where to log. */
export interface DeltasOptions<T extends KubeObject> {
  /**
   * Told of every object that cannot be keyed; the default logs it as an
   * error. One that throws errors the output (see `deltas`).
   */
  onInvalidObject?: (error: InvalidObjectError, event: ListWatchEvent<T>) => void;
  /** Where an unkeyable object is logged by default (default: pino to stderr). */
  logger?: Logger;
}

/**
 * Turns what a list-watch source saw into what changed, per key: the job of
 * client-go's DeltaFIFO, as an operator.
 *
 * ```
 * in:  Restart─Listed(a@1)─Listed(b@2)─Synced(2)─Modified(a@3)─Restart─Listed(a@3)─Synced(5)
 * out: ───────Added(a)*───Added(b)*───Synced(2)─Updated(a)────────────Sync(a)───Deleted(b)†─Synced(5)
 *      * initial: true   † finalStateUnknown: true (b vanished while we were not watching)
 * ```
 *
 * The rules:
 * - An object the stream has not seen is `Added`; a known one with a new
 *   resourceVersion is `Updated` (with `old`); a known one with the same
 *   resourceVersion is `Sync` (a repeat, or unchanged in a re-list).
 *   Resource versions are compared for equality only: they are opaque.
 * - A known key that comes back with a different uid was deleted and created
 *   again: it yields `Deleted` of the old object, then `Added` of the new one.
 * - After a re-list (`Restart` … `Synced`), every known key that the list
 *   did not name yields `Deleted` with `finalStateUnknown: true` and the last
 *   state known: deletes missed while disconnected are never lost.
 * - A `Deleted` for a key never seen is dropped, as the DeltaFIFO drops it:
 *   there is nothing known to remove.
 * - Deltas from the first list carry `initial: true`; `Synced` and
 *   `Bookmark` pass through as markers.
 * - Each event's deltas are emitted synchronously and in order, so per-key
 *   order is the source's order.
 *
 * An object that cannot be keyed (no `metadata.name`) is reported through
 * `onInvalidObject` and skipped; the stream goes on. Each subscription keeps
 * its own state: one entry per live key, the object itself shared, not copied.
 *
 * Edge case: if `onInvalidObject` throws, the output errors with an `Error`
 * that names `onInvalidObject` and the object's fault, the thrown value as
 * its `cause`; nothing is read from the source after that, and the output
 * never completes.
 */
export function deltas<T extends KubeObject = KubeObject>(
  options: DeltasOptions<T> = {},
): OperatorFunction<ListWatchEvent<T>, DeltaEvent<T>> {
  const logger = options.logger ?? defaultLogger({ part: 'deltas' });
  const onInvalidObject =
    options.onInvalidObject ??
    ((error: InvalidObjectError, event: ListWatchEvent<T>) =>
      logger.error({ err: error.message, event: event.type }, 'skipping an object that cannot be keyed'));

  return (source) =>
    new Observable<DeltaEvent<T>>((subscriber) => {
      const known = new Map<ObjectKey, T>();
      // Keys named by the list in progress; undefined while watching.
      let listed: Set<ObjectKey> | undefined;
      let initial = true;

      // Deltas are built whole, never given a field after the fact: a late
      // field changes the object's hidden class, which V8 makes us pay for
      // on every event downstream.
      const emit = (type: Delta<T>['type'], key: ObjectKey, object: T, old?: T) => {
        let delta: Delta<T>;
        if (old === undefined) delta = initial ? { type, key, object, initial } : { type, key, object };
        else delta = initial ? { type, key, object, old, initial } : { type, key, object, old };
        subscriber.next(delta);
      };

      const upsert = (key: ObjectKey, object: T) => {
        const old = known.get(key);
        known.set(key, object);
        if (old === undefined) {
          // Held until released below: its source may keep the bodies after it in slabs.
          trackCompact(object);
          emit('Added', key, object);
          return;
        }
        if (old !== object) releaseCompact(old);
        // Each object's metadata read once: through a compact view, every read is a proxy's.
        const before = old.metadata;
        const after = object.metadata;
        if (recreated(before, after)) {
          emit('Deleted', key, old);
          emit('Added', key, object);
        } else if (before.resourceVersion !== undefined && before.resourceVersion === after.resourceVersion) {
          emit('Sync', key, object, old);
        } else {
          emit('Updated', key, object, old);
        }
      };

      const keyOf = (event: ListWatchEvent<T> & { object: T }): ObjectKey | undefined => {
        try {
          return objectKey(event.object);
        } catch (err) {
          if (!(err instanceof InvalidObjectError)) throw err;
          releaseCompact(event.object);
          try {
            onInvalidObject(err, event);
          } catch (thrown) {
            throw new Error(
              `deltas: onInvalidObject threw on a ${event.type} object that cannot be keyed (${err.message}): ${messageOf(thrown)}`,
              { cause: thrown },
            );
          }
          return undefined;
        }
      };

      const step = (event: ListWatchEvent<T>): void => {
        switch (event.type) {
          case 'Restart':
            listed = new Set();
            return;
          case 'Listed': {
            const key = keyOf(event);
            if (key === undefined) return;
            // A list can arrive without a Restart (a source that only lists once);
            // it still opens a list, so that Synced can find what vanished.
            (listed ??= new Set()).add(key);
            upsert(key, event.object);
            return;
          }
          case 'Synced': {
            if (listed !== undefined) {
              for (const [key, object] of known) {
                if (listed.has(key)) continue;
                known.delete(key);
                releaseCompact(object);
                subscriber.next(
                  initial
                    ? { type: 'Deleted', key, object, finalStateUnknown: true, initial }
                    : { type: 'Deleted', key, object, finalStateUnknown: true },
                );
              }
              listed = undefined;
            }
            initial = false;
            subscriber.next({ type: 'Synced', resourceVersion: event.resourceVersion });
            return;
          }
          case 'Bookmark':
            subscriber.next(event);
            return;
          case 'Added':
          case 'Modified': {
            const key = keyOf(event);
            if (key !== undefined) upsert(key, event.object);
            return;
          }
          case 'Deleted': {
            const key = keyOf(event);
            // Neither the final state nor the object it ends is any key's current object from here on.
            releaseCompact(event.object);
            if (key === undefined) return;
            const last = known.get(key);
            if (last === undefined) return;
            known.delete(key);
            if (last !== event.object) releaseCompact(last);
            emit('Deleted', key, event.object);
            return;
          }
        }
      };

      return source.subscribe({
        next(event) {
          // A synchronous source goes on calling this observer after the
          // output errored (it is not `subscriber`, so it is not closed with
          // it): nothing more may be read, nor a callback called again.
          if (subscriber.closed) return;
          // Thrown from here, an error would go to RxJS's unhandled-error
          // report (an uncaught exception) and the stream would go on.
          try {
            step(event);
          } catch (err) {
            subscriber.error(err);
          }
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
    });
}

function messageOf(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown);
}

/**
 * True when both objects' metadata carry a uid and the uids differ. Only a non-empty
 * string is a uid: a missing, empty or mistyped one (null, a number) says
 * nothing about identity, so it never makes an update look like a recreation.
 */
function recreated(oldMetadata: KubeObject['metadata'], metadata: KubeObject['metadata']): boolean {
  const before: unknown = oldMetadata.uid;
  const after: unknown = metadata.uid;
  return typeof before === 'string' && before !== '' && typeof after === 'string' && after !== '' && before !== after;
}
