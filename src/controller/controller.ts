import { catchError, concat, Observable, ReplaySubject, tap, throwError } from 'rxjs';
import { TimelineHub } from '../observe/timelineHub.js';
import { listenToInformers } from '../observe/timelineInformers.js';
import { timelineObserver } from '../observe/timelineQueue.js';
import type { ReconcileOutcome } from '../operators/reconcileByKey.js';
import type { ShardSelection } from '../sources/sourceShard.js';
import type { Lister } from '../store/store.js';
import type { KubeObject } from '../types.js';
import { contextReconcile } from './controllerContext.js';
import { validateOptions, type ControllerOptions, type ExtraWatch, type WatchedResource } from './controllerOptions.js';
import { controllerParts, electionFor, queueFor, runRecorder, shardGateFor } from './controllerParts.js';
import { ControllerStatus } from './controllerStatus.js';
import type { OwnWrites } from './ownWrites.js';
import { readYourWrites, readYourWritesOption } from './readYourWrites.js';
import { reconcileWhileLeading } from './reconcileWhileLeading.js';
import type { ShardGate } from './sharding.js';
import { wire } from './wiring.js';
import { DynamicWatches } from './dynamicWatches.js';
import type { Controller } from './controllerHandle.js';
import { prioritize } from './priorities.js';
import { traceRuns } from '../observe/tracing/controllerTracing.js';
import { checkClusterOptions, clusters } from './clusters/clusterWiring.js';

export type { ControllerOptions, ControllerStores, ExtraWatch, TypedResource, WatchedResource } from './controllerOptions.js';
export type { ControllerContext, ControllerReconciler } from './controllerContext.js';
export type { Controller } from './controllerHandle.js';


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
 *   selector, a throwing index function) ends it with that error. One whose
 *   source is retrying (a 403 until RBAC is granted, a 401 until the token
 *   is rotated) keeps it running but not `ready()`; so does one whose
 *   resource type is not served (a CRD not installed yet, or deleted): its
 *   store is empty, and it starts when the type is served
 *   (docs/dynamic-watches.md). `watch()` and `own()` add watches while it
 *   runs.
 * - Caches that have not synced within `cacheSyncTimeout` (2 minutes) end
 *   it with an error naming each resource and why.
 */
export function controller<T extends KubeObject = KubeObject>(options: ControllerOptions<T>): Controller<T> {
  validateOptions(options);
  checkClusterOptions(options);
  const parts = controllerParts(options);
  const { logger, scheduler, registry, metrics, identity } = parts;
  // The informers are listened to only while someone reads the timeline.
  const hub: TimelineHub = new TimelineHub(options.name, scheduler, logger, () => {
    const stops = [listenToInformers(hub, wiring.all), dynamic.listen((added) => listenToInformers(hub, [added]))];
    return () => stops.forEach((stop) => stop());
  });
  // Sharded, the primary informer lists and watches this replica's ranges, re-listing as they move.
  const cachedRanges = options.sharding !== undefined && options.sharding.cache !== 'full' ? new ReplaySubject<ShardSelection>(1) : undefined;
  const ownWritesOptions = readYourWritesOption(options.readYourWrites);
  // Made after the wiring, whose stores it reads; the wiring tells it of their events.
  const late: { writes?: OwnWrites } = {};
  const multi = options.clusters === undefined ? undefined : clusters({ ...options, clusters: options.clusters }, { logger, scheduler, registry, identity, hub, factory: { monitor: parts.monitor, requests: parts.requests } });
  const wiring = multi?.wiring ?? wire(cachedRanges === undefined ? options : { ...options, for: { ...options.for, shardSelector: cachedRanges } }, parts.informers, hub,
    ownWritesOptions === undefined ? undefined : (i, event) => late.writes?.observe(i, event));
  const ryow = ownWritesOptions === undefined ? undefined : readYourWrites(ownWritesOptions, wiring, { controller: options.name, scheduler, logger, registry });
  late.writes = ryow?.writes;
  // Watches and owns added at run time: their keys join the triggers, their informers the warm ones.
  const dynamic = new DynamicWatches({
    controller: options.name,
    informers: parts.informers,
    stores: wiring.stores as Record<string, Lister>,
    owner: { group: options.for.group ?? '', kind: options.for.kind },
    priority: prioritize(options.name, options.priority),
    trace: hub,
    storeSize: (resource, size) => parts.monitor.storeSize(resource, size),
  });
  const triggers = dynamic.withTriggers(wiring.triggers);
  const status = new ControllerStatus(options.leaderElection !== undefined);
  let gate: ShardGate | undefined;

  const output = new Observable<ReconcileOutcome>((subscriber) => {
    status.start();
    const stopping = new ReplaySubject<void>(1);
    const own = runRecorder(options, parts);
    const tracing = traceRuns({ controller: options.name, tracing: options.tracing, timeline: hub.timeline, attach: (spans) => (hub.tracer = spans), stores: wiring.stores, now: parts.clock });
    const reconcile = multi?.reconcile ?? contextReconcile(options, { hub, wiring, ryow, tracing, own: { client: parts.client, recorder: own.recorder }, logger, scheduler });
    const gracePeriod = options.gracePeriod ?? 30_000;
    gate = shardGateFor(options, parts, { store: wiring.primary.store, handoff: wiring.initialTrigger, gracePeriod, cachedRanges });
    const run = reconcileWhileLeading({
      name: options.name,
      wiring: { ...wiring, triggers: gate === undefined ? triggers : gate.triggers(triggers) },
      keepWarm: dynamic.warm,
      ...(gate !== undefined ? { membership: gate.membership } : {}),
      stopping,
      ...(options.stopNow !== undefined ? { stopNow: options.stopNow } : {}),
      gracePeriod,
      cacheSyncTimeout: options.cacheSyncTimeout ?? 120_000,
      scheduler,
      logger,
      metrics,
      monitor: parts.monitor,
      election: electionFor(options, parts),
      onLeader: (state) => status.elected(state, (leading) => hub.leadership(leading, identity)),
      reconcile: gate === undefined ? reconcile : gate.reconcile(reconcile),
      queue: queueFor(options, parts, timelineObserver(hub, metrics.observer)),
      ...(ryow !== undefined ? { around: ryow.hold.around } : {}),
    });

    // Not unsubscribed when the subscriber leaves: a shutdown is graceful, and runs to its end in the background.
    concat(
      (multi?.during(run) ?? run).pipe(
        tap((outcome) => metrics.outcome(outcome)),
        catchError((err: unknown) => {
          logger.error({ err: String(err) }, 'controller failed');
          return concat(own.close, throwError(() => err));
        }),
      ),
      own.close,
    ).subscribe({
      next: (outcome) => subscriber.next(outcome),
      error: (err: unknown) => {
        tracing?.stop();
        status.finish(`the controller failed: ${err instanceof Error ? err.message : String(err)}`);
        subscriber.error(err);
      },
      complete: () => {
        tracing?.stop();
        status.finish('the controller has stopped');
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

  const notReady = (): string[] => status.notReady(() => [...wiring.problems(), ...dynamic.problems(), ...(gate?.problems() ?? [])]);
  return Object.assign(output, {
    name: options.name,
    store: wiring.primary.store,
    stores: wiring.stores,
    metrics,
    registry,
    synced: () => status.running && wiring.synced(),
    leading: () => status.leading,
    timeline: hub.timeline,
    ready: () => notReady().length === 0,
    notReady,
    shards: () => gate?.state(),
    watch: (watch: ExtraWatch) => (multi === undefined ? dynamic.watch(watch) : refuseDynamic(options.name)),
    own: (resource: WatchedResource) => (multi === undefined ? dynamic.own(resource) : refuseDynamic(options.name)),
  }) as Controller<T>;
}

function refuseDynamic(name: string): never {
  throw new TypeError(`controller "${name}": watches cannot be added to a controller of several clusters yet`);
}
