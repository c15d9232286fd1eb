import type { ObjectKey } from '../types.js';
import { ChurnMap } from './churnMap.js';
import { DEFAULT_AGING, NORMAL_PRIORITY, PriorityLanes, type LaneEntry } from './priorityLanes.js';

/**
 * How one run ended:
 * - `success`: done until the next trigger; the key's failure count is forgotten.
 * - `error`: it failed (threw, rejected, errored, timed out, or returned
 *   something that is not a result); it runs again after the rate limiter's delay.
 * - `requeue`: it asked for `requeue: true`; it runs again after the rate limiter's delay.
 * - `requeue_after`: it asked for `requeueAfter`; it runs again after that
 *   delay, and its failure count is forgotten.
 * - `dropped`: it failed with a `TerminalError`, or with `maxRetries`
 *   retries behind it; it is not retried, and its failure count is forgotten.
 */
export type ReconcileOutcomeResult = 'success' | 'error' | 'requeue' | 'requeue_after' | 'dropped';

/** What a run came to, as the shell read it, before the queue's policy judges it. */
export type RunEnd = 'success' | 'failure' | 'terminal' | 'requeue' | 'requeueAfter';

/** Where a key with state is: waiting for a worker, running, or waiting out a delay. Idle keys have no state. */
export type Phase = 'waiting' | 'running' | 'delayed';

/**
 * Where a key goes once its run has ended (`KeyQueue.finish`):
 * - `idle`: nothing more to do; its state is gone.
 * - `again`: it was triggered during the run and now waits for its next run.
 * - `queued`: it asked for a rerun without delay and now waits for it.
 * - `delayed`: it asked for a rerun after a delay: the shell arms a timer and
 *   calls `wake` when it fires.
 * - `dropped`: it asked for a rerun that will not happen, because the input
 *   has completed or the queue is stopping; its state is gone and the shell
 *   forgets its rate-limiter count.
 */
export type AfterRun = 'idle' | 'again' | 'queued' | 'delayed' | 'dropped';

/**
 * What the queue is doing as a whole:
 * - `open`: reading its input.
 * - `draining`: the input completed; waiting keys and the reruns of keys
 *   triggered during their runs still run; no delayed rerun is kept.
 * - `stopping`: `stop` came; only the runs in flight finish, nothing else
 *   starts or is kept.
 */
export type QueueMode = 'open' | 'draining' | 'stopping';

/** What the queue holds for one key. The shell reads it; only the queue changes the fields but `run`. */
export interface KeyEntry<R, T> {
  readonly key: ObjectKey;
  readonly phase: Phase;
  /** Running, and triggered since it started: it runs once more when this run ends. */
  readonly dirty: boolean;
  /** Rate-limited reruns in a row; the next run's `ctx.attempt`. */
  readonly attempt: number;
  /** When it entered the queue (waiting), started (running), or began its delay (delayed). */
  readonly since: number;
  /** How long its current run waited for a worker (0 when it found one at once). */
  readonly waited: number;
  /** The shell's handle on the run in flight, set by the shell when the run starts; cleared by `finish`. */
  run: R | undefined;
  /** The shell's timer: the delay while delayed, the timeout while running. Set with `arm`, taken back with `disarm`. */
  readonly timer: T | undefined;
  /**
   * The priority of its pending run (waiting, delayed) or of its run
   * (running): the highest of the triggers that asked for it, and a rerun
   * the run asks for itself (a retry, a requeue) keeps the run's.
   */
  readonly priority: number;
  /**
   * Set when `trigger` returns a waiting entry that was waiting already:
   * the trigger's higher priority moved it up, out of the lane of this
   * priority. Undefined otherwise.
   */
  readonly moved: number | undefined;
}

interface Entry<R, T> extends KeyEntry<R, T>, LaneEntry {
  phase: Phase;
  dirty: boolean;
  attempt: number;
  since: number;
  waited: number;
  timer: T | undefined;
  priority: number;
  /** While dirty: the highest priority of the triggers during the run. */
  dirtyPriority: number;
  moved: number | undefined;
}

/**
 * An object literal, not a class instance: with class fields, the queue of
 * 100,000 distinct keys in `npm run bench:storm` drained 2.5 times slower.
 */
function newEntry<R, T>(key: ObjectKey, now: number, priority: number): Entry<R, T> {
  return {
    key,
    phase: 'waiting',
    dirty: false,
    attempt: 0,
    since: now,
    waited: 0,
    next: undefined,
    prev: undefined,
    run: undefined,
    timer: undefined,
    priority,
    dirtyPriority: priority,
    rankAt: now,
    seq: 0,
    moved: undefined,
  };
}

export interface KeyQueueOptions {
  /** Runs in flight at most (a positive integer, or Infinity). */
  concurrency: number;
  /** Rate-limited reruns in a row after which a failing key is dropped (default: never). */
  maxRetries?: number;
  /** Whether running keys carry a timeout timer (only used to check invariants). */
  timeouts?: boolean;
  /**
   * Ms a waiting key takes to gain 100 points of priority (see
   * `PriorityLanes`; default `DEFAULT_AGING`, 0 for arrival order alone).
   */
  aging?: number;
}

/**
 * The state of a workqueue, without the workqueue's effects: which keys wait,
 * run or wait out a delay, in what order they start, and what a finished run
 * turns into. It calls nothing and reads no clock: every method takes the
 * time it needs as `now` and returns what the caller (the shell, the operator
 * `reconcileByKey`) must do: start the key that `take` returns, arm or cancel
 * the timer it names, ask the rate limiter, emit the outcome. A method never
 * runs user code, so a step either completes or was never taken, and the
 * invariants below hold between any two calls.
 *
 * Invariants (`checkInvariants` asserts them; the property test calls it
 * after every step):
 * - A key has an entry only while it is waiting, running or delayed; an idle
 *   key has none (memory follows the active keys, not the keys ever seen).
 * - The lanes (`PriorityLanes`, one FIFO per priority) hold exactly the
 *   waiting entries, each once, in the lane of its `priority`, in the order
 *   they joined it; `next` and `prev` are set only on waiting entries;
 *   `moved` only on waiting ones.
 * - `waiting`, `running` and `delayed` equal the number of entries in each
 *   phase, and `running ≤ concurrency`.
 * - `dirty` is set only on a running entry; `run` only on a running entry.
 * - `timer` is set only on a delayed entry (its delay) or a running one
 *   with a timeout; a delayed entry has one once the shell armed it.
 * - `draining`: no entry is delayed. `stopping`: no entry waits, none is
 *   delayed, none is dirty.
 */
export class KeyQueue<R, T> {
  readonly concurrency: number;
  readonly maxRetries: number | undefined;
  readonly #timeouts: boolean;
  readonly #entries = new ChurnMap<Entry<R, T>>();
  readonly #lanes: PriorityLanes<Entry<R, T>>;
  #running = 0;
  #delayed = 0;
  #mode: QueueMode = 'open';

  constructor(options: KeyQueueOptions) {
    this.concurrency = options.concurrency;
    this.maxRetries = options.maxRetries;
    this.#timeouts = options.timeouts ?? false;
    this.#lanes = new PriorityLanes(options.aging ?? DEFAULT_AGING);
  }

  /** Keys with state: waiting, running or delayed. */
  get keys(): number {
    return this.#entries.size;
  }
  get waiting(): number {
    return this.#lanes.size;
  }
  /** Keys waiting at `priority`. */
  waitingAt(priority: number): number {
    return this.#lanes.sizeAt(priority);
  }
  /** The priorities at which keys wait. */
  waitingPriorities(): number[] {
    return this.#lanes.priorities();
  }
  get running(): number {
    return this.#running;
  }
  get delayed(): number {
    return this.#delayed;
  }
  get mode(): QueueMode {
    return this.#mode;
  }
  /** Nothing more will happen: the input completed or `stop` came, and no key has state. */
  get done(): boolean {
    return this.#mode !== 'open' && this.#entries.size === 0;
  }

  get(key: ObjectKey): KeyEntry<R, T> | undefined {
    return this.#entries.get(key);
  }

  /**
   * A trigger of `key` at `priority`. Returns the entry when the queue
   * changed or the shell has to act, else `undefined` (the trigger
   * coalesced into a pending run, or the queue no longer reads its input):
   * - `running`, not `dirty`: the key was idle and found a free worker with
   *   no key waiting ahead of it: the shell starts its run now. Only when
   *   `mayStart` (the shell is not in the middle of starting runs already).
   * - `waiting`, `moved` undefined: the key was idle and entered the queue.
   * - `waiting`, `moved` set: it was waiting, and this trigger's priority
   *   ranks it sooner than its wait so far did: it moved to the end of the
   *   lane of this priority, out of the lane `moved` names.
   * - `running`, `dirty`: it was running and is now marked to run once more.
   * - `delayed`: it is waiting out a delay, unchanged: the earliest pending
   *   run wins, so the shell cancels the timer and calls `wake` now.
   * A pending run's priority is the highest of the triggers that asked for it.
   */
  trigger(key: ObjectKey, now: number, mayStart: boolean, priority: number = NORMAL_PRIORITY): KeyEntry<R, T> | undefined {
    if (this.#mode !== 'open') return undefined;
    const e = this.#entries.get(key);
    if (e === undefined) {
      const fresh = newEntry<R, T>(key, now, priority);
      this.#entries.set(key, fresh);
      if (mayStart && this.#lanes.size === 0 && this.#running < this.concurrency) {
        fresh.phase = 'running';
        this.#running++;
      } else {
        this.#enqueue(fresh, now);
      }
      return fresh;
    }
    switch (e.phase) {
      case 'running':
        if (e.dirty) {
          if (priority > e.dirtyPriority) e.dirtyPriority = priority;
          return undefined;
        }
        e.dirty = true;
        e.dirtyPriority = priority;
        return e;
      case 'delayed':
        if (priority > e.priority) e.priority = priority;
        return e;
      case 'waiting': {
        const from = this.#lanes.raise(e, priority, now);
        if (from === undefined) return undefined;
        e.moved = from;
        return e;
      }
    }
  }

  /**
   * The delay of a key is over (its timer fired, or a trigger came first):
   * it joins the end of the lane of its priority. Does nothing unless the key is delayed.
   * Returns the timer it held, for the shell to cancel if it has not fired.
   */
  wake(entry: KeyEntry<R, T>, now: number): T | undefined {
    const e = entry as Entry<R, T>;
    if (e.phase !== 'delayed' || this.#entries.get(e.key) !== e) return undefined;
    const timer = e.timer;
    e.timer = undefined;
    this.#delayed--;
    this.#enqueue(e, now);
    return timer;
  }

  /**
   * The key that starts next, if a worker is free and the queue may start
   * keys: it leaves the queue and is running from `now`. The shell starts its
   * run (and arms its timeout).
   */
  take(now: number): KeyEntry<R, T> | undefined {
    if (this.#running >= this.concurrency) return undefined;
    const e = this.#lanes.pop();
    if (e === undefined) return undefined;
    e.moved = undefined;
    e.phase = 'running';
    e.waited = now - e.since;
    e.since = now;
    this.#running++;
    return e;
  }

  /** Holds the shell's timer for a delayed key or a running key's timeout. */
  arm(entry: KeyEntry<R, T>, timer: T): void {
    (entry as Entry<R, T>).timer = timer;
  }

  /** Takes back the timer of a key (to cancel it, or because it fired). */
  disarm(entry: KeyEntry<R, T>): T | undefined {
    const e = entry as Entry<R, T>;
    const timer = e.timer;
    e.timer = undefined;
    return timer;
  }

  /**
   * The policy for a run that ended (controller-runtime's `reconcileHandler`):
   * its outcome. `error` and `requeue` ask the rate limiter for the delay of
   * their rerun; `success`, `requeue_after` and `dropped` make it forget the
   * key. A `terminal` failure is dropped whatever its attempt: no retry can fix it.
   */
  judge(entry: KeyEntry<R, T>, end: RunEnd): ReconcileOutcomeResult {
    switch (end) {
      case 'success':
        return 'success';
      case 'requeue':
        return 'requeue';
      case 'requeueAfter':
        return 'requeue_after';
      case 'terminal':
        return 'dropped';
      case 'failure':
        return this.maxRetries !== undefined && entry.attempt >= this.maxRetries ? 'dropped' : 'error';
    }
  }

  /**
   * The run of a key ended with `result` (from `judge`); `delay` is the ms
   * after which it asked to run again (the rate limiter's answer, or its
   * `requeueAfter`), or < 0 for no rerun. Where the key goes: see `AfterRun`.
   * A trigger during the run beats any delay: the key waits for a worker now,
   * at the priority of the triggers during the run (or the run's own, if
   * that is higher and the run asked for a rerun). A rerun the run asks for
   * itself keeps the run's priority, as controller-runtime's controller
   * retains a key's priority when it requeues it.
   * The shell has taken back the run's timeout (`disarm`) first.
   */
  finish(entry: KeyEntry<R, T>, now: number, result: ReconcileOutcomeResult, delay: number): AfterRun {
    const e = entry as Entry<R, T>;
    if (e.phase !== 'running') throw new Error(`KeyQueue.finish: "${e.key}" is not running but ${e.phase}`);
    e.run = undefined;
    this.#running--;
    e.attempt = result === 'error' || result === 'requeue' ? e.attempt + 1 : 0;
    if (e.dirty) {
      e.dirty = false;
      if (delay < 0 || e.dirtyPriority > e.priority) e.priority = e.dirtyPriority;
      this.#enqueue(e, now);
      return 'again';
    }
    if (delay < 0) {
      this.#entries.delete(e.key);
      return 'idle';
    }
    if (this.#mode !== 'open') {
      this.#entries.delete(e.key);
      return 'dropped';
    }
    if (delay === 0) {
      this.#enqueue(e, now);
      return 'queued';
    }
    e.phase = 'delayed';
    e.since = now;
    this.#delayed++;
    return 'delayed';
  }

  /**
   * The input completed: the queue drains. Delayed keys are dropped and
   * returned, for the shell to cancel their timers and forget their counts.
   */
  complete(): KeyEntry<R, T>[] {
    if (this.#mode === 'open') this.#mode = 'draining';
    return this.#delayed === 0 ? [] : this.#drop((e) => e.phase === 'delayed');
  }

  /**
   * `stop` came: no key starts from now on. Waiting and delayed keys are
   * dropped and returned (for the shell to cancel their timers and forget
   * their counts); running keys finish, but their reruns will not happen.
   */
  stop(): KeyEntry<R, T>[] {
    this.#mode = 'stopping';
    for (const e of this.#entries.values()) e.dirty = false;
    return this.#drop((e) => e.phase !== 'running');
  }

  /** Forgets everything (the shell tore down) and returns what was held, for the shell to release. */
  clear(): KeyEntry<R, T>[] {
    const all = [...this.#entries.values()];
    this.#entries.clear();
    this.#lanes.clear();
    for (const e of all) e.next = e.prev = undefined;
    this.#running = this.#delayed = 0;
    return all;
  }

  /** Throws an Error naming the first invariant (see the class comment) that does not hold. */
  checkInvariants(): void {
    const fail = (what: string): never => {
      throw new Error(`KeyQueue invariant broken: ${what}`);
    };
    this.#lanes.check(fail);
    const inFifo = new Set<Entry<R, T>>();
    for (const e of this.#lanes.entries()) {
      if (inFifo.has(e)) fail(`"${e.key}" is twice in the lanes`);
      inFifo.add(e);
      if (e.phase !== 'waiting') fail(`"${e.key}" is in the lanes while ${e.phase}`);
      if (this.#entries.get(e.key) !== e) fail(`"${e.key}" is in the lanes but not in the map`);
    }
    const counts = { waiting: 0, running: 0, delayed: 0 };
    for (const e of this.#entries.values()) {
      const key = e.key;
      if (this.#entries.get(key) !== e) fail(`the entry of "${key}" is not under its key`);
      counts[e.phase]++;
      if (e.phase === 'waiting' && !inFifo.has(e)) fail(`"${key}" waits outside the FIFO`);
      if (e.phase !== 'waiting' && (e.next !== undefined || e.prev !== undefined)) fail(`"${key}" links to another key while ${e.phase}`);
      if (e.phase !== 'waiting' && e.moved !== undefined) fail(`"${key}" says it moved while ${e.phase}`);
      if (!Number.isFinite(e.priority)) fail(`"${key}" has priority ${e.priority}`);
      if (e.dirty && e.phase !== 'running') fail(`"${key}" is dirty while ${e.phase}`);
      if (e.run !== undefined && e.phase !== 'running') fail(`"${key}" holds a run while ${e.phase}`);
      if (e.timer !== undefined && e.phase === 'waiting') fail(`"${key}" holds a timer while waiting`);
      if (e.timer !== undefined && e.phase === 'running' && !this.#timeouts) fail(`"${key}" holds a timer while running without a timeout`);
      if (!(Number.isInteger(e.attempt) && e.attempt >= 0)) fail(`"${key}" has attempt ${e.attempt}`);
    }
    if (inFifo.size !== counts.waiting) fail('the lanes hold an entry that is not in the map');
    if (counts.waiting !== this.#lanes.size) fail(`waiting is ${this.#lanes.size}, but ${counts.waiting} keys wait`);
    if (counts.running !== this.#running) fail(`running is ${this.#running}, but ${counts.running} keys run`);
    if (counts.delayed !== this.#delayed) fail(`delayed is ${this.#delayed}, but ${counts.delayed} keys are delayed`);
    if (this.#running > this.concurrency) fail(`${this.#running} keys run, more than the concurrency ${this.concurrency}`);
    if (this.#mode !== 'open' && this.#delayed > 0) fail(`a key is delayed while ${this.#mode}`);
    if (this.#mode === 'stopping' && this.#lanes.size > 0) fail('a key waits while stopping');
    if (this.#mode === 'stopping' && [...this.#entries.values()].some((e) => e.dirty)) fail('a key is dirty while stopping');
  }

  #enqueue(e: Entry<R, T>, now: number): void {
    e.phase = 'waiting';
    e.since = now;
    e.moved = undefined;
    this.#lanes.push(e, e.priority, now);
  }

  /** Removes the entries that match, out of their lanes. */
  #drop(match: (e: Entry<R, T>) => boolean): KeyEntry<R, T>[] {
    const dropped: KeyEntry<R, T>[] = [];
    for (const e of this.#entries.values()) {
      if (!match(e)) continue;
      if (e.phase === 'waiting') this.#lanes.remove(e);
      else if (e.phase === 'delayed') this.#delayed--;
      e.moved = undefined;
      this.#entries.delete(e.key);
      dropped.push(e);
    }
    return dropped;
  }
}
