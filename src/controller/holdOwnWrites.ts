import { concatMap, defer, from, Observable, of, type ObservableInput, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { Logger } from '../logger.js';
import type { ReconcileOutcome } from '../operators/reconcileByKey.js';
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

/** The two ends of the hold: around the workqueue, and around the reconcile inside it. */
export interface OwnWritesHold {
  /** The workqueue, with its input held: keys wait (without a worker) until their writes are seen. */
  around(queue: OperatorFunction<ObjectKey, ReconcileOutcome>): OperatorFunction<ObjectKey, ReconcileOutcome>;
  /** The reconcile, marking runs as started, and making a rerun the queue starts on its own (a retry, a requeue) wait too. */
  reconcile(reconcile: Reconciler): Reconciler;
}

/** A key held back from the queue: by its run in flight, or by its writes, with the timer of its timeout. */
interface Held {
  timer: Subscription | undefined;
}

/**
 * Read-your-own-writes around a workqueue: a key whose run wrote an object
 * (see `OwnWrites`) does not run again until the caches have seen those
 * writes, or its timeout has passed; then it runs anyway, and a warning
 * names the key and the objects still unseen.
 *
 * Triggers of a key whose writes are unseen wait here, before the queue,
 * so that the wait takes no worker. Triggers that come while the key's run
 * is in flight wait here too, until the run's outcome: the run may still
 * write, and the queue would start the rerun the moment the run ends. Once
 * the writes are seen (or at once, when there were none), the key goes on to
 * the queue, once however many triggers came; the queue's rules hold from
 * there. A rerun the queue starts on its own (a retry, a requeue) waits
 * inside its run instead.
 *
 * Written keys, run 2 frames, each run writing `a`'s object, which the
 * cache shows at 6:
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
  const running = new Set<ObjectKey>();
  /** The gate of the queue subscribed now (one at a time: one per leadership term). */
  let gate: Gate | undefined;
  /** Runs waiting for their key's writes, each to be started when they are seen. */
  const waiting = new Map<ObjectKey, () => void>();

  writes.listen((key, how, unseen) => {
    const held = gate?.release(key) === true;
    const run = waiting.get(key);
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

  class Gate {
    private readonly held = new Map<ObjectKey, Held>();
    private completed = false;

    constructor(private readonly out: { next(key: ObjectKey): void; complete(): void }) {}

    trigger(key: ObjectKey): void {
      const held = this.held.get(key);
      if (held !== undefined) return; // it goes on once, when released
      // A run waiting for its writes has not read the cache yet: it serves this trigger.
      if (waiting.has(key)) return;
      if (running.has(key)) this.held.set(key, { timer: undefined });
      else if (writes.pending(key)) this.held.set(key, { timer: giveUpAt(key) });
      else this.out.next(key);
    }

    /** The run of `key` ended: a trigger held meanwhile goes on, unless its writes are still unseen. */
    ended(key: ObjectKey): void {
      const held = this.held.get(key);
      if (held === undefined) return;
      if (writes.pending(key)) held.timer ??= giveUpAt(key);
      else this.release(key);
    }

    /** Lets a held key go on to the queue; whether it was held. */
    release(key: ObjectKey): boolean {
      const held = this.held.get(key);
      if (held === undefined || running.has(key)) return false;
      this.held.delete(key);
      held.timer?.unsubscribe();
      this.out.next(key);
      if (this.completed && this.held.size === 0) this.out.complete();
      return true;
    }

    complete(): void {
      this.completed = true;
      if (this.held.size === 0) this.out.complete();
    }

    close(): void {
      for (const held of this.held.values()) held.timer?.unsubscribe();
      this.held.clear();
    }
  }

  return {
    around: (queue) => (triggers) =>
      defer(() => {
        let current: Gate | undefined;
        const input = new Observable<ObjectKey>((subscriber) => {
          current = gate = new Gate(subscriber);
          const self = current;
          running.clear(); // runs of an earlier term were aborted with it
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
        });
        return input.pipe(
          queue,
          (outcomes) =>
            new Observable<ReconcileOutcome>((subscriber) =>
              outcomes.subscribe({
                next: (outcome) => {
                  running.delete(outcome.key);
                  // The outcome first: a held key may start its next run at once, and that run comes after it.
                  subscriber.next(outcome);
                  current?.ended(outcome.key);
                },
                error: (err: unknown) => subscriber.error(err),
                complete: () => subscriber.complete(),
              }),
            ),
        );
      }),
    reconcile: (reconcile) => (key, ctx) => {
      running.add(key);
      if (!writes.pending(key)) return reconcile(key, ctx);
      // A rerun the queue started on its own: it waits for the writes inside its run.
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

/** A reconcile's return, as an Observable of its result (a promise may resolve to an `ObservableInput`). */
function resultOf(value: unknown): ObservableInput<unknown> {
  if (value === null || typeof value !== 'object') return of(value);
  if (typeof (value as PromiseLike<unknown>).then === 'function') return from(value as PromiseLike<unknown>).pipe(concatMap(resultOf));
  return isObservableInput(value) ? value : of(value);
}
