import { asyncScheduler, defer, filter, first, map, merge, Observable, startWith, tap, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { InformerFactory, Informer } from '../informers/informerFactory.js';
import type { Logger } from '../logger.js';
import { mapToKeys, mapToOwners } from '../operators/owners.js';
import { filterDeltas } from '../operators/predicates.js';
import type { ReconcileContext } from '../operators/reconciler.js';
import type { KeyTrigger } from '../operators/reconcileByKey.js';
import type { KubeClient } from '../sinks/client/kubeClient.js';
import type { EventRecorder } from '../sinks/events/eventRecorder.js';
import type { StoreEvent } from '../store/indexer.js';
import type { Lister } from '../store/store.js';
import type { RunCause, TriggerCause } from '../observe/timeline.js';
import { isDelta, resourceName, splitKey, type Delta, type KubeObject, type ObjectKey, type Typed } from '../types.js';
import type { ControllerContext, ControllerOptions, ControllerStores, WatchedResource } from './controller.js';
import { prioritize, withPriority } from './priorities.js';
import { keyOfTriggerValue, normalizeTriggers, triggerSource, type TriggerValue } from './triggers.js';

/**
 * What a controller is made of besides its queue: the informers of what it
 * is `for`, `owns` and `watches`, their stores, the keys their changes
 * trigger, and the context each reconcile gets.
 */
export interface Wiring<T extends KubeObject> {
  readonly primary: Informer<T>;
  readonly all: readonly { resource: WatchedResource; informer: Informer }[];
  readonly stores: ControllerStores;
  /** Every store has synced. */
  synced(): boolean;
  /** Why the informers are not all well, one line per resource: not synced yet, or a source failing or failed. */
  problems(): string[];
  /** Emits once, when every store has synced (at once if they have). */
  readonly whenSynced: Observable<unknown>;
  /**
   * Every change that concerns a primary key, as that key. Subscribed anew
   * each time the replica starts leading: the informers replay their state
   * to a new subscriber, so every key comes through once, then the changes.
   * Each with its priority (`options.priority`): the replayed keys at
   * `initial`, unchanged objects at `resync`, changes at their source's.
   */
  readonly triggers: Observable<KeyTrigger>;
  /** The trigger of a key that comes as an initial list would (a sharding handoff), at `priority.initial`. */
  initialTrigger(key: ObjectKey): KeyTrigger;
}

function selectors(resource: WatchedResource): Pick<WatchedResource, 'labelSelector' | 'fieldSelector' | 'shardSelector'> {
  return {
    ...(resource.labelSelector !== undefined ? { labelSelector: resource.labelSelector } : {}),
    ...(resource.fieldSelector !== undefined ? { fieldSelector: resource.fieldSelector } : {}),
    ...(resource.shardSelector !== undefined ? { shardSelector: resource.shardSelector } : {}),
  };
}

export function informerOptions(resource: WatchedResource) {
  return {
    ...selectors(resource),
    ...(resource.indexers ? { indexers: resource.indexers } : {}),
    ...(resource.metadataOnly === true ? { metadataOnly: true } : {}),
  };
}

/** What is wrong with one informer, if anything: its source failing (with why), or not synced yet. */
export function problemOf(resource: WatchedResource, informer: Informer): string | undefined {
  const health = informer.health();
  const name = resourceName(resource);
  if (health.state !== 'ok') return `${name}: ${health.state === 'failed' ? 'failed' : 'not answering'}: ${health.reason}`;
  if (!informer.store.synced) return `${name}: not synced yet (no complete list so far)`;
  return undefined;
}

/** A function that errors name: `mapToKeys` names the function it calls in what it throws. */
function named<F extends (...args: never[]) => unknown>(name: string, fn: F): F {
  return Object.defineProperty(fn, 'name', { value: name });
}

/** Where the triggers' causes go: the timeline, which builds nothing unless `active`. */
export interface TriggerTrace {
  readonly active: boolean;
  trigger(key: ObjectKey, via: TriggerCause['via'], resource: string, delta: Delta): void;
  /** `key` was emitted by the trigger `name` (`options.triggers`); `triggered()` follows as for `trigger`. */
  externalTrigger(key: ObjectKey, name: string): void;
  /** The key last told to `trigger` has gone its synchronous way into the queue (see `triggerKeys`). */
  triggered(): void;
}

/**
 * `map(toKey)`, each key handed on as one trigger: while someone reads the
 * timeline, `tell` tells `trace` of it, the key goes on to the queue, and
 * `trace.triggered()` follows once that returns. What the queue does with
 * the key meanwhile (it waits, or it starts a run) happens at the
 * trigger's instant, and the timeline stamps it with the trigger's time
 * instead of reading the clock again; the bracket is what makes that
 * safe: a key the queue gets later (a gate between) or never is out of
 * it. A throw of `toKey` or `tell` errors the output, as in `map`; once
 * the output is closed, nothing more is made or told.
 */
export function triggerKeys<V>(trace: TriggerTrace, toKey: (value: V) => ObjectKey, tell: (value: V, key: ObjectKey) => void): OperatorFunction<V, ObjectKey> {
  return (source) =>
    new Observable<ObjectKey>((subscriber) =>
      source.subscribe({
        next: (value) => {
          // A synchronous source goes on calling this observer after the output closed (as in `indexer`).
          if (subscriber.closed) return;
          let key: ObjectKey;
          let told = false;
          try {
            key = toKey(value);
            if (trace.active) {
              tell(value, key);
              told = true;
            }
          } catch (err) {
            subscriber.error(err);
            return;
          }
          if (!told) return subscriber.next(key);
          try {
            subscriber.next(key);
          } finally {
            trace.triggered();
          }
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      }),
    );
}

/**
 * `toKeys` over `events`, each key it gives told to `trace` with the delta
 * it came from. The mappers are synchronous (one delta in, its keys out
 * before the next delta), so the last delta seen is the one of each key.
 */
export function traced<E extends StoreEvent>(
  events: Observable<E>,
  toKeys: OperatorFunction<E, ObjectKey>,
  trace: TriggerTrace | undefined,
  via: TriggerCause['via'],
  resource: string,
): Observable<ObjectKey> {
  if (trace === undefined) return events.pipe(toKeys);
  return defer(() => {
    let cause: E | undefined;
    return events.pipe(
      tap((event) => (cause = event)),
      toKeys,
      triggerKeys(
        trace,
        (key: ObjectKey) => key,
        (key) => {
          if (cause !== undefined && isDelta(cause)) trace.trigger(key, via, resource, cause);
        },
      ),
    );
  });
}

/**
 * The informers of `options`, their stores and the keys their changes
 * trigger, with those of `options.triggers`, each key told to `trace`
 * (when given) with its cause. A
 * primary `Sync` whose `object` is its `old` comes from the periodic
 * resync (which re-sends the stored object as both); a repeat the watch
 * sent holds the object received, never the stored one.
 */
export function wire<T extends KubeObject>(
  options: ControllerOptions<T>,
  informers: InformerFactory,
  trace?: TriggerTrace,
  /** Hears every event of store `i` of `all` (read-your-own-writes), before its keys go on. */
  observe?: (i: number, event: StoreEvent) => void,
): Wiring<T> {
  const primary = informers.informer<T>(options.for, {
    ...selectors(options.for),
    ...(options.for.indexers ? { indexers: options.for.indexers } : {}),
    ...(options.for.metadataOnly === true ? { metadataOnly: true } : {}),
    ...(options.resyncPeriod ? { resyncPeriod: options.resyncPeriod } : {}),
  });
  const owned = (options.owns ?? []).map((resource) => ({ resource, informer: informers.informer(resource, informerOptions(resource)) }));
  const watched = (options.watches ?? []).map((watch) => ({ watch, informer: informers.informer(watch.resource, informerOptions(watch.resource)) }));
  const all = [
    { resource: options.for, informer: primary as unknown as Informer },
    ...owned,
    ...watched.map(({ watch, informer }) => ({ resource: watch.resource, informer })),
  ];
  // Not frozen: watches added at run time (dynamicWatches.ts) put their stores here and take them out.
  const stores: ControllerStores = Object.fromEntries(all.map(({ resource, informer }) => [resourceName(resource), informer.store]));
  const synced = () => all.every(({ informer }) => informer.store.synced);
  const ownerKind = { group: options.for.group ?? '', kind: options.for.kind };
  const primaryName = resourceName(options.for);
  const scheduler = options.scheduler ?? asyncScheduler;
  const priority = prioritize(options.name, options.priority);
  const external = normalizeTriggers(options.name, options.triggers).map((trigger) =>
    triggerSource(trigger, primary, scheduler, (values: Observable<TriggerValue>) =>
      (trace === undefined
        ? values.pipe(map(keyOfTriggerValue))
        : values.pipe(triggerKeys(trace, keyOfTriggerValue, (_value, key) => trace.externalTrigger(key, trigger.name)))
      ).pipe(map((key) => priority.key(key, trigger.priority, 'trigger'))),
    ),
  );
  // Each store's events as the triggers read them, each told to `observe` once the keys it triggers have gone on:
  // a key that waits for the write this event shows is waiting already, and goes on once.
  const eventsOf = <E extends StoreEvent>(i: number, events: Observable<E>): Observable<E> =>
    observe === undefined
      ? events
      : new Observable<E>((subscriber) =>
          events.subscribe({
            next: (event) => {
              subscriber.next(event);
              if (!subscriber.closed) observe(i, event);
            },
            error: (err: unknown) => subscriber.error(err),
            complete: () => subscriber.complete(),
          }),
        );
  const primaryChanges = eventsOf(0, primary.events).pipe(
    options.predicates ? filterDeltas<T>(options.predicates) : (source: Observable<StoreEvent<T>>) => source,
    filter(isDelta),
    withPriority(
      (deltas: Observable<Delta<T>>) =>
        trace === undefined
          ? deltas.pipe(map((delta) => delta.key))
          : deltas.pipe(
              triggerKeys(
                trace,
                (delta: Delta<T>) => delta.key,
                (delta, key) => trace.trigger(key, delta.type === 'Sync' && delta.object === delta.old ? 'resync' : 'for', primaryName, delta),
              ),
            ),
      (delta, key) => priority.delta(delta, key, options.for.priority),
    ),
  );
  return {
    primary,
    all,
    initialTrigger: (key) => priority.key(key, undefined, 'initial'),
    stores,
    synced,
    problems: () => all.flatMap(({ resource, informer }) => problemOf(resource, informer) ?? []),
    whenSynced: merge(...all.map(({ informer }) => informer.events)).pipe(startWith(null), map(synced), first(Boolean)),
    triggers: merge(
      primaryChanges,
      ...owned.map(({ resource, informer }, i) =>
        eventsOf(1 + i, informer.events).pipe(
          withPriority(
            (events) => traced(events, mapToOwners(ownerKind), trace, 'owns', resourceName(resource)),
            (event, key) => priority.delta(event, key, resource.priority),
          ),
        ),
      ),
      ...watched.map(({ watch, informer }, i) =>
        eventsOf(1 + owned.length + i, informer.events).pipe(
          withPriority(
            (events) =>
              traced(
                events,
                mapToKeys(named(`watches[${i}].map (${resourceName(watch.resource)})`, (delta) => watch.map(delta, stores))),
                trace,
                'watches',
                resourceName(watch.resource),
              ),
            (event, key) => priority.delta(event, key, watch.priority ?? watch.resource.priority),
          ),
        ),
      ),
      ...external,
    ),
  };
}

/** The store of `resource` among `stores`, as the type of its objects; a clear error for one not watched. */
function listerOf<U extends KubeObject>(stores: ControllerStores, resource: WatchedResource & Typed<U>): Lister<U> {
  const name = resourceName(resource);
  const store = Object.hasOwn(stores, name) ? stores[name] : undefined;
  // The store holds what the API server sent for this resource: the objects the resource's type describes.
  if (store !== undefined) return store as Lister<KubeObject> as Lister<U>;
  throw new Error(`ctx.lister: the controller does not watch ${name} (it watches ${Object.keys(stores).join(', ')}): add it to owns or watches`);
}

/** The context of one reconcile: the queue's (signal, attempt, key) and what the controller adds. */
export function reconcileContext<T extends KubeObject>(
  ctx: ReconcileContext,
  wiring: Wiring<T>,
  parts: { client: KubeClient; recorder: EventRecorder; logger: Logger; scheduler: SchedulerLike; cause: RunCause | undefined },
): ControllerContext<T> {
  const { namespace, name } = splitKey(ctx.key);
  return {
    get signal() {
      return ctx.signal;
    },
    attempt: ctx.attempt,
    key: ctx.key,
    namespace,
    name,
    object: wiring.primary.store.get(ctx.key),
    store: wiring.primary.store,
    stores: wiring.stores,
    lister: <U extends KubeObject>(resource: WatchedResource & Typed<U>) => listerOf<U>(wiring.stores, resource),
    client: parts.client,
    recorder: parts.recorder,
    logger: parts.logger,
    cause: parts.cause,
    now: () => parts.scheduler.now(),
  };
}
