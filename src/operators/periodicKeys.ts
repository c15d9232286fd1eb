import { Observable, asyncScheduler, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { fnv1a64 } from '../util/shardHash.js';
import type { Delta, ObjectKey } from '../types.js';

/** Options of `periodicKeys()`. */
export interface PeriodicKeysOptions {
  /** The clock of the timers (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
}

/**
 * The phase of `key` in a period of `intervalMs`: a whole number of ms in
 * `[0, intervalMs)`, from the FNV-1a hash of the key, so that keys spread
 * evenly over the period and each keeps its place in it from one run to the next.
 */
export function keyPhase(key: ObjectKey, intervalMs: number): number {
  const slots = Math.max(1, Math.floor(intervalMs));
  return Number(fnv1a64(key) % BigInt(slots));
}

/**
 * A timer per object (kopf's `@timer`): every key that the deltas show
 * present comes out every `intervalMs`, until a `Deleted` delta of it.
 *
 * Each key fires at the scheduler times `t` with `t mod intervalMs` equal
 * to its phase (`keyPhase`, from a hash of the key), never at the moment
 * it appears: a thousand objects listed at once fire spread over the whole
 * interval, not as one storm, and an object re-added (a re-list, leadership
 * regained) keeps its place. With `intervalMs` 10 and keys a (phase 3) and
 * b (phase 7) added at 0:
 * ```
 * in:  (ab)─────────────────────────b deleted────────
 * out: ───a───b─────a───b─────a─────────a─────────a──
 *         3   7     13  17    23        33        43
 * ```
 * A key's timer starts at its first delta that is not a `Deleted`, and a
 * later one changes nothing. The input completing or erroring stops every
 * timer and ends the output the same way; so does unsubscribing. Memory
 * follows the keys present: a deleted key's timer is gone.
 */
export function periodicKeys(intervalMs: number, options: PeriodicKeysOptions = {}): OperatorFunction<Delta, ObjectKey> {
  if (!(intervalMs >= 1) || !Number.isFinite(intervalMs)) throw new RangeError(`periodicKeys: the interval must be a finite number of ms, at least 1, got ${intervalMs}`);
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) =>
    new Observable<ObjectKey>((subscriber) => {
      const timers = new Map<ObjectKey, Subscription>();
      const stopAll = (): void => {
        for (const timer of timers.values()) timer.unsubscribe();
        timers.clear();
      };
      const start = (key: ObjectKey): void => {
        const now = scheduler.now();
        const first = ((((keyPhase(key, intervalMs) - now) % intervalMs) + intervalMs) % intervalMs) || intervalMs;
        timers.set(
          key,
          scheduler.schedule(function () {
            subscriber.next(key);
            this.schedule(undefined, intervalMs);
          }, first),
        );
      };
      const input = source.subscribe({
        next(delta) {
          if (subscriber.closed) return;
          if (delta.type === 'Deleted') {
            timers.get(delta.key)?.unsubscribe();
            timers.delete(delta.key);
          } else if (!timers.has(delta.key)) {
            start(delta.key);
          }
        },
        error(err: unknown) {
          stopAll();
          subscriber.error(err);
        },
        complete() {
          stopAll();
          subscriber.complete();
        },
      });
      return () => {
        input.unsubscribe();
        stopAll();
      };
    });
}
