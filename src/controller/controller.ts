import type { Registry } from 'prom-client';
import { catchError, concat, Observable, ReplaySubject, tap, throwError } from 'rxjs';
import type { TimelineEntry } from '../observe/timeline.js';
import { TimelineHub } from '../observe/timelineHub.js';
import { listenToInformers } from '../observe/timelineInformers.js';
import { timelineObserver } from '../observe/timelineQueue.js';
import type { ReconcileOutcome } from '../operators/reconcileByKey.js';
import type { ShardState } from '../sinks/leader/shardMembership.js';
import type { ControllerMetrics } from '../sinks/metrics/controllerMetrics.js';
import type { ShardSelection } from '../sources/sourceShard.js';
import type { Lister } from '../store/store.js';
import type { KubeObject } from '../types.js';
import { contextReconcile } from './controllerContext.js';
import { validateOptions, type ControllerOptions, type ControllerStores } from './controllerOptions.js';
import { controllerParts, electionFor, queueFor, runRecorder, shardGateFor } from './controllerParts.js';
import { ControllerStatus } from './controllerStatus.js';
import type { OwnWrites } from './ownWrites.js';
import { readYourWrites, readYourWritesOption } from './readYourWrites.js';
import { reconcileWhileLeading } from './reconcileWhileLeading.js';
import type { ShardGate } from './sharding.js';
import { wire } from './wiring.js';
import { traceRuns } from '../observe/tracing/controllerTracing.js';
import { checkClusterOptions, clusters } from './clusters/clusterWiring.js';

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
  validateOptions(options);
  checkClusterOptions(options);
  const parts = controllerParts(options);
  const { logger, scheduler, registry, metrics, identity } = parts;
  // The informers are listened to only while someone reads the timeline.
  const hub: TimelineHub = new TimelineHub(options.name, scheduler, logger, () => listenToInformers(hub, wiring.all));
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
      wiring: gate === undefined ? wiring : { ...wiring, triggers: gate.triggers(wiring.triggers) },
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

  const notReady = (): string[] => status.notReady(() => [...wiring.problems(), ...(gate?.problems() ?? [])]);
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
  }) as Controller<T>;
}
