import { concatMap, defer, from, Observable, of, type ObservableInput, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { Logger } from '../logger.js';
import { NORMAL_PRIORITY, type KeyTrigger, type ReconcileOutcome } from '../operators/reconcileByKey.js';
import { isObservableInput, type Reconciler } from '../operators/reconciler.js';
import type { ObjectKey } from '../types.js';
import type { OwnWrites } from './ownWrites.js';

/** What `holdOwnWrites` needs besides the writes. */
export interface HoldOwnWritesOptions {
  readonly scheduler: SchedulerLike;
  readonly logger: Logger;
  /** Told of each key that waited for its writes, as it goes on: they were seen, or the timeout passed (the counter). */
  readonly waited?: (result: 'seen' | 'timeout') => void;
}

/** The two ends of the hold: before the workqueue, and around the reconcile inside it. */
export interface OwnWritesHold {
  /** The workqueue, its input held: a key with unseen writes waits here (without a worker) until they are seen. */
  around(queue: OperatorFunction<KeyTrigger, ReconcileOutcome>): OperatorFunction<KeyTrigger, ReconcileOutcome>;
  /** The reconcile, made to wait for its key's unseen writes before it reads the cache (a rerun the queue starts itself). */
  reconcile(reconcile: Reconciler): Reconciler;
}

/**
 * Read-your-own-writes around a workqueue: a key whose run wrote an object
 * (see `OwnWrites`) does not run again until the caches have seen those
 * writes, or its timeout has passed; then it runs anyway, and a warning
 * names the key and the objects still unseen.
 *
 * Two places hold a key, one for each way a rerun comes:
 * - A trigger of a key whose writes are unseen waits before the queue, so
 *   that the wait takes no worker; the key goes on once the writes are seen,
 *   once however many triggers came. Most reruns come so: the run's own
 *   writes, come back through the watch, trigger it after it ended.
 * - A rerun the queue starts itself (a retry, a requeue, or a trigger that
 *   came during the run before it wrote) waits inside its run, before the
 *   reconcile is called: it holds its worker meanwhile. A trigger that comes
 *   while it waits is served by it (the reconcile has not read the cache yet).
 * Nothing is tracked for a run that writes nothing: a queue whose runs do not
 * write pays three size checks per trigger and one per run.
 *
 * Written keys, each run writing `a`'s object, which the cache shows at 6:
 * ```
 * keys:     -a-a---b--
 * seen:     ------s---
 * to queue: -a----ab--      (the second a waited for its write; b never waits)
 * ```
 * When the input completes, held keys still go on (seen or timed out)
 * before the output of the hold completes.
 */
export function holdOwnWrites(writes: OwnWrites, options: HoldOwnWritesOptions): OwnWritesHold {
  const { scheduler, logger } = options;
  /** The gate of the queue subscribed now (one at a time: one per leadership term). */
  let gate: Gate | undefined;
  /** Runs waiting for their key's writes, each started when they are seen. */
  const waiting = new Map<ObjectKey, () => void>();

  writes.listen((key, how, unseen) => {
    const held = gate?.release(key) === true;
    const run = waiting.size === 0 ? undefined : waiting.get(key);
    if (run !== undefined) {
      waiting.delete(key);
      run();
    }
    if (!held && run === undefined) return;
    if (how === 'timeout') {
      logger.warn({ key, objects: unseen, timeoutMs: writes.timeout }, `own writes not seen in the cache within ${writes.timeout} ms: reconciling ${key} anyway`);
    }
    options.waited?.(how);
  });

  const giveUpAt = (key: ObjectKey): Subscription | undefined => {
    const deadline = writes.deadline(key);
    if (deadline === undefined || deadline === Infinity) return undefined;
    return scheduler.schedule(() => writes.giveUp(key), Math.max(0, deadline - scheduler.now()));
  };

  /** The keys one subscription of the queue holds back, each with the timer of its timeout. */
  class Gate {
    /** Each held key's timeout and the trigger it goes on with (the most urgent of those that came). */
    private readonly held = new Map<ObjectKey, { timer: Subscription | undefined; trigger: KeyTrigger }>();
    private completed = false;

    constructor(private readonly out: { next(trigger: KeyTrigger): void; complete(): void }) {}

    trigger(trigger: KeyTrigger): void {
      const key = typeof trigger === 'string' ? trigger : trigger.key;
      // The sizes first: on a busy queue almost no key is held or waiting.
      if (this.held.size > 0) {
        const hold = this.held.get(key);
        if (hold !== undefined) {
          // It goes on once, when released, as urgent as the most urgent trigger that came meanwhile.
          if (priorityOf(trigger) > priorityOf(hold.trigger)) hold.trigger = trigger;
          return;
        }
      }
      // A run waiting for its writes has not read the cache yet: it serves this trigger.
      if (waiting.size > 0 && waiting.has(key)) return;
      if (writes.pending(key)) this.held.set(key, { timer: giveUpAt(key), trigger });
      else this.out.next(trigger);
    }

    /** Lets a held key go on to the queue; whether it was held. */
    release(key: ObjectKey): boolean {
      const hold = this.held.size === 0 ? undefined : this.held.get(key);
      if (hold === undefined) return false;
      hold.timer?.unsubscribe();
      this.held.delete(key);
      this.out.next(hold.trigger);
      if (this.completed && this.held.size === 0) this.out.complete();
      return true;
    }

    complete(): void {
      this.completed = true;
      if (this.held.size === 0) this.out.complete();
    }

    close(): void {
      for (const { timer } of this.held.values()) timer?.unsubscribe();
      this.held.clear();
    }
  }

  return {
    around: (queue) => (triggers) =>
      new Observable<KeyTrigger>((subscriber) => {
        const self = new Gate(subscriber);
        gate = self;
        const subscription = triggers.subscribe({
          next: (key) => self.trigger(key),
          error: (err: unknown) => subscriber.error(err),
          complete: () => self.complete(),
        });
        return () => {
          subscription.unsubscribe();
          self.close();
          if (gate === self) gate = undefined;
        };
      }).pipe(queue),
    reconcile: (reconcile) => (key, ctx) => {
      if (!writes.pending(key)) return reconcile(key, ctx);
      return new Observable<unknown>((subscriber) => {
        const start = (): void => {
          timer?.unsubscribe();
          subscriber.add(defer(() => resultOf(reconcile(key, ctx))).subscribe(subscriber));
        };
        waiting.set(key, start);
        // Called back only later, from the scheduler or an event: `start` never sees it unset.
        const timer = giveUpAt(key);
        return () => {
          timer?.unsubscribe();
          if (waiting.get(key) === start) waiting.delete(key);
        };
      }) as ObservableInput<void>;
    },
  };
}

function priorityOf(trigger: KeyTrigger): number {
  return typeof trigger === 'string' ? NORMAL_PRIORITY : trigger.priority;
}

/** A reconcile's return, as an Observable of its result (a promise may resolve to an `ObservableInput`). */
function resultOf(value: unknown): ObservableInput<unknown> {
  if (value === null || typeof value !== 'object') return of(value);
  if (typeof (value as PromiseLike<unknown>).then === 'function') return from(value as PromiseLike<unknown>).pipe(concatMap(resultOf));
  return isObservableInput(value) ? value : of(value);
}
