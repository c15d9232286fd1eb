import type { KubeConfig } from '@kubernetes/client-node';
import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import { catchError, concat, defer, EMPTY, from, ignoreElements, merge, Observable, ReplaySubject, takeUntil, tap, throwError, type SchedulerLike, asyncScheduler } from 'rxjs';
import { InformerFactory } from '../informers/informerFactory.js';
import { createDefaultLogger, type Logger } from '../logger.js';
import type { KeysOf } from '../operators/owners.js';
import type { Predicate } from '../operators/predicates.js';
import type { RateLimiter } from '../operators/rateLimiters.js';
import type { ReconcileOutcome } from '../operators/reconcileByKey.js';
import type { ReconcileContext, ReconcileResult } from '../operators/reconciler.js';
import { kubeClient, type KubeClient } from '../sinks/client/kubeClient.js';
import { eventRecorder, type EventRecorder } from '../sinks/events/eventRecorder.js';
import type { LeaderElectionOptions } from '../sinks/leader/leaderElection.js';
import { highResolutionClock } from '../sinks/metrics/clock.js';
import { controllerMetrics, type ControllerMetrics } from '../sinks/metrics/controllerMetrics.js';
import { leaderMetrics } from '../sinks/metrics/leaderMetrics.js';
import { withProcessMetrics } from '../sinks/metrics/processMetrics.js';
import { restClientMetrics } from '../sinks/metrics/restClientMetrics.js';
import { sourceMetrics } from '../sinks/metrics/sourceMetrics.js';
import type { Indexers } from '../store/indexFunctions.js';
import type { Lister } from '../store/store.js';
import type { ListWatchOptions } from '../sources/listWatch.js';
import type { TimelineEntry } from '../timeline.js';
import type { Delta, KubeObject, ObjectKey, ResourceRef } from '../types.js';
import { checkControllerAccess, type ControllerPermission } from './permissions.js';
import { reconcileWhileLeading } from './reconcileWhileLeading.js';
import { runParts } from './timelineClient.js';
import { TimelineHub } from './timelineHub.js';
import { listenToInformers } from './timelineInformers.js';
import { timelineObserver } from './timelineQueue.js';
import { shardGate, shardRangesTo, validateSharding, type ShardGate, type ShardingOptions } from './sharding.js';
import type { ShardSelection } from '../sources/sourceShard.js';
import type { ShardState } from '../sinks/leader/shardMembership.js';
import type { TriggerOption } from './triggers.js';
import { prioritize, type PriorityOptions } from './priorities.js';
import { DynamicWatches, type WatchHandle } from './dynamicWatches.js';
import { reconcileContext, wire } from './wiring.js';

/** A resource a controller watches: where it lives, and what kind its objects are. */
export interface WatchedResource extends ResourceRef {
  /** The kind of its objects (`Deployment`): owner references name owners by group and kind. */
  kind: string;
  /** Only objects with these labels (kube's label selector syntax: `app=web,tier!=db`). */
  labelSelector?: string;
  /** Only objects whose fields match (kube's field selector syntax: `status.phase=Running`). */
  fieldSelector?: string;
  /**
   * Only this replica's share of it (KEP-5866; see `listWatch`'s `shardSelector`): a selector
   * text, `{ by: 'uid' | 'namespace', ranges }`, or an Observable of those for ranges that move.
   *
   * Owned and watched objects must reach the replica whose primary they map to, and their own
   * uids hash elsewhere than their owner's, so never shard them `by: 'uid'`. Two ways that work:
   * - shard the primary and every owned or watched resource `by: 'namespace'` with the same
   *   ranges: each replica caches and watches only its namespaces' objects of every kind (memory
   *   and watch traffic about 1/N each), but the split is only as even as the namespaces (one big
   *   namespace is one replica's; names that differ only in their last characters, `team-1` and
   *   `team-2`, hash close together and tend to share a range), and a mapping that crosses
   *   namespaces (a cluster-scoped owner, a watch mapped to keys in other namespaces) breaks;
   * - shard the primary (by uid or namespace) and leave owned and watched resources unsharded:
   *   correct for any mapping, at the price of every replica caching and watching all of them
   *   (memory and traffic of those do not shrink with N), while reconciles still split.
   */
  shardSelector?: ListWatchOptions<KubeObject>['shardSelector'];
  /** Extra indexes on its store. */
  indexers?: Indexers;
  /**
   * The priority of the keys its changes trigger (default
   * `NORMAL_PRIORITY`); its initial list and unchanged objects take
   * `priority.initial` and `priority.resync` of the controller.
   */
  priority?: number;
  /**
   * Watch only the objects' metadata (`PartialObjectMetadata`, as
   * controller-runtime's `OnlyMetadata`): its store holds `{ apiVersion:
   * 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata }`, enough
   * for owner references, labels and names at a fraction of the memory.
   */
  metadataOnly?: boolean;
}

/** An extra watch: changes of another resource, mapped to keys of the primary one. */
export interface ExtraWatch {
  /** The resource to watch. */
  resource: WatchedResource;
  /** The primary keys a change concerns (none, one or several). */
  map: (delta: Delta, stores: ControllerStores) => KeysOf;
  /** The priority of the keys its changes trigger (default: `resource.priority`, else `NORMAL_PRIORITY`). */
  priority?: number;
}

/** Every store of a controller, by resource name (`deployments.apps`, `configmaps`). */
export type ControllerStores = Readonly<Record<string, Lister>>;

/** What a controller's reconcile gets besides the key. */
export interface ControllerContext<T extends KubeObject = KubeObject> extends ReconcileContext {
  /** The namespace of the key; undefined for a cluster-scoped object. */
  readonly namespace: string | undefined;
  /** The name of the key. */
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
  /** The controller's logger, for the reconcile's own lines. */
  readonly logger: Logger;
  /**
   * The controller's clock (its scheduler's `now()`, ms since the epoch):
   * stamp times with it (condition transitions, say) so that a reconcile
   * run in virtual time stays reproducible.
   */
  now(): number;
}

/**
 * A controller's reconcile: brings the object of `key` in line with what it should be.
 * It returns nothing or a `ReconcileResult`, as a value, a promise (which may also resolve
 * to an observable) or an Observable; a throw, rejection or error is retried after the rate limiter's delay.
 */
export type ControllerReconciler<T extends KubeObject> = (
  key: ObjectKey,
  ctx: ControllerContext<T>,
) => ReconcileResult | void | Observable<ReconcileResult | void> | Promise<ReconcileResult | void | Observable<ReconcileResult | void>>;

/**
 * What `controller()` wires: the primary resource, the resources it owns and watches, the reconcile,
 * and how the workqueue, metrics, leader election and shutdown behave.
 */
export interface ControllerOptions<T extends KubeObject> {
  /** Names the controller in metrics, logs, Events and as the field manager. */
  name: string;
  /** Where the cluster is and how to authenticate (client-node's `KubeConfig`). */
  kubeConfig: KubeConfig;
  /** The primary resource: its keys are what `reconcile` gets. */
  for: WatchedResource;
  /** Resources this controller creates and owns (with a controller owner reference): a change reconciles the owner. */
  owns?: WatchedResource[];
  /** Other resources whose changes concern primary keys. */
  watches?: ExtraWatch[];
  /**
   * Keys from outside the cluster (controller-runtime's `source.Channel`,
   * kube-rs's `reconcile_on`): Observables of keys or objects, bare or
   * named (`{ name, keys }`), such as a Git provider's push notifications
   * or `perObjectTimer(ms)`. Subscribed while the controller reconciles
   * (caches synced, leading), anew each time it starts; what one emits
   * meanwhile is not kept (every key is reconciled at the start anyway).
   * A trigger that errors, or emits what is no key, fails the controller
   * with a `TriggerError` naming it, as a failing source fails
   * controller-runtime's; one that completes just stops. See docs/triggers.md.
   */
  triggers?: readonly TriggerOption<T>[];
  /** The reconcile, run for each key of `for` that needs it, never twice at once for one key. */
  reconcile: ControllerReconciler<T>;
  /**
   * What the reconcile may do on the API server besides the list and watch
   * of `for`, `owns` and `watches` (which need no declaring): `rxkube
   * manifests` grants exactly these, with Events and the Lease, and no more.
   * Declarative only: the controller does not check its own writes.
   */
  permissions?: readonly ControllerPermission[];
  /** Reconciles in flight at most (default 1). */
  concurrency?: number;
  /**
   * How waiting keys are ordered (docs/priority.md): by default the keys of
   * initial lists and resyncs at `LOW_PRIORITY`, changes and `triggers` at
   * `NORMAL_PRIORITY`, with aging so that a low key waits at most one
   * minute plus the time to drain what was ahead of it. `{ aging: 0 }`:
   * plain arrival order.
   */
  priority?: PriorityOptions;
  /** Filters updates of the primary resource (creates and deletes always pass). */
  predicates?: Predicate<T>;
  /** The delays of retries (default `defaultControllerRateLimiter()`: per key 5 ms doubling to 1000 s, overall 10/s). */
  rateLimiter?: RateLimiter;
  /** Ms a reconcile may take before it counts as failed and its signal aborts. */
  timeout?: number;
  /** Retries in a row before a failing key is dropped until its next trigger (default: no limit). */
  maxRetries?: number;
  /** client-go's resyncPeriod for the primary resource (ms); off by default. */
  resyncPeriod?: number;
  /** Where the metrics go (default: a new Registry, never the global one). */
  registry?: Registry;
  /**
   * prom-client's default `process_*` and `nodejs_*` metrics on the
   * registry, once per registry (controller-runtime registers its process
   * collector by default). Default: true on the registry the controller
   * makes; false on a `registry` passed in, which is left as its owner made
   * it unless this says otherwise.
   */
  processMetrics?: boolean;
  /**
   * Where every wait happens (default `asyncScheduler`). Without one, the
   * metrics measure durations on a high-resolution clock (sub-millisecond);
   * with one, on its `now()`, so that virtual time stays virtual.
   */
  scheduler?: SchedulerLike;
  /** Run only while holding this Lease (client-go's algorithm). `kubeConfig` defaults to the controller's. */
  leaderElection?: Omit<LeaderElectionOptions, 'identity' | 'scheduler' | 'logger' | 'metrics' | 'stop' | 'requests'> & { identity?: string };
  /**
   * Split the primary keys over the live replicas (docs/sharding.md):
   * each reconciles only the keys of its slots of the hash space, handed
   * over between replicas so that no key ever runs on two at once. Not
   * with `leaderElection`.
   */
  sharding?: ShardingOptions;
  /** Aborting it shuts the controller down gracefully, and the output completes. */
  signal?: AbortSignal;
  /**
   * How long the caches may take to sync at start (ms, default 120 000, as
   * controller-runtime's `CacheSyncTimeout`; on the scheduler's clock):
   * past it, the controller errors naming each resource that did not sync
   * and why. `Infinity` waits for ever.
   */
  cacheSyncTimeout?: number;
  /** How long in-flight reconciles may take to finish at shutdown before they are aborted (ms, default 30 000). */
  gracePeriod?: number;
  /** Aborting it, once shutting down, ends the grace period at once: runs still in flight are aborted (a second SIGTERM). */
  stopNow?: AbortSignal;
  /** Where it logs (default: pino JSON lines on stderr; `silentLogger` for none). */
  logger?: Logger;
  /** Share informers with other controllers of this process (default: a factory of its own, whose requests count in `rest_client_*`). */
  informers?: InformerFactory;
  /** The client for writes (default: one on `kubeConfig`, field manager = `name`, whose requests count in `rest_client_*`). */
  client?: KubeClient;
  /** The Event recorder (default: one on `client`, reporting as `name`). */
  recorder?: EventRecorder;
}

/** A controller: an Observable of reconcile outcomes, plus what a host process wants to read. */
export interface Controller<T extends KubeObject = KubeObject> extends Observable<ReconcileOutcome> {
  /** The controller's name. */
  readonly name: string;
  /** The primary store. */
  readonly store: Lister<T>;
  /** Every store, by resource name. */
  readonly stores: ControllerStores;
  /** The controller-runtime metrics it updates. */
  readonly metrics: ControllerMetrics;
  /** The prom-client Registry the metrics are on. */
  readonly registry: Registry;
  /** Every store has synced, and the controller is running (false before it starts and after it ends). */
  synced(): boolean;
  /** True while this replica may reconcile: always without leader election, while running. */
  leading(): boolean;
  /**
   * For `/readyz`: running, synced, no informer failing (a 403 being
   * retried, say), and under leader election either leading or standing by.
   */
  ready(): boolean;
  /** Why `ready()` is false, one line per cause (a resource's failure, the controller's end); empty when ready. */
  notReady(): string[];
  /**
   * What the controller does, as it does it (`TimelineEntry`, each stamped
   * with the scheduler's `now()`): informer events (with the objects
   * received) and failures, triggers and their causes, queue transitions,
   * runs, the requests of `ctx.client` with their answers, the Events of
   * `ctx.recorder`, leadership. Hot: subscribing starts nothing, and shows
   * what happens from then on (a run already under way shows no writes).
   * Costs one check per event while nobody subscribes. A callback given to
   * `subscribe` that throws is logged; the controller goes on.
   */
  readonly timeline: Observable<TimelineEntry>;
  /** With `sharding`: this replica's slots and the live members as it last saw them; undefined otherwise or before the start. */
  shards(): ShardState | undefined;
  /**
   * Watches one more resource from now on, as `watches` does, until the
   * handle's `remove()` (docs/dynamic-watches.md): its informer starts
   * (now if the controller runs, else when it starts), its store joins
   * `ctx.stores`, and its objects' keys, mapped by `watch.map`, are
   * triggered, its initial list at `priority.initial`. Throws if the
   * controller already watches that resource.
   */
  watch(watch: ExtraWatch): WatchHandle;
  /** Owns one more resource from now on, as `owns` does, until the handle's `remove()`; see `watch()`. */
  own(resource: WatchedResource): WatchHandle;
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
 * - Aborting `signal`, or unsubscribing, stops new work: no key starts any
 *   more; reconciles in flight get `gracePeriod` to finish (then, or when
 *   `stopNow` aborts, they are aborted); then the lease is released and the
 *   watches close. With `signal`, the output completes after all of that,
 *   the lease released included; after an unsubscribe, the same shutdown
 *   runs in the background.
 * - A failing reconcile never ends it: its outcome says `error` and the key
 *   is retried with backoff. An informer that fails for good (a refused
 *   selector, a throwing index function) ends it with
 *   that error. One whose source is retrying (a 403 until RBAC is granted,
 *   a 401 until the token is rotated) keeps it running but not `ready()`;
 *   so does one whose resource type is not served (a CRD not installed yet,
 *   or deleted): its store is empty, and it starts when the type is served
 *   (docs/dynamic-watches.md). `watch()` and `own()` add watches while it
 *   runs.
 * - Caches that have not synced within `cacheSyncTimeout` (2 minutes) end
 *   it with an error naming each resource and why.
 */
export function controller<T extends KubeObject = KubeObject>(options: ControllerOptions<T>): Controller<T> {
  validate(options);
  const logger = options.logger ?? createDefaultLogger({ controller: options.name });
  const scheduler = options.scheduler ?? asyncScheduler;
  const registry = options.registry ?? new Registry();
  if (options.processMetrics ?? options.registry === undefined) withProcessMetrics(registry);
  // Measuring only; every wait still goes through the scheduler.
  const clock = options.scheduler === undefined ? highResolutionClock() : () => scheduler.now();
  const concurrency = options.concurrency ?? 1;
  const metrics = controllerMetrics({ controller: options.name, registry, maxConcurrentReconciles: concurrency, scheduler, clock });
  const monitor = sourceMetrics(registry);
  const requests = restClientMetrics({ registry, clock });
  const informers = options.informers ?? new InformerFactory(options.kubeConfig, { logger, scheduler, monitor, requests });
  const client = options.client ?? kubeClient(options.kubeConfig, { fieldManager: options.name, logger, requests });
  const identity = options.leaderElection?.identity ?? `${hostname()}-${Math.random().toString(36).slice(2, 10)}`;
  // The informers are listened to only while someone reads the timeline.
  const hub: TimelineHub = new TimelineHub(options.name, scheduler, logger, () => {
    const stops = [listenToInformers(hub, wiring.all), dynamic.listen((added) => listenToInformers(hub, [added]))];
    return () => stops.forEach((stop) => stop());
  });
  // Sharded, the primary informer lists and watches this replica's ranges, re-listing as they move.
  const cachedRanges = options.sharding !== undefined && options.sharding.cache !== 'full' ? new ReplaySubject<ShardSelection>(1) : undefined;
  const wiring = wire(cachedRanges === undefined ? options : { ...options, for: { ...options.for, shardSelector: cachedRanges } }, informers, hub);
  // Watches and owns added at run time: their keys join the triggers, their informers the warm ones.
  const dynamic = new DynamicWatches({
    controller: options.name,
    informers,
    stores: wiring.stores as Record<string, Lister>,
    owner: { group: options.for.group ?? '', kind: options.for.kind },
    priority: prioritize(options.name, options.priority),
    trace: hub,
    storeSize: (resource, size) => monitor.storeSize(resource, size),
  });
  // The added watches' keys end with the others': scripted watches that end (a test's) still end the run.
  const triggers = defer(() => {
    const ended = new ReplaySubject<void>(1);
    return merge(dynamic.triggers.pipe(takeUntil(ended)), wiring.triggers.pipe(tap({ complete: () => ended.next() })));
  });
  // What the elector said last: read by leading() and ready(), never to steer the run.
  let leader: { leading: boolean } | undefined = options.leaderElection === undefined ? { leading: true } : undefined;
  let gate: ShardGate | undefined;
  // Whether a run is under way, and how the last one ended: readiness tells the truth after the end too.
  let running = false;
  let ended: string | undefined;

  const output = new Observable<ReconcileOutcome>((subscriber) => {
    running = true;
    ended = undefined;
    let toldLeading: boolean | undefined;
    const finish = (why: string): void => {
      running = false;
      ended = why;
    };
    const stopping = new ReplaySubject<void>(1);
    const stopNow = options.stopNow;
    // A recorder of our own lives as long as this run: closed at the end, so
    // that no Event waiting to be retried keeps the process alive.
    const recorder = options.recorder ?? eventRecorder({ client, reportingController: options.name, reportingInstance: identity, logger });
    const closeOwnRecorder = defer(() =>
      options.recorder !== undefined ? EMPTY : from(recorder.close().catch((err: unknown) => logger.warn({ err: String(err) }, 'closing the Event recorder failed'))),
    ).pipe(ignoreElements());

    const own = { client, recorder };
    const reconcile = (key: ObjectKey, ctx: ReconcileContext) =>
      options.reconcile(key, reconcileContext(ctx, wiring, { ...runParts(hub, key, own), logger, scheduler }));
    const gracePeriod = options.gracePeriod ?? 30_000;
    gate = options.sharding === undefined ? undefined : shardGate({ controller: options.name, options: options.sharding, identity: options.sharding.identity ?? identity, kubeConfig: options.kubeConfig, requests, store: wiring.primary.store, scheduler, logger, registry, gracePeriod, handoff: wiring.initialTrigger,
      ...(cachedRanges !== undefined && options.sharding !== undefined ? { onRanges: shardRangesTo(cachedRanges, options.sharding.by) } : {}) });
    const run = reconcileWhileLeading({
      name: options.name,
      wiring: { ...wiring, triggers: gate === undefined ? triggers : gate.triggers(triggers) },
      keepWarm: dynamic.warm,
      ...(gate !== undefined ? { membership: gate.membership } : {}),
      stopping,
      ...(stopNow !== undefined ? { stopNow } : {}),
      gracePeriod,
      cacheSyncTimeout: options.cacheSyncTimeout ?? 120_000,
      scheduler,
      logger,
      metrics,
      monitor,
      election:
        options.leaderElection === undefined
          ? undefined
          : {
              ...options.leaderElection,
              kubeConfig: options.leaderElection.kubeConfig ?? options.kubeConfig,
              identity,
              scheduler,
              logger,
              metrics: leaderMetrics(registry),
              requests,
            },
      onLeader: (state) => {
        leader = state;
        // Changes of leading only: the elector also emits when the lease's holder changes while this replica stands by.
        if (state.leading !== toldLeading) {
          toldLeading = state.leading;
          hub.leadership(state.leading, identity);
        }
      },
      reconcile: gate === undefined ? reconcile : gate.reconcile(reconcile),
      queue: {
        concurrency,
        scheduler,
        clock,
        logger,
        observer: timelineObserver(hub, metrics.observer),
        ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
        ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
        ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
        ...(options.priority?.aging !== undefined ? { aging: options.priority.aging } : {}),
      },
    });

    // Not unsubscribed when the subscriber leaves: a shutdown is graceful, and runs to its end in the background.
    concat(
      run.pipe(
        tap((outcome) => metrics.outcome(outcome)),
        catchError((err: unknown) => {
          logger.error({ err: String(err) }, 'controller failed');
          return concat(closeOwnRecorder, throwError(() => err));
        }),
      ),
      closeOwnRecorder,
    ).subscribe({
      next: (outcome) => subscriber.next(outcome),
      error: (err: unknown) => {
        finish(`the controller failed: ${err instanceof Error ? err.message : String(err)}`);
        subscriber.error(err);
      },
      complete: () => {
        finish('the controller has stopped');
        subscriber.complete();
      },
    });

    const shutDown = (): void => stopping.next();
    if (options.signal?.aborted) shutDown();
    else options.signal?.addEventListener('abort', shutDown, { once: true });
    return () => {
      options.signal?.removeEventListener('abort', shutDown);
      shutDown();
    };
  });

  return Object.assign(output, {
    name: options.name,
    store: wiring.primary.store,
    stores: wiring.stores,
    metrics,
    registry,
    synced: () => running && wiring.synced(),
    leading: () => running && leader?.leading === true,
    timeline: hub.timeline,
    ready: () => notReady().length === 0,
    notReady,
    shards: () => gate?.state(),
    watch: (watch: ExtraWatch) => dynamic.watch(watch),
    own: (resource: WatchedResource) => dynamic.own(resource),
  }) as Controller<T>;

  function notReady(): string[] {
    if (!running) return [ended ?? 'the controller has not started'];
    const problems = [...wiring.problems(), ...dynamic.problems(), ...(gate?.problems() ?? [])];
    if (leader === undefined) problems.push('leader election has not said yet whether this replica leads');
    return problems;
  }
}

function validate<T extends KubeObject>(options: ControllerOptions<T>): void {
  if (typeof options.name !== 'string' || options.name === '') throw new TypeError('controller needs a non-empty name');
  if (typeof options.reconcile !== 'function') throw new TypeError(`controller "${options.name}" needs a reconcile function`);
  if (!options.kubeConfig) throw new TypeError(`controller "${options.name}" needs a kubeConfig`);
  checkControllerAccess(options);
  if (options.sharding !== undefined) {
    if (options.leaderElection !== undefined) throw new TypeError(`controller "${options.name}": sharding and leaderElection cannot both be set (sharding has its own Leases)`);
    validateSharding(options.name, options.sharding);
  }
}
