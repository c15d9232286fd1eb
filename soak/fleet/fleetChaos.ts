import type { KubeConfig } from '@kubernetes/client-node';
import { Subject } from 'rxjs';
import { controller, InformerFactory, kubeClient, silentLogger, splitClusterKey, type ClusterEvent, type Controller, type KubeClient, type Lister, type ReconcileOutcome } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { chaoticReconcile, type InFlightGuard, type ReconcileChaos } from '../chaosReconcile.js';
import { FaultInjector, type FaultStats, type FaultWeather } from '../faultInjector.js';
import { clusterView } from '../invariants/clusterView.js';
import { allSubjects, subjectProblem } from '../invariants/converged.js';
import { storeDifferences } from '../invariants/storesMatch.js';
import { reconcileMirror } from '../mirror/reconcile.js';
import { configMaps, type ConfigMap } from '../mirror/types.js';
import type { Random } from '../random.js';
import { runAll, stopWithin, type Running } from '../running.js';
import { parseSubject, sourceName } from '../subjects.js';
import type { Violations } from '../violations.js';
import { resources, Workload, type WorkloadOptions } from '../workload.js';

export interface FleetChaosOptions {
  /** The soak's main server: the home cluster, and the fleet's cluster `east`. */
  home: ApiServer;
  namespace: string;
  random: Random;
  violations: Violations;
  guard: InFlightGuard;
  chaos: ReconcileChaos;
  /** Mirror sources per cluster, and workload operations per second per cluster. */
  sources: number;
  rate: number;
  /** Mean real ms between a leave of `west` (it rejoins 0.5–3 s later) while faults run. */
  meanChurnIntervalMs: number;
  faults: FaultWeather;
  historyWindow: number;
  concurrency: number;
  /** The informers' longest backoff, as the main controllers' (see the README: the default keeps an informer dark for most of a round). */
  watchBackoffMaxMs: number;
  workload: Pick<WorkloadOptions, 'httpShare' | 'maxHttpInFlight' | 'freshShare' | 'freshLive' | 'touched'>;
  onOutcome: (controller: string, outcome: ReconcileOutcome) => void;
  onEnded: (controller: string, how: string) => void;
}

export interface FleetReport {
  clusters: string[];
  /** Times `west` left and joined again while faults ran. */
  leaves: number;
  joins: number;
  reconcilesByCluster: Record<string, number>;
  /** The faults injected on `west`'s server (the main report's are `east`'s). */
  westFaults: FaultStats;
}

const NAME = 'fleet-mirror';

/**
 * What is wrong with a run of `key` given this context, when the clusters
 * joined now (with the clients they joined with) are `joined`: a context
 * of another cluster, a client that is not its cluster's, or a cluster
 * that is not joined. Undefined when all is right.
 */
export function isolationProblem(key: string, ctx: { cluster?: string | undefined; client: KubeClient }, joined: ReadonlyMap<string, KubeClient>): string | undefined {
  const { cluster } = splitClusterKey(key);
  if (!joined.has(cluster)) return `${key}: a run started while cluster ${cluster} was not joined`;
  if (ctx.cluster !== cluster) return `${key}: ran with the context of cluster ${ctx.cluster ?? '(none)'}`;
  if (ctx.client !== joined.get(cluster)) return `${key}: ran with a client that is not cluster ${cluster}'s`;
  return undefined;
}

/**
 * Many clusters under chaos: one mirror controller (`controller({ clusters
 * })`) over two embedded API servers, `east` (the soak's main server, also
 * the home cluster) and `west` (a server of its own, with faults of its
 * own), the same namespace and the same source names in both, so that
 * keys differ by their cluster only. While faults run, `west` leaves and
 * joins again at random (a new client each time).
 *
 * Checked live (invariant `cluster-isolation`): each run's key names the
 * cluster of its `ctx.cluster`, its `ctx.client` is the client that
 * cluster joined with, and that cluster is joined when the run starts.
 * After each round: every mirror subject of each cluster converged (a twin
 * written to the wrong cluster is a twin owned by a uid that is not its
 * source's there), and the controller's store, cluster by cluster, equal
 * to that server.
 */
export class FleetChaos {
  readonly stats: FleetReport;
  private west: ApiServer | undefined;
  private ctl: Controller<ConfigMap> | undefined;
  private running: Running | undefined;
  private readonly events = new Subject<ClusterEvent>();
  private readonly joined = new Map<string, KubeClient>();
  private readonly stop = new AbortController();
  private churnTimer: NodeJS.Timeout | undefined;
  private rejoinTimer: NodeJS.Timeout | undefined;
  private westFaults: FaultInjector | undefined;
  readonly workloads: Workload[] = [];

  constructor(private readonly options: FleetChaosOptions) {
    this.stats = { clusters: ['east', 'west'], leaves: 0, joins: 0, reconcilesByCluster: { east: 0, west: 0 }, westFaults: { injected: {}, armedErrors: {}, watchesCut: 0, malformedLines: 0, storms: 0 } };
  }

  /** Starts `west`'s server, seeds both clusters' workloads, and starts the controller with both clusters joined. */
  async start(): Promise<void> {
    const { home, namespace, random } = this.options;
    this.west = await startApiServer({ logger: silentLogger, historyWindow: this.options.historyWindow, bookmarkIntervalMs: 5_000 });
    this.westFaults = new FaultInjector(this.west, random, this.options.faults);
    this.stats.westFaults = this.westFaults.stats;
    for (const server of [home, this.west]) {
      server.put({ group: '', version: 'v1', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      this.workloads.push(
        new Workload({
          ...this.options.workload,
          // The tracker follows one view per namespace: east's; west's subjects are checked after each round.
          touched: server === home ? this.options.workload.touched : () => {},
          server,
          kubeConfig: server.kubeConfig(),
          namespace,
          random,
          rate: this.options.rate,
          sources: this.options.sources,
          apps: 0,
        }),
      );
    }
    for (const w of this.workloads) w.seed();
    const guarded = chaoticReconcile<ConfigMap>(NAME, (key, ctx) => reconcileMirror(splitClusterKey(key).key, ctx), this.options.chaos, this.options.guard, random, {
    });
    this.ctl = controller<ConfigMap>({
      name: NAME,
      kubeConfig: home.kubeConfig(),
      clusters: this.events,
      for: configMaps(namespace),
      owns: [configMaps(namespace)],
      logger: silentLogger,
      concurrency: this.options.concurrency,
      signal: this.stop.signal,
      gracePeriod: 5_000,
      reconcile: async (key, ctx) => {
        const problem = isolationProblem(key, ctx, this.joined);
        if (problem !== undefined) this.options.violations.record('cluster-isolation', problem);
        return guarded(key, ctx);
      },
    });
    this.running = runAll([{ name: NAME, controller: this.ctl as unknown as Controller }], this.stop.signal, (name, outcome) => {
      const cluster = outcome.key.slice(0, outcome.key.indexOf('/'));
      this.stats.reconcilesByCluster[cluster] = (this.stats.reconcilesByCluster[cluster] ?? 0) + 1;
      this.options.onOutcome(name, outcome);
    }, this.options.onEnded);
    this.join('east', home.kubeConfig());
    this.join('west', this.west.kubeConfig());
  }

  synced(): boolean {
    return this.ctl?.synced() === true && this.joined.size === 2;
  }

  /** Faults on `west`'s server, and `west` leaving and joining again. */
  startFaults(): void {
    this.westFaults?.start();
    if (this.churnTimer !== undefined) return;
    const next = () => {
      this.churnTimer = setTimeout(() => {
        if (this.joined.has('west')) {
          this.stats.leaves++;
          this.joined.delete('west');
          this.events.next({ type: 'Left', name: 'west' });
          this.rejoinTimer = setTimeout(() => this.rejoin(), 500 + this.options.random.next() * 2_500);
        }
        next();
      }, this.options.random.exponential(this.options.meanChurnIntervalMs));
    };
    next();
  }

  /** No faults, no churn: `west` joined. */
  stopFaults(): void {
    this.westFaults?.stop();
    clearTimeout(this.churnTimer);
    clearTimeout(this.rejoinTimer);
    this.churnTimer = undefined;
    this.rejoin();
  }

  /** Every mirror subject of both clusters that has not converged, named by cluster. */
  unconverged(names: readonly string[]): string[] {
    return this.views().flatMap(({ cluster, view }) =>
      allSubjects(view, { mirror: names }).flatMap((id) => {
        const { kind, name } = parseSubject(id);
        const problem = subjectProblem(view, kind, name);
        return problem === undefined ? [] : [`${cluster} ${id}: ${problem}`];
      }),
    );
  }

  /** Where the controller's store differs from each cluster's server, cluster by cluster (its keys carry the cluster). */
  storeMismatches(): string[] {
    const store = this.ctl?.store;
    if (store === undefined) return [];
    return this.servers().flatMap(({ cluster, server }) => {
      const prefix = `${cluster}/`;
      const ofCluster = { get: (key: string) => store.get(prefix + key), keys: () => store.keys().filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length)) } as Lister;
      return storeDifferences(ofCluster, server.snapshot(resources.configmaps(this.options.namespace)))
        .slice(0, 5)
        .map((d) => `${NAME} store configmaps, cluster ${cluster}: ${d}`);
    });
  }

  names(): string[] {
    return Array.from({ length: this.options.sources }, (_, i) => sourceName(i));
  }

  report(): FleetReport {
    return this.stats;
  }

  async close(): Promise<void> {
    clearTimeout(this.churnTimer);
    clearTimeout(this.rejoinTimer);
    this.westFaults?.stop();
    await Promise.all(this.workloads.map((w) => w.stop()));
    this.stop.abort();
    await stopWithin(this.running, 10_000);
    await this.west?.close();
  }

  private servers(): { cluster: string; server: ApiServer }[] {
    return [{ cluster: 'east', server: this.options.home }, ...(this.west ? [{ cluster: 'west', server: this.west }] : [])];
  }

  private views() {
    return this.servers().map(({ cluster, server }) => ({ cluster, view: clusterView(server, this.options.namespace, false) }));
  }

  private rejoin(): void {
    if (this.west === undefined || this.joined.has('west')) return;
    this.stats.joins++;
    this.join('west', this.west.kubeConfig());
  }

  private join(name: string, kubeConfig: KubeConfig): void {
    // A client of our own, so that each run can be checked to get its cluster's; informers with the soak's backoff and pages.
    const client = kubeClient(kubeConfig, { fieldManager: NAME, logger: silentLogger });
    const informers = new InformerFactory(kubeConfig, { logger: silentLogger, pageSize: 100, backoff: { maxMs: this.options.watchBackoffMaxMs } });
    this.joined.set(name, client);
    this.events.next({ type: 'Joined', name, cluster: { kubeConfig, client, informers } });
  }
}
