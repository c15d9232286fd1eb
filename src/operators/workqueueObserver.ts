import type { Logger } from '../logger.js';
import type { ObjectKey } from '../types.js';
import type { ReconcileOutcome } from './reconcileByKey.js';

/** Why a key waits out a delay: a failure (`error`), `requeue: true`, or `requeueAfter`. */
export type DelayReason = 'error' | 'requeue' | 'requeueAfter';

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
 * - `priorityDepth(priority, n)`: the number of keys waiting at `priority`
 *   (the priority of their pending run) changed to `n`; told with `depth`,
 *   and for both priorities when a trigger moves a waiting key up (which
 *   leaves `depth` as it was). Feeds `workqueue_depth{priority}`.
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
 * And, for the controller's timeline, where each key is (its phase, as
 * `KeyQueue` names it), told on every change:
 * - `waiting(key)`: the key now waits for a free worker: triggered while
 *   idle with no worker free (or keys ahead of it), woken from a delay (its
 *   timer, or a trigger that beats it), or at the end of a run that was
 *   triggered meanwhile or asked for a rerun without delay.
 * - `started(key, queuedMs, attempt)`: it is running (also straight from
 *   idle, with no `waiting` before, when a worker was free); `attempt` is
 *   the run's `ctx.attempt` (0, then 1, 2, … for rate-limited reruns).
 * - `ended(outcome, requeueAfter)`: the run's outcome, as it will be
 *   emitted, and the `requeueAfter` it asked for (undefined if none); told
 *   before where the key goes next.
 * - `delayed(key, delayMs, reason)`: it waits out a delay before its rerun.
 * - `idle(key)`: the queue holds nothing for it any more: its run ended
 *   with nothing pending, its rerun was dropped (the input completed, `stop`
 *   came), it was dropped while waiting or delayed (`stop`, or a delay when
 *   the input completed), or the queue was torn down (unsubscribed; a run
 *   aborted so has no `ended`).
 *
 * So a key goes idle → (waiting →) running → waiting | delayed | idle, and
 * delayed → waiting | idle, waiting → running | idle.
 *
 * When the output is unsubscribed, `depth(0)` (with `priorityDepth(p, 0)`
 * for each priority that had keys waiting) and `activeWorkers(0)` are
 * called if they were not 0, so gauges do not stay up for a stopped queue.
 * An observer that throws is logged and otherwise ignored: metrics must not
 * stop the queue.
 */
export interface WorkqueueObserver {
  /** A key entered the queue (not when it was already waiting). */
  added?(key: ObjectKey): void;
  /** The number of keys waiting changed to `n`. */
  depth?(n: number): void;
  /** The number of keys waiting at `priority` changed to `n`. */
  priorityDepth?(priority: number, n: number): void;
  /** A run of `key` started, after waiting `queuedMs` in the queue; `attempt` is its `ctx.attempt`. */
  started?(key: ObjectKey, queuedMs: number, attempt: number): void;
  /** A run of `key` ended after `workMs`. */
  finished?(key: ObjectKey, workMs: number): void;
  /** `key` was put back to be retried after a failure or a `requeue`. */
  retried?(key: ObjectKey): void;
  /** The number of runs in flight changed to `n`. */
  activeWorkers?(n: number): void;
  /** `key` now waits for a free worker. */
  waiting?(key: ObjectKey): void;
  /** A run ended with `outcome` (the object the output emits next); `requeueAfter` is what it asked for, if anything. */
  ended?(outcome: ReconcileOutcome, requeueAfter: number | undefined): void;
  /** `key` waits out `delayMs` before its rerun, because of `reason`. */
  delayed?(key: ObjectKey, delayMs: number, reason: DelayReason): void;
  /** The queue holds nothing for `key` any more. */
  idle?(key: ObjectKey): void;
}

const skip = (): void => undefined;

/**
 * Every hook present, each one shielded so that a throw is logged instead
 * of breaking the queue. A hook the observer lacks is a no-op that costs a
 * call and nothing more: the queue calls every hook on its hot path.
 */
export function guardObserver(observer: WorkqueueObserver, logger: Logger): Required<WorkqueueObserver> {
  const threw = (hook: keyof WorkqueueObserver, err: unknown): void => {
    logger.error({ hook, err: err instanceof Error ? err.message : String(err) }, 'workqueue observer threw');
  };
  // One wrapper per arity, without rest parameters or apply: these run several times per reconcile.
  type Hook = keyof WorkqueueObserver;
  const method = (name: Hook) => observer[name] as ((this: WorkqueueObserver, a?: unknown, b?: unknown, c?: unknown) => void) | undefined;
  const one = <A>(name: Hook): ((a: A) => void) => {
    const fn = method(name);
    if (fn === undefined) return skip;
    return (a) => {
      try {
        fn.call(observer, a);
      } catch (err) {
        threw(name, err);
      }
    };
  };
  const two = <A, B>(name: Hook): ((a: A, b: B) => void) => {
    const fn = method(name);
    if (fn === undefined) return skip;
    return (a, b) => {
      try {
        fn.call(observer, a, b);
      } catch (err) {
        threw(name, err);
      }
    };
  };
  const three = <A, B, C>(name: Hook): ((a: A, b: B, c: C) => void) => {
    const fn = method(name);
    if (fn === undefined) return skip;
    return (a, b, c) => {
      try {
        fn.call(observer, a, b, c);
      } catch (err) {
        threw(name, err);
      }
    };
  };
  return {
    added: one('added'),
    depth: one('depth'),
    priorityDepth: two('priorityDepth'),
    started: three('started'),
    finished: two('finished'),
    retried: one('retried'),
    activeWorkers: one('activeWorkers'),
    waiting: one('waiting'),
    ended: two('ended'),
    delayed: three('delayed'),
    idle: one('idle'),
  };
}
