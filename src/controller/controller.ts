import type { KubeConfig } from '@kubernetes/client-node';
import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import {
  EMPTY,
  Observable,
  Subject,
  asyncScheduler,
  distinctUntilChanged,
  filter,
  first,
  map,
  merge,
  of,
  startWith,
  switchMap,
  takeUntil,
  tap,
  type SchedulerLike,
  Subscription,
} from 'rxjs';
import { createDefaultLogger, type Logger } from '../logger.js';
import { filterDeltas, type Predicate } from '../operators/predicates.js';
import { mapToKeys, mapToOwners, type KeysOf } from '../operators/owners.js';
import type { RateLimiter } from '../operators/rateLimiters.js';
import { reconcileByKey, type ReconcileContext, type ReconcileOutcome, type ReconcileResult } from '../operators/reconcileByKey.js';
import { kubeClient, type KubeClient } from '../sinks/client/kubeClient.js';
import { eventRecorder, type EventRecorder } from '../sinks/events/eventRecorder.js';
import { leaderElection, type LeaderElectionOptions } from '../sinks/leader/leaderElection.js';
import { leaderMetrics } from '../sinks/metrics/leaderMetrics.js';
import { controllerMetrics, type ControllerMetrics } from '../sinks/metrics/controllerMetrics.js';
import { sourceMetrics } from '../sinks/metrics/sourceMetrics.js';
import { InformerFactory, type Informer } from '../informers/informerFactory.js';
import { resourceName, type ResourceRef, isDelta, splitKey, type Delta, type KubeObject, type ObjectKey } from '../types.js';
import type { Lister } from '../store/store.js';
import type { StoreEvent } from '../store/indexer.js';
import type { Indexers } from '../store/indexFunctions.js';

/** A resource a controller watches: where it lives, and what kind its objects are. */
export interface WatchedResource extends ResourceRef {
  /** The kind of its objects (`Deployment`): owner references name owners by group and kind. */
  kind: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Extra indexes on its store. */
  indexers?: Indexers;
}

/** An extra watch: changes of another resource, mapped to keys of the primary one. */
export interface ExtraWatch {
  resource: WatchedResource;
  /** The primary keys a change concerns (none, one or several). */
  map: (delta: Delta, stores: ControllerStores) => KeysOf;
}

/** Every store of a controller, by resource name (`deployments.apps`, `configmaps`). */
export type ControllerStores = Readonly<Record<string, Lister>>;

/** What a controller's reconcile gets besides the key. */
export interface ControllerContext<T extends KubeObject = KubeObject> extends ReconcileContext {
  readonly namespace: string | undefined;
  readonly name: string;
  /** The object as the cache held it when the run started; undefined once it is gone. */
  readonly object: T | undefined;
  /** The primary resource's store. */
  readonly store: Lister<T>;
  /** Every store of the controller, by resource name. */
  readonly stores: ControllerStores;
  /** Writes, and strongly consistent reads, straight to the API server. */
  readonly client: KubeClient;
  /** Records Events; never throws, never blocks. */
  readonly recorder: EventRecorder;
  readonly logger: Logger;
  /**
   * The controller's clock (its scheduler's `now()`, ms since the epoch):
   * stamp times with it (condition transitions, say) so that a reconcile
   * run in virtual time stays reproducible.
   */
  now(): number;
}

export type ControllerReconciler<T extends KubeObject> = (
  key: ObjectKey,
  ctx: ControllerContext<T>,
) => ReconcileResult | void | Promise<ReconcileResult | void> | Observable<ReconcileResult | void>;

export interface ControllerOptions<T extends KubeObject> {
  /** Names the controller in metrics, logs, Events and as the field manager. */
  name: string;
  kubeConfig: KubeConfig;
  /** The primary resource: its keys are what `reconcile` gets. */
  for: WatchedResource;
  /** Resources this controller creates and owns (with a controller owner reference): a change reconciles the owner. */
  owns?: WatchedResource[];
  /** Other resources whose changes concern primary keys. */
  watches?: ExtraWatch[];
  reconcile: ControllerReconciler<T>;
  /** Reconciles in flight at most (default 1). */
  concurrency?: number;
  /** Filters updates of the primary resource (creates and deletes always pass). */
  predicates?: Predicate<T>;
  rateLimiter?: RateLimiter;
  /** Ms a reconcile may take before it counts as failed and its signal aborts. */
  timeout?: number;
  maxRetries?: number;
  /** client-go's resyncPeriod for the primary resource (ms); off by default. */
  resyncPeriod?: number;
  /** Where the metrics go (default: a new Registry, never the global one). */
  registry?: Registry;
  scheduler?: SchedulerLike;
  /** Run only while holding this Lease (client-go's algorithm). `kubeConfig` defaults to the controller's. */
  leaderElection?: Omit<LeaderElectionOptions, 'identity' | 'scheduler' | 'logger' | 'metrics'> & { identity?: string };
  /** Aborting it shuts the controller down gracefully, and the output completes. */
  signal?: AbortSignal;
  /** How long in-flight reconciles may take to finish at shutdown before they are aborted (ms, default 30 000). */
  gracePeriod?: number;
  logger?: Logger;
  /** Share informers with other controllers of this process (default: a factory of its own). */
  informers?: InformerFactory;
  /** The client for writes (default: one on `kubeConfig`, field manager = `name`). */
  client?: KubeClient;
  /** The Event recorder (default: one on `client`, reporting as `name`). */
  recorder?: EventRecorder;
}

/** A controller: an Observable of reconcile outcomes, plus what a host process wants to read. */
export interface Controller<T extends KubeObject = KubeObject> extends Observable<ReconcileOutcome> {
  readonly name: string;
  /** The primary store. */
  readonly store: Lister<T>;
  readonly stores: ControllerStores;
  readonly metrics: ControllerMetrics;
  readonly registry: Registry;
  /** Every store has synced. */
  synced(): boolean;
  /** True while this replica may reconcile: always without leader election. */
  leading(): boolean;
  /** For `/readyz`: synced, and under leader election either leading or standing by. */
  ready(): boolean;
}

/**
 * Wires a controller: shared informers for the primary resource, what it
 * owns and what it watches; their changes mapped to primary keys; and
 * `reconcileByKey` with metrics, reconciling only once every store has
 * synced and only while leading.
 *
 * ```ts
 * controller({
 *   name: 'podautoscaler',
 *   kubeConfig,
 *   for: { group: 'example.com', version: 'v1', resource: 'podautoscalers', kind: 'PodAutoscaler' },
 *   owns: [{ group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' }],
 *   reconcile: async (key, ctx) => { ... },
 * }).subscribe();
 * ```
 *
 * - Subscribing starts the informers (their watches keep the caches warm
 *   even while another replica leads) and the election, if any.
 * - Once every store has synced and this replica leads, every primary key
 *   is reconciled once, then every change: primary changes that pass
 *   `predicates`, owned objects' changes as their controller owner's key,
 *   watched changes through their `map`.
 * - Losing the lease stops reconciling at once: in-flight reconciles are
 *   aborted through their signal. Gaining it again starts over from the
 *   caches.
 * - Aborting `signal`, or unsubscribing, stops new work: nothing waiting
 *   starts; reconciles in flight get `gracePeriod` to finish (then they are
 *   aborted); then the watches close and the lease is released. With
 *   `signal`, the output completes after that; after an unsubscribe, the
 *   same shutdown runs in the background.
 * - A failing reconcile never ends it: its outcome says `error` and the key
 *   is retried with backoff.
 */
export function controller<T extends KubeObject = KubeObject>(options: ControllerOptions<T>): Controller<T> {
  validate(options);
  const logger = options.logger ?? createDefaultLogger({ controller: options.name });
  const scheduler = options.scheduler ?? asyncScheduler;
  const registry = options.registry ?? new Registry();
  const concurrency = options.concurrency ?? 1;
  const metrics = controllerMetrics({ controller: options.name, registry, maxConcurrentReconciles: concurrency, scheduler });
  const monitor = sourceMetrics(registry);
  const informers = options.informers ?? new InformerFactory(options.kubeConfig, { logger, scheduler, monitor });
  const client = options.client ?? kubeClient(options.kubeConfig, { fieldManager: options.name, logger });
  const identity = options.leaderElection?.identity ?? `${hostname()}-${Math.random().toString(36).slice(2, 10)}`;

  const primary = informers.informer<T>(options.for, {
    ...selectors(options.for),
    ...(options.for.indexers ? { indexers: options.for.indexers as Indexers<T> } : {}),
    ...(options.resyncPeriod ? { resyncPeriod: options.resyncPeriod } : {}),
  });
  const owned = (options.owns ?? []).map((resource) => ({ resource, informer: informers.informer(resource, informerOptions(resource)) }));
  const watched = (options.watches ?? []).map((watch) => ({
    watch,
    informer: informers.informer(watch.resource, informerOptions(watch.resource)),
  }));
  const all: { resource: WatchedResource; informer: Informer }[] = [
    { resource: options.for, informer: primary as unknown as Informer },
    ...owned,
    ...watched.map(({ watch, informer }) => ({ resource: watch.resource, informer })),
  ];
  const stores: ControllerStores = Object.freeze(Object.fromEntries(all.map(({ resource, informer }) => [resourceName(resource), informer.store])));
  const synced = () => all.every(({ informer }) => informer.store.synced);

  let isLeading = options.leaderElection === undefined;
  let standingBy = options.leaderElection === undefined;

  // Every change that concerns a primary key, as that key. Subscribed anew
  // each time this replica starts leading: the informers replay their state
  // to a new subscriber, so every key comes through once, then the changes.
  const ownerKind = { group: options.for.group ?? '', kind: options.for.kind };
  const triggers = merge(
    primary.events.pipe(
      options.predicates ? filterDeltas<T>(options.predicates) : (source: Observable<StoreEvent<T>>) => source,
      filter(isDelta),
      map((delta) => delta.key),
    ),
    ...owned.map(({ informer }) => informer.events.pipe(mapToOwners(ownerKind))),
    ...watched.map(({ watch, informer }) => informer.events.pipe(mapToKeys((delta) => watch.map(delta, stores)))),
  );

  const reconcile = options.reconcile;
  const userContext = (key: ObjectKey, ctx: ReconcileContext, recorder: EventRecorder): ControllerContext<T> => {
    const { namespace, name } = splitKey(key);
    return {
      get signal() {
        return ctx.signal;
      },
      attempt: ctx.attempt,
      key,
      namespace,
      name,
      object: primary.store.get(key),
      store: primary.store,
      stores,
      client,
      recorder,
      logger,
      now: () => scheduler.now(),
    };
  };

  const output = new Observable<ReconcileOutcome>((subscriber) => {
    // A recorder of our own lives as long as this run: closed at shutdown, so
    // that no Event waiting to be retried keeps the process alive.
    const recorder =
      options.recorder ?? eventRecorder({ client, reportingController: options.name, reportingInstance: identity, logger });
    const stop = new Subject<void>();
    // Filled in below; a Subscription from the start so that a shutdown
    // during the synchronous part of subscribing still tears all of it down.
    const reconciling = new Subscription();
    let inspected: { readonly running: number } | undefined;
    const inFlight = (): number => inspected?.running ?? 0;
    let graceTimer: Subscription | undefined;
    let stopping = false;
    let finished = false;
    const warm = new Subscription();

    // Informers run for the controller's whole life, leading or not.
    for (const { resource, informer } of all) {
      const name = resourceName(resource);
      warm.add(
        informer.events.subscribe({
          next: (event) => monitor.storeSize(name, event.store.size),
          error: (err: unknown) => fail(err),
        }),
      );
    }

    const leadership = options.leaderElection
      ? leaderElection({
          ...options.leaderElection,
          kubeConfig: options.leaderElection.kubeConfig ?? options.kubeConfig,
          identity,
          scheduler,
          logger,
          metrics: leaderMetrics(registry),
        }).pipe(
          tap((state) => {
            standingBy = true;
            isLeading = state.leading;
          }),
          map((state) => state.leading),
          distinctUntilChanged(),
        )
      : of(true);

    const whenSynced = merge(...all.map(({ informer }) => informer.events)).pipe(
      startWith(null),
      map(synced),
      first(Boolean),
    );

    reconciling.add(
      leadership
        .pipe(
          // Counted before switchMap tears the queue down, which zeroes its counts.
          tap((leading) => {
            if (!leading && inFlight() > 0) logger.warn({ running: inFlight() }, 'lost leadership: aborting reconciles in flight');
          }),
          switchMap((leading) => {
            if (!leading) return EMPTY;
            logger.info({ identity }, 'reconciling');
            return whenSynced.pipe(
              switchMap(() => triggers),
              takeUntil(stop),
              reconcileByKey((key, ctx) => reconcile(key, userContext(key, ctx, recorder)), {
                concurrency,
                scheduler,
                logger,
                observer: metrics.observer,
                inspect: (queue) => {
                  inspected = queue;
                },
                ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
                ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
                ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
              }),
            );
          }),
        )
        .subscribe({
          next(outcome) {
            metrics.outcome(outcome);
            subscriber.next(outcome);
            // Shutting down: once nothing is in flight, end the queue before it starts a waiting key.
            if (stopping && inFlight() === 0) end();
          },
          error: (err: unknown) => fail(err),
          complete: () => end(),
        }),
    );

    function fail(err: unknown): void {
      if (finished) return;
      logger.error({ err: String(err) }, 'controller failed');
      void cleanup().then(() => subscriber.error(err));
    }

    function end(): void {
      if (finished) return;
      void cleanup().then(() => subscriber.complete());
    }

    /** Stops everything; settles once the recorder of our own has closed, so `complete` means nothing is left running. */
    function cleanup(): Promise<void> {
      finished = true;
      graceTimer?.unsubscribe();
      reconciling.unsubscribe();
      warm.unsubscribe();
      if (options.recorder !== undefined) return Promise.resolve();
      return recorder.close().catch((err: unknown) => logger.warn({ err: String(err) }, 'closing the Event recorder failed'));
    }

    const shutdown = (): void => {
      if (stopping || finished) return;
      stopping = true;
      stop.next();
      if (inFlight() === 0) return end();
      logger.info({ running: inFlight(), gracePeriod }, 'shutting down: waiting for reconciles in flight');
      graceTimer = scheduler.schedule(() => {
        logger.warn({ gracePeriod }, 'grace period over: aborting reconciles still in flight');
        end();
      }, gracePeriod);
    };

    const gracePeriod = options.gracePeriod ?? 30_000;
    const onAbort = () => shutdown();
    if (options.signal?.aborted) shutdown();
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    return () => {
      options.signal?.removeEventListener('abort', onAbort);
      shutdown();
    };
  });

  return Object.assign(output, {
    name: options.name,
    store: primary.store,
    stores,
    metrics,
    registry,
    synced,
    leading: () => isLeading,
    ready: () => synced() && standingBy,
  }) as Controller<T>;

  function informerOptions(resource: WatchedResource) {
    return { ...selectors(resource), ...(resource.indexers ? { indexers: resource.indexers } : {}) };
  }
}

function selectors(resource: WatchedResource): { labelSelector?: string; fieldSelector?: string } {
  return {
    ...(resource.labelSelector !== undefined ? { labelSelector: resource.labelSelector } : {}),
    ...(resource.fieldSelector !== undefined ? { fieldSelector: resource.fieldSelector } : {}),
  };
}

function validate<T extends KubeObject>(options: ControllerOptions<T>): void {
  if (typeof options.name !== 'string' || options.name === '') throw new TypeError('controller needs a non-empty name');
  if (typeof options.reconcile !== 'function') throw new TypeError(`controller "${options.name}" needs a reconcile function`);
  if (!options.kubeConfig) throw new TypeError(`controller "${options.name}" needs a kubeConfig`);
  for (const [role, resource] of [['for', options.for], ...(options.owns ?? []).map((r) => ['owns', r] as const), ...(options.watches ?? []).map((w) => ['watches', w.resource] as const)] as const) {
    if (!resource || typeof resource.resource !== 'string' || typeof resource.version !== 'string' || typeof resource.kind !== 'string') {
      throw new TypeError(`controller "${options.name}": ${role} needs { group, version, resource, kind }`);
    }
  }
}
