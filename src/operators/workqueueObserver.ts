import type { Logger } from '../logger.js';
import type { ObjectKey } from '../types.js';

/**
 * Hooks into the workqueue of `reconcileByKey`, for metrics: enough to feed
 * client-go's `workqueue_*` and controller-runtime's `active_workers`. All
 * times are milliseconds of the operator's `clock` (its scheduler's, unless
 * one is given). Every method is
 * optional and is called synchronously, at the moment described:
 *
 * - `added(key)`: the key entered the queue: a trigger for a key that was
 *   idle or waiting out a delay, a delayed retry or requeue coming due, or a
 *   trigger that marks a running key to run once more. Not called when a
 *   trigger coalesces into a key that is already waiting or already marked
 *   (as client-go's `Add` counts only what enters its dirty set).
 * - `depth(n)`: the number of keys waiting for a free worker changed; `n` is
 *   the new number. Running keys and keys waiting out a delay are not in it.
 *   A key that finds a free worker at once starts without changing it; a
 *   `stop` that drops the waiting keys makes it 0.
 * - `started(key, queuedMs)`: a run begins, `queuedMs` after the key entered
 *   the queue (0 when it found a free worker at once).
 * - `finished(key, workMs)`: a run ended, however it ended (a timeout ends it
 *   at the deadline), before its outcome is emitted.
 * - `retried(key)`: the run just finished asked for a rerun, rate-limited
 *   (an error, or `requeue: true`) or after a delay (`requeueAfter`), as
 *   client-go's `AddAfter` and controller-runtime's queue count every
 *   delayed add, and whether or not a trigger during the run makes the
 *   rerun come sooner. Not called when the key is dropped (`maxRetries`, a
 *   `TerminalError`), nor when the rerun will not happen because the input
 *   completed or `stop` came (client-go's queue takes no add once shutting
 *   down).
 * - `activeWorkers(n)`: the number of runs in flight changed to `n`.
 *
 * When the output is unsubscribed, `depth(0)` and `activeWorkers(0)` are
 * called if they were not 0, so gauges do not stay up for a stopped queue.
 * An observer that throws is logged and otherwise ignored: metrics must not
 * stop the queue.
 */
export interface WorkqueueObserver {
  /** A key entered the queue (not when it was already waiting). */
  added?(key: ObjectKey): void;
  /** The number of keys waiting changed to `n`. */
  depth?(n: number): void;
  /** A run of `key` started, after waiting `queuedMs` in the queue. */
  started?(key: ObjectKey, queuedMs: number): void;
  /** A run of `key` ended after `workMs`. */
  finished?(key: ObjectKey, workMs: number): void;
  /** `key` was put back to be retried after a failure or a `requeue`. */
  retried?(key: ObjectKey): void;
  /** The number of runs in flight changed to `n`. */
  activeWorkers?(n: number): void;
}

/** Every hook present, each one shielded so that a throw is logged instead of breaking the queue. */
export function guardObserver(observer: WorkqueueObserver, logger: Logger): Required<WorkqueueObserver> {
  const call = <A extends unknown[]>(name: keyof WorkqueueObserver, ...args: A): void => {
    try {
      (observer[name] as ((...a: A) => void) | undefined)?.apply(observer, args);
    } catch (err) {
      logger.error({ hook: name, err: err instanceof Error ? err.message : String(err) }, 'workqueue observer threw');
    }
  };
  return {
    added: (key) => call('added', key),
    depth: (n) => call('depth', n),
    started: (key, queuedMs) => call('started', key, queuedMs),
    finished: (key, workMs) => call('finished', key, workMs),
    retried: (key) => call('retried', key),
    activeWorkers: (n) => call('activeWorkers', n),
  };
}
