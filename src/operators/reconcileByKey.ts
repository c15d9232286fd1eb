import {
  Observable,
  asyncScheduler,
  from,
  type ObservableInput,
  type OperatorFunction,
  type SchedulerLike,
  type Subscriber,
  type Subscription,
} from 'rxjs';
import { defaultLogger, type Logger } from '../logger.js';
import type { ObjectKey } from '../types.js';
import { KeyQueue, type KeyEntry, type ReconcileOutcomeResult, type RunEnd } from './keyQueue.js';
import { DEFAULT_AGING, NORMAL_PRIORITY } from './priorityLanes.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rateLimiters.js';
import { failureKind, ReconcileTimeoutError, RunContext, readResult, startRun, type Reconciler, type RunReport } from './reconciler.js';
import { guardObserver, type WorkqueueObserver } from './workqueueObserver.js';

export { ReconcileTimeoutError, TerminalError } from './reconciler.js';
export type { FailureKind, ReconcileContext, ReconcileResult, Reconciler } from './reconciler.js';
export type { DelayReason, WorkqueueObserver } from './workqueueObserver.js';
export type { ReconcileOutcomeResult } from './keyQueue.js';
export { DEFAULT_AGING, LOW_PRIORITY, NORMAL_PRIORITY } from './priorityLanes.js';

/** A trigger that says how urgent it is: higher runs sooner (`NORMAL_PRIORITY` is 0, `LOW_PRIORITY` -100). */
export interface PrioritizedKey {
  /** The key to run (`namespace/name`, or `name` when cluster-scoped). */
  readonly key: ObjectKey;
  /** A finite number; a key without one is `NORMAL_PRIORITY`. */
  readonly priority: number;
}

/** What `reconcileByKey` reads: a key (at `NORMAL_PRIORITY`), or a key with its priority. */
export type KeyTrigger = ObjectKey | PrioritizedKey;

/** One per run, emitted when the run ends. */
export interface ReconcileOutcome {
  /** The key the run was for. */
  key: ObjectKey;
  /** How the run ended: `success`, `error` (retried), `requeue`, `requeue_after` or `dropped` (after `maxRetries`). */
  result: ReconcileOutcomeResult;
  /** Set for `error` and `dropped`. */
  error?: unknown;
  /**
   * Set for `error` and `dropped` when the reconcile's failure was a
   * timeout, a panic or a `TerminalError` (see `FailureKind`), for the
   * metrics that count those apart.
   */
  failure?: 'timeout' | 'panic' | 'terminal';
  /** The run's `ctx.attempt`. */
  attempt: number;
  /** How long the run took, in ms of the queue's `clock`. */
  duration: number;
}

/** A live view of the queue's size, for tests and diagnostics. */
export interface WorkqueueInspector {
  /** Keys the queue holds any state for: waiting, running or waiting out a delay. */
  readonly keys: number;
  /** Keys waiting for a worker. */
  readonly waiting: number;
  /** Runs in flight. */
  readonly running: number;
  /** Keys waiting out a retry or requeue delay. */
  readonly delayed: number;
}

/** Options of `reconcileByKey()`: concurrency, retries and their delays, timeouts, graceful stop, metrics hooks and logging. */
export interface ReconcileOptions {
  /** Runs in flight at most, over all keys (default 1). A positive integer, or Infinity. */
  concurrency?: number;
  /**
   * The delay before each rate-limited retry. Default: a new
   * `defaultControllerRateLimiter(scheduler)` per subscription. A limiter
   * passed here is shared by every subscription of the operator.
   */
  rateLimiter?: RateLimiter;
  /** Where every wait (delays, timeouts) and, without `clock`, every measured time comes from (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /**
   * What run durations and queue times are measured with, in ms (default:
   * the scheduler's `now()`, so virtual time stays virtual). Only read,
   * never waited on: a high-resolution clock here (the `perf_hooks` one, say)
   * gives the metrics sub-millisecond durations, where `asyncScheduler`
   * counts whole milliseconds.
   */
  clock?: () => number;
  /** Ms a run may take; then it fails with a `ReconcileTimeoutError` and its signal is aborted. */
  timeout?: number;
  /**
   * Ms a waiting key takes to gain 100 points of priority, the distance
   * from `LOW_PRIORITY` to `NORMAL_PRIORITY` (default `DEFAULT_AGING`, one
   * minute): what bounds the wait of a low-priority key (see the
   * operator's doc). 0 ranks waiting keys by arrival alone, whatever their
   * priority: a plain FIFO.
   */
  aging?: number;
  /** Rate-limited retries in a row after which a failing key is dropped (default: never dropped). */
  maxRetries?: number;
  /**
   * A graceful stop: when it first emits, no key starts any more, the input
   * is no longer read, and the output completes once the runs in flight
   * have finished (see the operator's doc). An error of it errors the output;
   * completing without a value changes nothing.
   */
  stop?: ObservableInput<unknown>;
  /** Where failures are logged (default: pino to stderr): retries at warn, dropped keys at error. */
  logger?: Logger;
  /** Told of the queue's changes, for metrics (`controllerMetrics().observer` fits). */
  observer?: WorkqueueObserver;
  /**
   * For tests and diagnostics: called once per subscription, before any key
   * is read, with a live view of the queue's size.
   */
  inspect?: (inspector: WorkqueueInspector) => void;
}

function requirePositive(name: string, value: number | undefined, integer: boolean): void {
  if (value === undefined) return;
  const ok = typeof value === 'number' && value > 0 && (integer ? Number.isInteger(value) || value === Infinity : value < Infinity);
  if (!ok) {
    throw new RangeError(
      `reconcileByKey ${name} must be ${integer ? 'a positive integer (or Infinity)' : 'a finite number of ms > 0'}, got ${String(value)}`,
    );
  }
}

function describeKey(key: unknown): string {
  if (key === null || key === undefined) return String(key);
  if (typeof key === 'string') return 'an empty string';
  if (typeof key === 'object') {
    const { key: inner, priority } = key as Partial<PrioritizedKey>;
    if (typeof inner !== 'string' || inner === '') return `an object whose key is ${inner === '' ? 'an empty string' : typeof inner}`;
    return `an object whose priority is ${typeof priority === 'number' ? String(priority) : typeof priority}, not a finite number`;
  }
  return `a ${typeof key}`;
}

/**
 * The workqueue of a controller, as one operator: turns a stream of keys
 * that changed into runs of `reconcile`, one outcome per run.
 *
 * The rule: **one run per key at a time, and a trigger during a run means
 * exactly one more run after it.** Triggers of a key that is already waiting
 * coalesce into its one pending run. At most `concurrency` runs are in
 * flight; waiting keys of one priority start in the order they were first
 * triggered (see the priorities below).
 *
 * Each run takes 3 frames, concurrency 1:
 * ```
 * keys:     -a-a-b--aa----|
 * runs:      [a][a][b][a]
 * outcomes: ----a--a--b--a|
 * ```
 * The trigger of `a` at 3 lands during its run: `a` runs once more at 4. `b`
 * waits for the worker. The triggers of `a` at 8 and 9 come while it waits
 * and make one run.
 *
 * **Priorities, with aging.** A trigger may say how urgent it is:
 * `{ key, priority }`, higher sooner; a bare key is `NORMAL_PRIORITY` (0),
 * and `controller()` gives the keys of its initial list and resyncs
 * `LOW_PRIORITY` (-100). A waiting key's effective priority is the priority
 * of its pending run plus 100 points for every `aging` ms it has waited
 * (default one minute), and the waiting key with the highest effective
 * priority starts first; ties go to the key that joined first, so keys of
 * one priority start in the order they were first triggered. A pending
 * run's priority is the highest of the triggers that asked for it: a
 * trigger of a waiting key at a higher priority moves it up (if that ranks
 * it sooner than its wait so far did), and triggers during a run or a delay
 * raise the priority of the run they ask for. A rerun a run asks for itself
 * (a retry, a requeue) keeps the run's priority. Runs 3 frames, concurrency
 * 1, `L` a low trigger of `l`, `N` a normal one of `n`:
 * ```
 * keys:     -xLN
 * runs:      [x][n][l]
 * ```
 *
 * **The bound.** Say a key starts waiting at `t0` with priority `p`, and no
 * trigger meanwhile carries a priority above `P`. Every key that starts
 * waiting at `t ≥ t1 = t0 + (P - p) × aging / 100` ranks behind it (its
 * effective priority can never catch up), so from `t1` on it waits only
 * for the runs in flight and the `n` keys ranked ahead of it at `t1` (each
 * at most once: a key waits at most once at a time). With `c` workers
 * (`concurrency`) and runs of at most `d` ms (at most `timeout`, when one
 * is set), it starts by `t1 + ⌈(n + 1) / c⌉ × d`, and `n` is less than the
 * number `K` of distinct keys the queue holds: no key waits longer than
 * `(P - p) × aging / 100 + ⌈K / c⌉ × d`. With the defaults (`LOW_PRIORITY`,
 * `NORMAL_PRIORITY` and nothing higher, aging one minute), a key of an
 * initial list starts at most one minute plus the time the workers take to
 * drain what was ahead of it then; a normal key waits only for what was
 * ahead of it. This assumes a clock (`clock`) that never goes back. The
 * price of the bound: a fresh change waits behind low keys that have
 * waited longer than `aging` (a backlog that takes longer than a minute to
 * drain loses its lead to fresh changes after that minute); raise `aging`
 * for more lead, lower it for a tighter bound. `aging: 0` is a plain FIFO.
 *
 * Failures are retried, never thrown: a run that throws, rejects, errors,
 * times out (`timeout`), or returns something that is not a result (a
 * property other than `requeue` and `requeueAfter` included), emits an
 * `error` outcome and runs again after `rateLimiter.when(key)` (client-go's
 * `AddRateLimited`); success forgets the count (`Forget`). `{ requeue: true }`
 * is a rate-limited requeue too; `{ requeueAfter: ms }` reruns after that
 * delay and forgets the count. A key has at most one pending run, and the
 * earliest wins: a trigger during a delay runs the key now (the delay is
 * cancelled, its failure count kept), and a trigger during a run that then
 * fails makes the rerun follow at once instead of after the delay. After
 * `maxRetries` retries in a row a failing key is `dropped` (logged, count
 * forgotten), until its next trigger; a run that fails with a
 * `TerminalError` is dropped the same way at once, whatever its attempt:
 * ```
 * keys:     -a------a---
 * runs:      [a]     [a]      the first run throws a TerminalError
 * outcomes: ----d------s      d: dropped, no retry; the next trigger runs it
 * ```
 * Failures that are timeouts, panics (see `FailureKind`) or terminal say so
 * in the outcome's `failure`.
 *
 * State is kept only for keys that are waiting, running or delayed, and is
 * released the moment a key becomes idle: memory follows the active keys,
 * not the keys ever seen. `inspect` shows its size.
 *
 * When the input completes, runs in flight finish, waiting keys (and reruns
 * asked for by triggers during runs) still run, delayed retries and requeues
 * are dropped, and then the output completes. Outcomes of those last runs
 * still say `error`, `requeue` or `requeue_after`; the rerun they asked for
 * does not happen. When the input errors, the output errors at once.
 *
 * When `stop` first emits, the queue winds down without starting anything:
 * waiting keys and delayed reruns are dropped (their failure counts
 * forgotten), the input is unsubscribed, runs in flight finish and their
 * outcomes are emitted, but no rerun follows them (neither the one an
 * outcome asks for nor one a trigger during the run asked for); then the
 * output completes, at once if nothing was in flight. Runs 3 frames,
 * concurrency 1:
 * ```
 * keys:     -ab-c
 * stop:     ---s
 * runs:      [a]
 * outcomes: ----(a|)
 * ```
 * `b` was waiting and never runs; `c` is never read. A grace period is a
 * `takeUntil(stop.pipe(delay(grace)))` after the operator: at the deadline
 * it unsubscribes, which aborts the runs still in flight.
 *
 * Unsubscribing, or an error of the output, aborts every run in flight
 * through its `ctx.signal`, unsubscribes observable reconciles and cancels
 * every timer. The output errors when the input errors, when `stop` errors,
 * and when `rateLimiter.when` or `rateLimiter.forget` throws (an Error naming
 * the call and the key, with the thrown value as `cause`): a limiter that
 * cannot answer leaves the queue no delay to keep its promises by.
 *
 * Caveats:
 * - A run that times out is over for the queue: the key may run again while
 *   a promise-based reconcile that ignores `ctx.signal` is still working.
 *   Pass the signal on to every request.
 * - A key that is not a non-empty string errors the output (a programming
 *   error, such as piping deltas instead of keys).
 * - Time (run durations, delays, timeouts) comes from `scheduler` only.
 *
 * Why it is written against the subscriber rather than composed from
 * `groupBy`, an exhaust-with-trailing map and `retry`: one key's state spans
 * all of those stages at once (a trigger during a backoff delay must cancel
 * the delay; a group may end only when no run, no trailing trigger and no
 * delay is pending; waiting keys of all groups share one FIFO of workers),
 * so a composition has to pass that state between operators through side
 * channels. And `groupBy` that releases idle keys builds and tears down a
 * group, a subject and inner subscriptions each time a key goes idle and
 * comes back: `npm run bench:storm` measures `groupBy` + `exhaustMap` alone
 * at about an eighth of this queue's rate (0.4 M against 3.5 M keys/s on an
 * idle machine), and this queue faster than a plain `mergeMap`, on the same
 * keys. The state lives in a `KeyQueue` (`keyQueue.ts`): one small object
 * per active key, a Map and a linked FIFO, changed only by pure steps that
 * are tested on their own; this operator is the shell that runs the
 * reconciles, timers and subscriptions those steps call for, all released on
 * teardown.
 *
 * @see exhaustMap, which drops the trigger that comes during a run and so
 * loses the last change: the trap this operator exists to avoid.
 */
export function reconcileByKey(reconcile: Reconciler, options: ReconcileOptions = {}): OperatorFunction<KeyTrigger, ReconcileOutcome> {
  if (typeof reconcile !== 'function') {
    throw new TypeError(`reconcileByKey needs a reconcile function, got ${reconcile === null ? 'null' : typeof reconcile}`);
  }
  const { timeout, maxRetries } = options;
  const aging = options.aging ?? DEFAULT_AGING;
  if (!(typeof aging === 'number' && aging >= 0 && aging < Infinity)) {
    throw new RangeError(`reconcileByKey aging must be a finite number of ms >= 0, got ${String(aging)}`);
  }
  const concurrency = options.concurrency ?? 1;
  requirePositive('concurrency', concurrency, true);
  requirePositive('timeout', timeout, false);
  if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0)) {
    throw new RangeError(`reconcileByKey maxRetries must be an integer >= 0, got ${String(maxRetries)}`);
  }
  const scheduler = options.scheduler ?? asyncScheduler;
  const logger = options.logger ?? defaultLogger({ part: 'reconcileByKey' });

  return (source) =>
    new Observable<ReconcileOutcome>((subscriber) => {
      const queue = new KeyQueue<RunContext, Subscription>({ concurrency, maxRetries, timeouts: timeout !== undefined, aging });
      const shell = new Workqueue(subscriber, queue, reconcile, {
        limiter: options.rateLimiter ?? defaultControllerRateLimiter(scheduler),
        observer: options.observer === undefined ? undefined : guardObserver(options.observer, logger),
        scheduler,
        clock: options.clock ?? (() => scheduler.now()),
        logger,
        timeout,
      });
      subscriber.add(() => shell.teardown());
      options.inspect?.({
        get keys() {
          return queue.keys;
        },
        get waiting() {
          return queue.waiting;
        },
        get running() {
          return queue.running;
        },
        get delayed() {
          return queue.delayed;
        },
      });
      shell.subscribe(source, options.stop);
    });
}

type QueuedKey = KeyEntry<RunContext, Subscription>;

interface ShellSettings {
  readonly limiter: RateLimiter;
  readonly observer: Required<WorkqueueObserver> | undefined;
  readonly scheduler: SchedulerLike;
  /** Times for durations only; waits go through `scheduler`. */
  readonly clock: () => number;
  readonly logger: Logger;
  readonly timeout: number | undefined;
}

/** No rerun asked for (a delay of 0 is a rerun at once). */
const NO_RERUN = -1;

/**
 * The effects of one subscription of `reconcileByKey`: reads the input and
 * `stop`, calls the reconcile, arms and cancels timers, asks the rate
 * limiter, feeds the observer and emits outcomes, each as the `KeyQueue`'s
 * steps call for.
 */
class Workqueue {
  /** Torn down: nothing may start or be emitted any more. */
  private closed = false;
  /**
   * Inside `pump`. Runs that finish synchronously call it again; the flag
   * turns those calls into more turns of its loop instead of a recursion as
   * deep as the queue.
   */
  private pumping = false;
  private input: Subscriber<KeyTrigger> | undefined;
  private stopSubscription: Subscription | undefined;

  constructor(
    private readonly subscriber: Subscriber<ReconcileOutcome>,
    private readonly queue: KeyQueue<RunContext, Subscription>,
    private readonly reconcile: Reconciler,
    private readonly settings: ShellSettings,
  ) {}

  subscribe(source: Observable<KeyTrigger>, stop: ObservableInput<unknown> | undefined): void {
    if (this.closed) return;
    // `stop` first, as takeUntil does: one that emits at once means the input is never read.
    if (stop !== undefined) {
      const subscription = from(stop).subscribe({ next: () => this.stop(), error: (err: unknown) => this.subscriber.error(err) });
      if (this.queue.mode === 'stopping' || this.closed) subscription.unsubscribe();
      else this.stopSubscription = subscription;
    }
    if (this.closed || this.queue.mode === 'stopping') return;
    // Subscribed through a wrapper to hold the subscriber the source sees:
    // unsubscribing it stops a synchronous source mid-loop, which a
    // Subscription returned after the loop could not.
    new Observable<KeyTrigger>((inner) => {
      this.input = inner;
      return source.subscribe(inner);
    }).subscribe({
      next: this.trigger,
      error: (err: unknown) => this.subscriber.error(err),
      complete: () => this.inputComplete(),
    });
  }

  private readonly trigger = (value: KeyTrigger): void => {
    if (this.closed) return;
    let key = value as ObjectKey;
    let priority = NORMAL_PRIORITY;
    if (typeof value !== 'string') {
      key = (value as Partial<PrioritizedKey> | null)?.key as ObjectKey;
      priority = (value as Partial<PrioritizedKey> | null)?.priority as number;
      if (typeof priority !== 'number' || !Number.isFinite(priority)) key = '';
    }
    if (typeof key !== 'string' || key === '') {
      this.subscriber.error(
        new TypeError(`reconcileByKey expects object keys ("namespace/name" or "name") or { key, priority }, got ${describeKey(value)}`),
      );
      return;
    }
    const { queue, settings } = this;
    const now = settings.clock();
    const e = queue.trigger(key, now, !this.pumping, priority);
    if (e === undefined) return; // it coalesced into the pending run
    switch (e.phase) {
      case 'running':
        settings.observer?.added(key);
        // Not dirty: it found a free worker at once, and starts without ever counting in the depth.
        // Dirty: it runs once more when this run ends.
        if (!e.dirty) this.start(e);
        return;
      case 'delayed': // the earliest pending run wins: now beats the delay
        queue.wake(e, now)?.unsubscribe();
        return this.queued(e);
      case 'waiting':
        if (e.moved !== undefined) {
          // It was waiting already, and moved up to this trigger's priority: no add, the same depth.
          if (settings.observer !== undefined) {
            settings.observer.priorityDepth(e.moved, queue.waitingAt(e.moved));
            settings.observer.priorityDepth(e.priority, queue.waitingAt(e.priority));
          }
          return;
        }
        this.queued(e);
    }
  };

  /** A key entered the queue of waiting keys. */
  private queued(e: QueuedKey): void {
    const { observer } = this.settings;
    if (observer !== undefined) {
      observer.added(e.key);
      observer.waiting(e.key);
      this.depthChanged(e.priority);
    }
    this.pump();
  }

  /** Tells the observer the depth, over all and at `priority`. */
  private depthChanged(priority: number): void {
    const { observer } = this.settings;
    if (observer === undefined) return;
    observer.depth(this.queue.waiting);
    observer.priorityDepth(priority, this.queue.waitingAt(priority));
  }

  /** Starts waiting keys while workers are free. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      const { queue, settings } = this;
      while (!this.closed && queue.waiting > 0 && queue.running < queue.concurrency) {
        const e = queue.take(settings.clock());
        if (e === undefined) break;
        this.depthChanged(e.priority);
        this.start(e);
      }
    } finally {
      this.pumping = false;
    }
  }

  private start(e: QueuedKey): void {
    const { observer, timeout, scheduler } = this.settings;
    if (observer !== undefined) {
      observer.activeWorkers(this.queue.running);
      observer.started(e.key, e.waited, e.attempt);
      if (this.closed) return; // the observer unsubscribed the pipeline
    }
    const ctx = new RunContext(e.key, e.attempt);
    e.run = ctx;
    startRun(this.reconcile, ctx, this.report);
    // Finished during the call, or the reconcile unsubscribed the pipeline (which aborted it).
    if (this.closed || e.run !== ctx) return;
    if (timeout !== undefined) this.queue.arm(e, scheduler.schedule(this.expire, timeout, e));
  }

  private readonly report: RunReport = (ctx, failed, value) => {
    if (this.closed) return;
    const e = this.queue.get(ctx.key);
    // Late: the run timed out, or the pipeline moved on.
    if (e === undefined || e.run !== ctx) return;
    this.finish(e, failed, value);
  };

  private readonly expire = (e?: QueuedKey): void => {
    const { timeout } = this.settings;
    const ctx = e?.run;
    if (e === undefined || ctx === undefined || this.closed || timeout === undefined) return;
    this.queue.disarm(e); // it has fired
    const error = new ReconcileTimeoutError(e.key, timeout);
    ctx.abort(error);
    // Abort listeners run synchronously and may have ended the run already.
    if (e.run === ctx) this.finish(e, true, error);
  };

  private readonly due = (e?: QueuedKey): void => {
    if (e === undefined || this.closed || e.phase !== 'delayed' || this.queue.get(e.key) !== e) return;
    this.queue.wake(e, this.settings.clock()); // its timer is the one firing
    this.queued(e);
  };

  private finish(e: QueuedKey, failed: boolean, value: unknown): void {
    const { queue, settings } = this;
    const { observer, logger } = settings;
    const { key, attempt } = e;
    const now = settings.clock();
    const duration = now - e.since;
    e.run?.release();
    queue.disarm(e)?.unsubscribe(); // the timeout
    observer?.finished(key, duration);

    // What the reconcile's own failure was; a result that is not one is an error of no particular kind.
    const failure = failed ? failureKind(value) : undefined;
    let end: RunEnd = failure === 'terminal' ? 'terminal' : 'failure';
    let error = value;
    let after = NO_RERUN;
    if (!failed && value === undefined) {
      end = 'success'; // most reconciles return nothing: no result to read
    } else if (!failed) {
      const read = readResult(key, value);
      if ('invalid' in read) {
        failed = true;
        error = read.invalid;
      } else if (read.requeueAfter > 0) {
        end = 'requeueAfter';
        after = read.requeueAfter;
      } else {
        end = read.requeue ? 'requeue' : 'success';
      }
    }
    const result = queue.judge(e, end);
    // What the rate limiter hears of it: a delay to count, or the key to forget.
    let delay = after;
    if (result === 'error' || result === 'requeue') delay = this.when(key);
    else this.forget(key);
    if (this.closed) return; // the limiter threw: the output has errored
    const next = queue.finish(e, now, result, delay);
    // Armed before any observer or logger runs: were one of them to
    // unsubscribe or stop the queue, it would find the timer to cancel.
    if (next === 'delayed') queue.arm(e, settings.scheduler.schedule(this.due, delay, e));
    if (observer !== undefined) {
      observer.activeWorkers(queue.running);
      // As client-go's AddAfter and controller-runtime's queue count: every rerun asked for, delayed or
      // rate-limited, unless the queue no longer takes any (it is draining or stopping).
      if (next !== 'dropped' && (result === 'error' || result === 'requeue' || result === 'requeue_after')) observer.retried(key);
    }
    if (result === 'error') {
      // A retry is routine: its message at warn, its stack once per run of failures (then at debug), not a page of stacks per retry.
      const { message, stack } = failureText(error);
      const retryInMs = next === 'again' ? 0 : delay;
      logger.warn({ key, attempt, retryInMs, err: message, ...(attempt === 0 && stack !== undefined ? { stack } : {}) }, 'reconcile failed; will retry');
      if (attempt > 0 && stack !== undefined) logger.debug({ key, attempt, stack }, 'reconcile failed: the stack');
    } else if (result === 'dropped') {
      logger.error(
        { key, attempt, err: error },
        end === 'terminal' ? 'reconcile failed with a TerminalError; not retried until the next trigger' : `reconcile failed after ${attempt} retries; dropping the key`,
      );
    }
    const outcome: ReconcileOutcome = failed
      ? { key, result, error, ...(failure !== undefined ? { failure } : {}), attempt, duration }
      : { key, result, attempt, duration };
    observer?.ended(outcome, after > 0 ? after : undefined);
    switch (next) {
      case 'queued': // a rerun without delay: it enters the queue again
        observer?.added(key);
        observer?.waiting(key);
        this.depthChanged(e.priority);
        break;
      case 'again': // triggered during the run: counted as added then
        observer?.waiting(key);
        this.depthChanged(e.priority);
        break;
      case 'delayed':
        observer?.delayed(key, delay, result === 'requeue_after' ? 'requeueAfter' : result === 'requeue' ? 'requeue' : 'error');
        break;
      case 'idle':
        observer?.idle(key);
        break;
      case 'dropped':
        observer?.idle(key);
        this.forget(key);
        if (this.closed) return;
        logger.debug({ key, result }, `${queue.mode === 'stopping' ? 'stopping' : 'input completed'}: the rerun this outcome asks for is dropped`);
    }

    this.subscriber.next(outcome);
    if (queue.done) this.subscriber.complete();
    else this.pump();
  }

  private inputComplete(): void {
    for (const e of this.queue.complete()) {
      e.timer?.unsubscribe();
      this.settings.observer?.idle(e.key);
      if (!this.closed) this.forget(e.key);
      this.settings.logger.debug({ key: e.key }, 'input completed: dropping a delayed rerun');
    }
    if (!this.closed && this.queue.done) this.subscriber.complete();
  }

  private stop(): void {
    if (this.closed || this.queue.mode === 'stopping') return;
    this.stopSubscription?.unsubscribe();
    this.input?.unsubscribe();
    const { queue, settings } = this;
    const waiting = queue.waiting;
    const lanes = queue.waitingPriorities();
    const dropped = queue.stop();
    if (waiting > 0) settings.observer?.depth(0);
    for (const priority of lanes) settings.observer?.priorityDepth(priority, 0);
    for (const e of dropped) {
      e.timer?.unsubscribe();
      settings.observer?.idle(e.key);
      if (!this.closed) this.forget(e.key);
    }
    settings.logger.debug({ dropped: dropped.length, running: queue.running }, 'stopping: dropped waiting and delayed keys');
    if (!this.closed && queue.done) this.subscriber.complete();
  }

  teardown(): void {
    this.closed = true;
    this.input?.unsubscribe();
    this.stopSubscription?.unsubscribe();
    const { queue, settings } = this;
    const { waiting, running } = queue;
    const lanes = queue.waitingPriorities();
    for (const e of queue.clear()) {
      e.timer?.unsubscribe();
      e.run?.abort();
      settings.observer?.idle(e.key);
      if (e.attempt > 0) {
        try {
          settings.limiter.forget(e.key);
        } catch (err) {
          // The output has ended: there is no one left to tell but the log.
          settings.logger.error({ key: e.key, err: String(err) }, 'rateLimiter.forget threw while the queue was torn down');
        }
      }
    }
    if (settings.observer !== undefined) {
      if (waiting > 0) settings.observer.depth(0);
      for (const priority of lanes) settings.observer.priorityDepth(priority, 0);
      if (running > 0) settings.observer.activeWorkers(0);
    }
  }

  /** `rateLimiter.when(key)`; a throw errors the output (and answers NO_RERUN). */
  private when(key: ObjectKey): number {
    try {
      return this.settings.limiter.when(key);
    } catch (err) {
      this.limiterThrew('when', key, err);
      return NO_RERUN;
    }
  }

  /** `rateLimiter.forget(key)`; a throw errors the output. */
  private forget(key: ObjectKey): void {
    try {
      this.settings.limiter.forget(key);
    } catch (err) {
      this.limiterThrew('forget', key, err);
    }
  }

  private limiterThrew(method: 'when' | 'forget', key: ObjectKey, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.subscriber.error(new Error(`rateLimiter.${method}(${JSON.stringify(key)}) threw: ${message}`, { cause: err }));
  }
}

/** A failure's message and, for an Error, its stack, as log fields. */
function failureText(error: unknown): { message: string; stack: string | undefined } {
  if (error instanceof Error) return { message: error.message, stack: error.stack };
  return { message: String(error), stack: undefined };
}
