import { catchError, concat, defer, EMPTY, first, from, ignoreElements, isObservable, map, merge, mergeMap, type Observable, of, type SchedulerLike, switchMap, take, takeUntil, tap, throwError } from 'rxjs';
import { InformerFactory, type Informer, type InformerFactoryOptions } from '../../informers/informerFactory.js';
import type { Logger } from '../../logger.js';
import type { KeyTrigger, ReconcileOutcome } from '../../operators/reconcileByKey.js';
import type { ReconcileContext, ReconcileResult } from '../../operators/reconciler.js';
import { kubeClient, type KubeClient } from '../../sinks/client/kubeClient.js';
import { eventRecorder, type EventRecorder } from '../../sinks/events/eventRecorder.js';
import { clusterMetrics } from '../../sinks/metrics/clusterMetrics.js';
import type { Registry } from 'prom-client';
import { resourceName, type KubeObject, type ObjectKey } from '../../types.js';
import type { ControllerContext, ControllerOptions } from '../controller.js';
import { prioritize } from '../priorities.js';
import { runParts } from '../../observe/timelineClient.js';
import type { TimelineHub } from '../../observe/timelineHub.js';
import { normalizeTriggers, triggerSource, type TriggerValue } from '../triggers.js';
import { reconcileContext, triggerKeys, wire, type TriggerTrace, type Wiring } from '../wiring.js';
import { splitClusterKey } from './clusterKeys.js';
import { ClusterSet, clusterEvents, type ClusterConnection, type JoinedCluster } from './clusterSet.js';
import { clusterInformer } from './clusterStores.js';
import { withFields } from './withFields.js';

/** What a joined cluster is made of: its own informers, wiring, client and recorder. */
interface ClusterParts<T extends KubeObject> {
  readonly wiring: Wiring<T>;
  readonly client: KubeClient;
  readonly recorder: EventRecorder;
  readonly ownRecorder: boolean;
  readonly logger: Logger;
}

/** What `controller()` shares with every cluster. */
export interface ClusterDeps {
  readonly logger: Logger;
  readonly scheduler: SchedulerLike;
  readonly registry: Registry;
  readonly identity: string;
  readonly hub: TimelineHub;
  readonly factory: Pick<InformerFactoryOptions, 'monitor' | 'requests'>;
}

/** A multi-cluster controller's parts: one wiring over every cluster, its reconcile, and its run with the clusters connected. */
export interface Clusters<T extends KubeObject> {
  readonly wiring: Wiring<T>;
  reconcile(key: ObjectKey, ctx: ReconcileContext): ReturnType<ControllerOptions<T>['reconcile']>;
  /** `run`, the clusters followed from its start to its end (then each leaves, its own recorder closed), outcomes counted per cluster. */
  during(run: Observable<ReconcileOutcome>): Observable<ReconcileOutcome>;
}

type ReconcileReturn = ReturnType<ControllerOptions<KubeObject>['reconcile']>;

/**
 * `run()`'s result, except that a failure once `left` has aborted is no
 * failure: the run of a key whose cluster left ends quietly (`told`), as
 * its waiting keys do, instead of as an error to retry against a cluster
 * that is gone. Whatever the reconcile returns (a value, a promise, an
 * Observable, a promise of one) keeps its form.
 */
function quietOnLeave(run: () => ReconcileReturn, left: AbortSignal, told: () => void): ReconcileReturn {
  const quiet = (err: unknown) => {
    if (!left.aborted) throw err;
    told();
    return undefined;
  };
  type Outcome = ReconcileResult | void;
  const observed = (value: Outcome | Observable<Outcome>): Outcome | Observable<Outcome> =>
    isObservable(value) ? value.pipe(catchError((err: unknown) => (quiet(err), EMPTY))) : value;
  let result: ReconcileReturn;
  try {
    result = run();
  } catch (err) {
    return quiet(err);
  }
  if (result instanceof Promise) return result.then(observed, quiet);
  return observed(result);
}

/** Refuses what a multi-cluster controller cannot take: options that stand for one cluster, and sharding (not across clusters yet). */
export function checkClusterOptions<T extends KubeObject>(options: ControllerOptions<T>): void {
  if (options.clusters === undefined) return;
  for (const option of ['informers', 'client', 'recorder'] as const) {
    if (options[option] !== undefined) throw new TypeError(`controller "${options.name}": ${option} is of one cluster; with clusters, give it per cluster ({ kubeConfig, ${option} })`);
  }
  if (options.readYourWrites !== undefined && options.readYourWrites !== false) {
    throw new TypeError(`controller "${options.name}": readYourWrites and clusters cannot both be set yet (its writes are tracked in one cluster's caches)`);
  }
  if (options.sharding !== undefined) throw new TypeError(`controller "${options.name}": sharding and clusters cannot both be set yet; leaderElection works (its Lease is in the kubeConfig's cluster)`);
  clusterEvents(options.name, options.clusters);
}

/** `trace`, told keys with their cluster. */
function clusterTrace(trace: TriggerTrace, cluster: string): TriggerTrace {
  return {
    get active() {
      return trace.active;
    },
    trigger: (key, via, resource, delta) => trace.trigger(`${cluster}/${key}`, via, resource, delta),
    externalTrigger: (key, name) => trace.externalTrigger(`${cluster}/${key}`, name),
    triggered: () => trace.triggered(),
  };
}

function withCluster(trigger: KeyTrigger, cluster: string): KeyTrigger {
  return typeof trigger === 'string' ? `${cluster}/${trigger}` : { ...trigger, key: `${cluster}/${trigger.key}` };
}

/** The key of a trigger's value in a multi-cluster controller: a cluster key (an object names no cluster). */
function clusterKeyOfTriggerValue(value: TriggerValue): ObjectKey {
  if (typeof value !== 'string') throw new TypeError('it emitted an object, which names no cluster: with clusters, emit "cluster/namespace/name" (see clusterKey)');
  splitClusterKey(value);
  return value;
}

/**
 * `controller({ clusters })`: each cluster gets the informers, stores and
 * key mapping a single-cluster controller has (`wire`), its own client
 * and recorder; their keys carry the cluster's name and go to one queue.
 * Each cluster's keys start once that cluster's caches have synced; a
 * cluster that leaves stops its watches, aborts its runs in flight, and
 * its keys still waiting are dropped when their turn comes. `triggers`
 * made by a function run once per cluster on its parts; an Observable
 * trigger runs once and emits cluster keys.
 */
export function clusters<T extends KubeObject>(options: ControllerOptions<T> & { clusters: NonNullable<ControllerOptions<T>['clusters']> }, deps: ClusterDeps): Clusters<T> {
  const { logger, scheduler, hub } = deps;
  const events = clusterEvents(options.name, options.clusters);
  const triggers = normalizeTriggers(options.name, options.triggers);
  const perCluster = triggers.filter((trigger) => !isObservable(trigger.keys));
  const once = triggers.filter((trigger) => isObservable(trigger.keys));
  // Read at scrape time, once `set` exists.
  const metrics = clusterMetrics(deps.registry, options.name, () =>
    set.all().flatMap((cluster) => cluster.parts.wiring.all.map(({ resource, informer }) => ({ cluster: cluster.name, resource: resourceName(resource), size: informer.store.size }))),
  );
  const make = (name: string, connection: ClusterConnection): ClusterParts<T> => {
    const clusterLogger = withFields(logger, { cluster: name });
    const informers = connection.informers ?? new InformerFactory(connection.kubeConfig, { ...deps.factory, logger: clusterLogger, scheduler });
    const client = connection.client ?? kubeClient(connection.kubeConfig, { fieldManager: options.name, logger: clusterLogger, ...(deps.factory.requests ? { requests: deps.factory.requests } : {}) });
    const recorder = connection.recorder ?? eventRecorder({ client, reportingController: options.name, reportingInstance: deps.identity, logger: clusterLogger });
    const wiring = wire({ ...options, kubeConfig: connection.kubeConfig, triggers: perCluster }, informers, clusterTrace(hub, name));
    return { wiring, client, recorder, ownRecorder: connection.recorder === undefined, logger: clusterLogger };
  };
  const unmake = async (cluster: JoinedCluster<ClusterParts<T>>): Promise<void> => {
    metrics.left(cluster.name);
    if (cluster.parts.ownRecorder) await cluster.parts.recorder.close();
  };
  const set = new ClusterSet<ClusterParts<T>>(options.name, events, make, unmake, logger, (n) => metrics.joined(n));
  const resources = [options.for, ...(options.owns ?? []), ...(options.watches ?? []).map((watch) => watch.resource)];
  const all = resources.map((resource, i) => ({ resource, informer: clusterInformer(resource, set, (cluster) => cluster.parts.wiring.all[i]?.informer as Informer) }));
  const synced = () => set.all().every((cluster) => cluster.parts.wiring.synced());
  const priority = prioritize(options.name, options.priority);
  const primary = all[0]?.informer as unknown as Informer<T>;
  const external = once.map((trigger) =>
    triggerSource(trigger, primary, scheduler, (values: Observable<TriggerValue>) =>
      values.pipe(
        triggerKeys(hub, clusterKeyOfTriggerValue, (_value, key) => hub.externalTrigger(key, trigger.name)),
        map((key) => priority.key(key, trigger.priority, 'trigger')),
      ),
    ),
  );
  const wiring: Wiring<T> = {
    primary,
    all,
    stores: Object.freeze(Object.fromEntries(all.map(({ resource, informer }) => [resourceName(resource), informer.store]))),
    synced,
    problems: () => set.all().flatMap((cluster) => cluster.parts.wiring.problems().map((problem) => `cluster "${cluster.name}": ${problem}`)),
    // The clusters known at the start (a fixed set) are waited for; each one's keys also wait for its own caches.
    whenSynced: merge(set.clusters.pipe(mergeMap((cluster) => cluster.parts.wiring.whenSynced.pipe(takeUntil(cluster.left)))), defer(() => of(null))).pipe(map(synced), first(Boolean)),
    triggers: merge(
      set.clusters.pipe(
        mergeMap((cluster) =>
          cluster.parts.wiring.whenSynced.pipe(
            take(1),
            switchMap(() => cluster.parts.wiring.triggers),
            map((trigger) => withCluster(trigger, cluster.name)),
            takeUntil(cluster.left),
          ),
        ),
      ),
      ...external,
    ),
    initialTrigger: (key) => priority.key(key, undefined, 'initial'),
  };

  const reconcile = (key: ObjectKey, ctx: ReconcileContext) => {
    const { cluster: name, key: inner } = splitClusterKey(key);
    const cluster = set.get(name);
    // Its cluster has left since the key was queued: nothing of it is left to reconcile.
    if (cluster === undefined) {
      logger.debug({ key, cluster: name }, 'the cluster of this key has left: not reconciled');
      return undefined;
    }
    const signal = AbortSignal.any([ctx.signal, cluster.signal]);
    const { client, recorder } = runParts(hub, key, { client: cluster.parts.client, recorder: cluster.parts.recorder });
    const context: ControllerContext<T> = Object.assign(
      reconcileContext({ signal, attempt: ctx.attempt, key: inner }, cluster.parts.wiring, { client, recorder, logger: cluster.parts.logger, scheduler, cause: hub.causeOf(key) }),
      { key, cluster: name },
    );
    return quietOnLeave(() => options.reconcile(key, context), cluster.signal, () => logger.debug({ key, cluster: name }, 'the cluster of this key left during its run: the run ends, not retried'));
  };

  const during = (run: Observable<ReconcileOutcome>): Observable<ReconcileOutcome> =>
    defer(() => {
      set.connect();
      const disconnect = defer(() => from(set.disconnect())).pipe(ignoreElements());
      return concat(
        run.pipe(
          tap((outcome) => {
            const name = outcome.key.slice(0, outcome.key.indexOf('/'));
            // A departed cluster's last runs are not counted: its series are gone, and stay gone.
            if (set.get(name) !== undefined) metrics.outcome(name, outcome.result);
          }),
          catchError((err: unknown) => concat(disconnect, throwError(() => err))),
        ),
        disconnect,
      );
    });
  return { wiring, reconcile, during };
}

