import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import { catchError, concat, defer, EMPTY, from, ignoreElements, Observable, ReplaySubject, tap, throwError, asyncScheduler } from 'rxjs';
import { InformerFactory } from '../informers/informerFactory.js';
import { createDefaultLogger } from '../logger.js';
import type { ReconcileOutcome } from '../operators/reconcileByKey.js';
import type { ReconcileContext } from '../operators/reconciler.js';
import { kubeClient } from '../sinks/client/kubeClient.js';
import { eventRecorder } from '../sinks/events/eventRecorder.js';
import { highResolutionClock } from '../sinks/metrics/clock.js';
import { controllerMetrics, type ControllerMetrics } from '../sinks/metrics/controllerMetrics.js';
import { leaderMetrics } from '../sinks/metrics/leaderMetrics.js';
import { withProcessMetrics } from '../sinks/metrics/processMetrics.js';
import { restClientMetrics } from '../sinks/metrics/restClientMetrics.js';
import { sourceMetrics } from '../sinks/metrics/sourceMetrics.js';
import type { Lister } from '../store/store.js';
import type { TimelineEntry } from '../observe/timeline.js';
import type { KubeObject, ObjectKey } from '../types.js';
import { checkControllerAccess } from './permissions.js';
import { reconcileWhileLeading } from './reconcileWhileLeading.js';
import { runParts } from '../observe/timelineClient.js';
import { TimelineHub } from '../observe/timelineHub.js';
import { listenToInformers } from '../observe/timelineInformers.js';
import { timelineObserver } from '../observe/timelineQueue.js';
import { shardGate, shardRangesTo, validateSharding, type ShardGate } from './sharding.js';
import type { ShardSelection } from '../sources/sourceShard.js';
import type { ShardState } from '../sinks/leader/shardMembership.js';
import { reconcileContext, wire } from './wiring.js';
import { readYourWrites, readYourWritesOption } from './readYourWrites.js';
import type { OwnWrites } from './ownWrites.js';
import { OwnWritesClient } from './ownWritesClient.js';
import type { ControllerOptions, ControllerStores } from './controllerOptions.js';

export type { ControllerOptions, ControllerStores, ExtraWatch, TypedResource, WatchedResource } from './controllerOptions.js';
export type { ControllerContext, ControllerReconciler } from './controllerContext.js';

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
 *   is retried with backoff. An informer that fails for good (a resource
 *   type the server does not serve, a throwing index function) ends it with
 *   that error. One whose source is retrying (a 403 until RBAC is granted,
 *   a 401 until the token is rotated) keeps it running but not `ready()`.
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
  const hub: TimelineHub = new TimelineHub(options.name, scheduler, logger, () => listenToInformers(hub, wiring.all));
  // Sharded, the primary informer lists and watches this replica's ranges, re-listing as they move.
  const cachedRanges = options.sharding !== undefined && options.sharding.cache !== 'full' ? new ReplaySubject<ShardSelection>(1) : undefined;
  const ownWritesOptions = readYourWritesOption(options.readYourWrites);
  // Made after the wiring, whose stores it reads; the wiring tells it of their events.
  const late: { writes?: OwnWrites } = {};
  const wiring = wire(cachedRanges === undefined ? options : { ...options, for: { ...options.for, shardSelector: cachedRanges } }, informers, hub,
    ownWritesOptions === undefined ? undefined : (i, event) => late.writes?.observe(i, event));
  const ryow = ownWritesOptions === undefined ? undefined : readYourWrites(ownWritesOptions, wiring, { controller: options.name, scheduler, logger, registry });
  late.writes = ryow?.writes;
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
    const withParts = (key: ObjectKey, ctx: ReconcileContext) => {
      const parts = runParts(hub, key, own);
      const client = ryow === undefined ? parts.client : new OwnWritesClient(parts.client, ryow.writes, key);
      return options.reconcile(key, reconcileContext(ctx, wiring, { ...parts, client, logger, scheduler }));
    };
    const reconcile = ryow === undefined ? withParts : ryow.hold.reconcile(withParts);
    const gracePeriod = options.gracePeriod ?? 30_000;
    gate = options.sharding === undefined ? undefined : shardGate({ controller: options.name, options: options.sharding, identity: options.sharding.identity ?? identity, kubeConfig: options.kubeConfig, requests, store: wiring.primary.store, scheduler, logger, registry, gracePeriod, handoff: wiring.initialTrigger,
      ...(cachedRanges !== undefined && options.sharding !== undefined ? { onRanges: shardRangesTo(cachedRanges, options.sharding.by) } : {}) });
    const run = reconcileWhileLeading({
      name: options.name,
      wiring: gate === undefined ? wiring : { ...wiring, triggers: gate.triggers(wiring.triggers) },
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
      ...(ryow !== undefined ? { around: ryow.hold.around } : {}),
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
  }) as Controller<T>;

  function notReady(): string[] {
    if (!running) return [ended ?? 'the controller has not started'];
    const problems = [...wiring.problems(), ...(gate?.problems() ?? [])];
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
