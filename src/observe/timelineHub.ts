import { Observable, Subscriber, Subscription, type Observer, type Operator, type SchedulerLike } from 'rxjs';
import type { Logger } from '../logger.js';
import type { DelayReason } from '../operators/workqueueObserver.js';
import type { ReconcileOutcome } from '../operators/reconcileByKey.js';
import type { RunSpans } from './tracing/runTracer.js';
import type { InformerEntry, RunCause, RunEndEntry, TimelineEntry, TriggerCause } from './timeline.js';
import { objectKey, type Delta, type KubeObject, type ListWatchEvent, type ObjectKey } from '../types.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** What a write entry says of its request, besides the run's key and the time. */
export interface WriteFacts {
  /** The client method called (`get`, `create`, `patchMerge`, ...): the entry's `verb`. */
  readonly verb: string;
  /** The kind addressed, qualified by its API group (`Deployment.apps`, `ConfigMap`): the entry's `resource`. */
  readonly resource: string;
  /** The key of the object addressed; undefined for a `list`, and the entry then has no `objectKey`. */
  readonly objectKey: ObjectKey | undefined;
  /** The HTTP status, or 0 when no answer came. */
  readonly code: number;
  /** What the method resolved to, or the server's Status of a failure; undefined leaves the entry without `body`. */
  readonly body: unknown;
  /** The error's message when the request failed; undefined when it succeeded. */
  readonly error: string | undefined;
}

/**
 * Where a controller's timeline entries are made and sent (the producer
 * side of `Controller.timeline`). Hot: it reports what the controller does
 * from whenever a subscriber comes, and subscribing starts nothing.
 *
 * Nobody subscribed costs one check: every method below returns at once
 * unless `active`, before it builds anything, and its callers pass what
 * they already hold (keys, numbers, the objects received), so no entry and
 * no closure is made for an event nobody reads. Every entry is built in
 * `publish`'s argument, in the method that checked `active` first.
 *
 * `onActive` is called when the first subscriber comes, with nothing
 * listening before; what it returns is called when the last one leaves
 * (the controller attaches its informer listeners that way).
 */
export class TimelineHub {
  private listeners: Listener[] = [];
  private detach: (() => void) | undefined;
  /** The key of the instant under way, and its time: see `instantOf`. */
  private instantKey: ObjectKey | undefined;
  private instantAt = 0;
  /** Between `trigger` and `triggered`: the trigger's synchronous step is under way. */
  private triggering = false;
  /** The key of a run started in the trigger's step under way, and its start's time: see `runEnd`. */
  private startedKey: ObjectKey | undefined;
  private startedAt = 0;
  /**
   * Each key's cause for its next run (the last trigger, or a retry or
   * requeue the queue scheduled), and each running key's: `ctx.cause`.
   * Kept only while `active`; a key's entries go when it goes idle, so they
   * follow the active keys.
   */
  private readonly nextCauses = new Map<ObjectKey, RunCause>();
  private readonly runCauses = new Map<ObjectKey, RunCause>();
  /** What traces the runs (docs/tracing.md), when the controller does: told of each run as it starts, before its entry is built. */
  tracer: RunSpans | undefined;
  readonly timeline: Observable<TimelineEntry>;

  constructor(
    private readonly name: string,
    private readonly scheduler: SchedulerLike,
    private readonly logger: Logger,
    private readonly onActive: () => () => void,
  ) {
    this.timeline = new GuardedTimeline(logger, (subscriber) => this.join(subscriber), (next, receiver) => this.listen(next, receiver));
  }

  /** Someone is subscribed: entries are worth building. */
  get active(): boolean {
    return this.listeners.length > 0;
  }

  /** One event of an informer's source (`resource` is its store's name). */
  informerEvent(resource: string, event: ListWatchEvent): void {
    if (!this.active) return;
    const at = this.scheduler.now();
    const controller = this.name;
    switch (event.type) {
      case 'Restart':
        return this.publish({ type: 'informer', at, controller, resource, event: 'Restart' });
      case 'Synced':
      case 'Bookmark':
        return this.publish({ type: 'informer', at, controller, resource, event: event.type, resourceVersion: event.resourceVersion });
      default:
        return this.publish(objectEntry(at, controller, resource, event.type, event.object));
    }
  }

  /** A failure of an informer's list or watch. */
  informerFailure(resource: string, failure: { reason: string; code?: number; retryInMs?: number }): void {
    if (!this.active) return;
    this.publish({
      type: 'informer',
      at: this.scheduler.now(),
      controller: this.name,
      resource,
      event: 'Failure',
      error: failure.reason,
      ...(failure.code !== undefined ? { code: failure.code } : {}),
      ...(failure.retryInMs !== undefined ? { retryIn: failure.retryInMs } : {}),
    });
  }

  /**
   * `key` was triggered by `delta` of `resource`, through `via`. The caller
   * hands the key on to the queue next, and calls `triggered` once that
   * returns: what the queue does with the key meanwhile (it waits, or it
   * runs) happens at the trigger's instant (see `instantOf`).
   */
  trigger(key: ObjectKey, via: TriggerCause['via'], resource: string, delta: Delta): void {
    if (!this.active) return;
    // Literals of one shape each, no spreads: a trigger entry is built for every trigger, coalesced or not.
    const cause: TriggerCause = delta.initial === true
      ? { via, resource, delta: delta.type, objectKey: delta.key, initial: true }
      : { via, resource, delta: delta.type, objectKey: delta.key };
    this.publishTrigger(key, cause);
  }

  /**
   * `key` was emitted by the controller's trigger `name` (a channel, a timer,
   * a webhook): as `trigger`, with a cause of its own (`via: 'trigger'`).
   */
  externalTrigger(key: ObjectKey, name: string): void {
    if (!this.active) return;
    this.publishTrigger(key, { via: 'trigger', resource: name, delta: 'Sync', objectKey: key });
  }

  /** Publishes a trigger of `key`, whose instant lasts until `triggered`. */
  private publishTrigger(key: ObjectKey, cause: TriggerCause): void {
    const at = this.scheduler.now();
    this.nextCauses.set(key, cause);
    this.publish({ type: 'trigger', at, controller: this.name, key, cause });
    this.instantKey = key;
    this.instantAt = at;
    this.triggering = true;
  }

  /** The key `trigger` was told of has been handed to the queue, and the queue is done with it for now: its instant is over. */
  triggered(): void {
    this.instantKey = undefined;
    this.triggering = false;
    this.startedKey = undefined;
  }

  /** `key` moved in the queue (to running, it is `runStart`'s entry). */
  queue(key: ObjectKey, state: 'waiting' | 'idle'): void {
    if (!this.active) return;
    if (state === 'idle') {
      this.nextCauses.delete(key);
      this.runCauses.delete(key);
    }
    this.publish({ type: 'queue', at: this.instantOf(key), controller: this.name, key, state });
  }

  /** `key` waits out `delay` ms before its rerun. */
  delayed(key: ObjectKey, delay: number, reason: DelayReason): void {
    if (!this.active) return;
    this.publish({ type: 'queue', at: this.instantOf(key), controller: this.name, key, state: 'delayed', delay, reason });
  }

  /**
   * A run of `key` started, and so the key is running: one `run-start`
   * says both (a queue entry alongside would repeat it, at the same time,
   * for every run). `attempt` is the queue's `ctx.attempt` (from 0): the
   * entry counts from 1. The run's cause (`causeOf`) is the last one told
   * before it; a `tracer` starts the run's span here, and the entry carries
   * its trace ID.
   */
  runStart(key: ObjectKey, attempt: number, queuedMs = 0): void {
    if (!this.active) return;
    const inStep = this.triggering && this.instantKey === key;
    const at = this.instantOf(key);
    this.startedKey = inStep ? key : undefined;
    this.startedAt = at;
    const cause = this.nextCauses.get(key);
    if (cause !== undefined) {
      this.nextCauses.delete(key);
      this.runCauses.set(key, cause);
    } else {
      this.runCauses.delete(key);
    }
    const traceId = this.tracedStart(key, at, attempt + 1, queuedMs);
    this.publish(
      traceId === undefined
        ? { type: 'run-start', at, controller: this.name, key, attempt: attempt + 1 }
        : { type: 'run-start', at, controller: this.name, key, attempt: attempt + 1, traceId },
    );
  }

  /** The tracer's span of a run starting, guarded as a subscriber is: a tracer that throws is logged, and the run goes untraced. */
  private tracedStart(key: ObjectKey, at: number, attempt: number, queuedMs: number): string | undefined {
    if (this.tracer === undefined) return undefined;
    try {
      return this.tracer.runStart(key, at, attempt, queuedMs);
    } catch (err) {
      this.logger.error({ hook: 'tracer', err: messageOf(err) }, 'tracing a run failed; the controller goes on');
      return undefined;
    }
  }

  /** Why the run of `key` under way ran (`ctx.cause`), if the hub was `active` when it was triggered and started. */
  causeOf(key: ObjectKey): RunCause | undefined {
    return this.active ? this.runCauses.get(key) : undefined;
  }

  /**
   * A run ended with `outcome`. A run that started and ended within one
   * trigger's synchronous step (a reconcile that returns at once), in less
   * than a ms by the queue's clock, carries its start's time without a
   * second read of the clock: the scheduler counts whole ms, and would
   * read the same or one more; in virtual time no time passes within a
   * synchronous step at all. Any other run reads the clock, a long
   * synchronous one included.
   */
  runEnd(outcome: ReconcileOutcome, requeueAfter: number | undefined): void {
    if (!this.active) return;
    const at = outcome.key === this.startedKey && outcome.duration < 1 ? this.startedAt : this.scheduler.now();
    this.startedKey = undefined;
    const entry: Mutable<RunEndEntry> = {
      type: 'run-end',
      at,
      controller: this.name,
      key: outcome.key,
      attempt: outcome.attempt + 1,
      duration: outcome.duration,
      result: outcome.result,
    };
    if ('error' in outcome) entry.error = messageOf(outcome.error);
    if (requeueAfter !== undefined) entry.requeueAfter = requeueAfter;
    // The queue reruns a failed or requeued key on its own: that is the next run's cause, unless a trigger came meanwhile.
    const rerun = outcome.result === 'error' ? RETRY : outcome.result === 'requeue' || outcome.result === 'requeue_after' ? REQUEUE : undefined;
    if (rerun !== undefined && !this.nextCauses.has(outcome.key)) this.nextCauses.set(outcome.key, rerun);
    this.publish(entry);
    this.instantKey = outcome.key;
    this.instantAt = at;
  }

  /**
   * The time of a move of `key` in the queue. The clock costs more than
   * building an entry, and some moves happen at the instant of the entry
   * before them, in the same call: a trigger's key starts waiting or
   * running as the queue gets it (`trigger` to `triggered`), and a run's
   * end moves its key to its next state (waiting, delayed or idle). Such a
   * move carries that instant's time; any other reads the clock. The
   * instant ends with its first move: a run that starts at a trigger's
   * instant takes its time, and what the run does then reads the clock.
   */
  private instantOf(key: ObjectKey): number {
    const instant = this.instantKey;
    this.instantKey = undefined;
    return instant === key ? this.instantAt : this.scheduler.now();
  }

  /** The run of `key` made a request through `ctx.client`, and it was answered (or failed). */
  write(key: ObjectKey, facts: WriteFacts): void {
    if (!this.active) return;
    this.publish({
      type: 'write',
      at: this.scheduler.now(),
      controller: this.name,
      key,
      verb: facts.verb,
      resource: facts.resource,
      ...(facts.objectKey !== undefined ? { objectKey: facts.objectKey } : {}),
      code: facts.code,
      ...(facts.body !== undefined ? { body: facts.body } : {}),
      ...(facts.error !== undefined ? { error: facts.error } : {}),
    });
  }

  /** The run of `key` recorded an Event about `regarding`. */
  event(key: ObjectKey, eventType: 'Normal' | 'Warning', reason: string, action: string, note: string | undefined, regarding: ObjectKey | undefined): void {
    if (!this.active) return;
    this.publish({
      type: 'event',
      at: this.scheduler.now(),
      controller: this.name,
      key,
      eventType,
      reason,
      message: note ?? action,
      action,
      ...(regarding !== undefined ? { regarding } : {}),
    });
  }

  /** The controller started or stopped leading. */
  leadership(leading: boolean, identity: string): void {
    if (!this.active) return;
    this.publish({ type: 'leadership', at: this.scheduler.now(), controller: this.name, leading, identity });
  }

  /**
   * Sends one entry to every subscriber, one guarded call each: a
   * subscriber that throws is logged and keeps its place. A plain callback
   * is called here directly, not through a chain of RxJS Subscribers: this
   * runs about five times per reconcile.
   */
  publish(entry: TimelineEntry): void {
    const listeners = this.listeners;
    for (let i = 0; i < listeners.length; i++) {
      const listener = listeners[i] as Listener;
      if (!listener.open) continue; // left during this publish, by a neighbour's hand
      try {
        listener.next.call(listener.receiver, entry);
      } catch (err) {
        this.logger.error({ hook: 'next', err: messageOf(err) }, 'a timeline subscriber threw; the controller goes on');
      }
    }
  }

  /** An operator's or `firstValueFrom`'s Subscriber joins: it gets each entry through its own `next`. */
  private join(subscriber: Subscriber<TimelineEntry>): () => void {
    return this.listen(subscriber.next, subscriber);
  }

  /** `next` is called with each entry, on `receiver`, until the returned function is called. */
  private listen(next: (this: unknown, entry: TimelineEntry) => void, receiver: unknown): () => void {
    const listener: Listener = { next, receiver, open: true };
    const first = this.listeners.length === 0;
    // Copied on change, never in place: one that leaves during `publish` does not skip its neighbour.
    this.listeners = [...this.listeners, listener];
    if (first) {
      // Whatever instant was under way while nobody listened is over, and the causes known then are stale.
      this.triggered();
      this.nextCauses.clear();
      this.runCauses.clear();
      this.detach = this.onActive();
    }
    return () => {
      if (!listener.open) return;
      listener.open = false;
      this.listeners = this.listeners.filter((l) => l !== listener);
      if (this.listeners.length === 0) {
        const detach = this.detach;
        this.detach = undefined;
        detach?.();
      }
    };
  }
}

const RETRY: RunCause = Object.freeze({ via: 'retry' });
const REQUEUE: RunCause = Object.freeze({ via: 'requeue' });

/** One subscriber, as `publish` calls it. */
interface Listener {
  readonly next: (this: unknown, entry: TimelineEntry) => void;
  readonly receiver: unknown;
  /** Cleared when it leaves, so that a `publish` under way skips it from then on, as RxJS skips a closed Subscriber. */
  open: boolean;
}

function objectEntry(at: number, controller: string, resource: string, event: 'Listed' | 'Added' | 'Modified' | 'Deleted', object: KubeObject): InformerEntry {
  const resourceVersion = object.metadata?.resourceVersion;
  let key: ObjectKey | undefined;
  try {
    key = objectKey(object);
  } catch {
    key = undefined; // an object without a name: `deltas()` reports it; the entry still carries the object
  }
  const entry: Mutable<InformerEntry> = { type: 'informer', at, controller, resource, event };
  if (key !== undefined) entry.key = key;
  if (resourceVersion !== undefined) entry.resourceVersion = resourceVersion;
  entry.object = object;
  return entry;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The timeline as its subscribers get it: a callback they pass to
 * `subscribe` that throws is logged on the controller's logger and
 * otherwise ignored (it keeps getting entries), instead of RxJS's default
 * of rethrowing it asynchronously, which would take the host process and
 * its controller down with it. Operator chains (`timeline.pipe(map(...))`)
 * stay guarded: `lift`, which RxJS's operators call, makes another guarded
 * observable, so the callbacks subscribed to the chain's end are guarded
 * alike, and an error reaching an end without an error callback is logged
 * rather than rethrown.
 *
 * The hub's own timeline (the one with `listen`) hands a callback
 * subscribed to it straight to the hub, which calls it in a try/catch of
 * its own: no Subscriber between them. It never errors nor completes, so
 * such a subscriber's `error` and `complete` are never called.
 */
class GuardedTimeline<T = TimelineEntry> extends Observable<T> {
  constructor(
    private readonly logger: Logger,
    subscribe?: (subscriber: Subscriber<T>) => () => void,
    private readonly listen?: (next: (this: unknown, value: T) => void, receiver: unknown) => () => void,
  ) {
    super(subscribe);
  }

  override lift<R>(operator?: Operator<T, R>): Observable<R> {
    const lifted = new GuardedTimeline<R>(this.logger);
    // What Observable.prototype.lift does, on a guarded observable: its subscribe runs `operator` over this one.
    lifted.source = this;
    lifted.operator = operator;
    return lifted;
  }

  override subscribe(observerOrNext?: Partial<Observer<T>> | ((value: T) => void) | null): Subscription {
    // Operators and firstValueFrom subscribe with a Subscriber of their own: theirs to handle.
    if (observerOrNext === null || observerOrNext === undefined || observerOrNext instanceof Subscriber) return super.subscribe(observerOrNext ?? undefined);
    if (this.listen !== undefined) {
      const [next, receiver] = typeof observerOrNext === 'function' ? [observerOrNext, undefined] : [observerOrNext.next ?? skip, observerOrNext];
      return new Subscription(this.listen(next, receiver));
    }
    const observer: Partial<Observer<T>> = typeof observerOrNext === 'function' ? { next: observerOrNext } : observerOrNext;
    const guarded = (hook: 'next' | 'error' | 'complete') => (value?: unknown) => {
      if (hook === 'error' && observer.error === undefined) {
        this.logger.error({ err: messageOf(value) }, 'a timeline subscription failed and had no error callback; the controller goes on');
        return;
      }
      try {
        (observer[hook] as ((v?: unknown) => void) | undefined)?.call(observer, value);
      } catch (err) {
        this.logger.error({ hook, err: messageOf(err) }, 'a timeline subscriber threw; the controller goes on');
      }
    };
    return super.subscribe({ next: guarded('next'), error: guarded('error'), complete: guarded('complete') });
  }
}

/** The `next` of a subscriber without one: it still counts as reading (the hub builds entries for it). */
const skip = (): void => undefined;
