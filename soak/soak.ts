import { readdirSync } from 'node:fs';
import { kubeClient, silentLogger } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { installPodAutoscalerCrd } from '../examples/podautoscaler/crd.js';
import { InFlightGuard, type ReconcileChaos } from './chaosReconcile.js';
import { SoakControllers } from './controllers.js';
import { EventTtl } from './eventTtl.js';
import { FaultInjector } from './faultInjector.js';
import { clusterView, type ClusterView } from './invariants/clusterView.js';
import { allSubjects, subjectProblem } from './invariants/converged.js';
import { ConvergenceTracker } from './invariants/convergenceTracker.js';
import { checkHeap, fullGc, heapAfterGc } from './invariants/heap.js';
import { watchProcessErrors } from './invariants/processErrors.js';
import { storeDifferences } from './invariants/storesMatch.js';
import { LeaderChaos } from './leader/leaderChaos.js';
import { ShardChaos } from './shard/shardChaos.js';
import { FleetChaos } from './fleet/fleetChaos.js';
import { MemorySampler, mb } from './memorySampler.js';
import type { SoakOptions } from './options.js';
import { OutcomeCounter } from './outcomes.js';
import { seededRandom } from './random.js';
import { buildReport, type ReportInput, type RoundReport, type SoakReport } from './report.js';
import { appName, parseSubject, sourceName } from './subjects.js';
import { Violations } from './violations.js';
import { resources, Workload } from './workload.js';

/** The namespace of the three controllers, and that of the leader-election scenario. */
export const MAIN = 'soak';
export const LEADER = 'soak-leader';
export const FLEET = 'soak-fleet';

/** What the server holds, counted at each calm phase. */
const counted = {
  configmaps: { group: '', version: 'v1', resource: 'configmaps' },
  deployments: { group: 'apps', version: 'v1', resource: 'deployments' },
  podautoscalers: { group: 'autoscaling.rxkube.dev', version: 'v1', resource: 'podautoscalers' },
  events: { group: 'events.k8s.io', version: 'v1', resource: 'events' },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the soak: the embedded API server, the three controllers sharing one
 * informer factory, the leader-election scenario, and the workload; then
 * rounds of faults, each followed by a calm phase in which everything must
 * converge and every store must match the server within the bound. Returns
 * the report; violations are counted in it, never thrown.
 */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const started = Date.now();
  const violations = new Violations();
  const unwatch = watchProcessErrors(violations);
  const gc = fullGc();
  const random = seededRandom(options.seed);
  const sampler = new MemorySampler(started, options.sampleMs);
  const outcomes = new OutcomeCounter(violations);
  const tracker = new ConvergenceTracker();
  const guard = new InFlightGuard(violations);
  const chaos: ReconcileChaos = { failureRate: 0, maxDelayMs: options.maxReconcileDelayMs };
  const onOutcome = outcomes.add.bind(outcomes);
  const onEnded = (name: string, how: string) => violations.record('controller-ended', `${name} ${how}`);
  const rounds: RoundReport[] = [];
  const timers: NodeJS.Timeout[] = [];
  let server: ApiServer | undefined;
  let controllers: SoakControllers | undefined;
  let leader: LeaderChaos | undefined;
  let shard: ShardChaos | undefined;
  let fleet: FleetChaos | undefined;
  let workloads: Workload[] = [];
  let faults: FaultInjector | undefined;
  let eventTtl: EventTtl | undefined;
  let phase = 'setup';
  let gathered: Pick<ReportInput, 'heap' | 'faults' | 'workloads' | 'convergence' | 'sources' | 'leader' | 'shard' | 'fleet' | 'watches' | 'expiredEvents'> | undefined;
  sampler.start();
  try {
    // Bookmarks every 5 s rather than kube's 60 s, so that resuming from a bookmark's resourceVersion is exercised too.
    server = await startApiServer({ logger: silentLogger, historyWindow: options.historyWindow, bookmarkIntervalMs: 5_000 });
    const api = server;
    const kubeConfig = api.kubeConfig();
    for (const name of [MAIN, LEADER]) api.put({ group: '', version: 'v1', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await installPodAutoscalerCrd(kubeClient(kubeConfig, { fieldManager: 'soak', logger: silentLogger }));

    const touched = (id: string) => tracker.touch(id);
    const common = { server: api, kubeConfig, random, httpShare: options.httpShare, maxHttpInFlight: options.maxHttpInFlight, freshShare: options.freshShare, freshLive: options.freshLive, touched };
    workloads = [new Workload({ ...common, namespace: MAIN, rate: options.rate, sources: options.sources, apps: options.apps })];
    const second = options.sharded ?? options.leader;
    if (second) workloads.push(new Workload({ ...common, namespace: LEADER, rate: second.rate, sources: second.sources, apps: 0 }));
    for (const w of workloads) w.seed();

    controllers = new SoakControllers({
      kubeConfig,
      namespace: MAIN,
      random,
      guard,
      chaos,
      concurrency: options.concurrency,
      retryQps: options.retryQps,
      watchBackoffMaxMs: options.watchBackoffMaxMs,
      eventSeriesWindowMs: options.eventSeriesWindowMs,
      onOutcome,
      onEnded,
    });
    controllers.start();
    if (options.leader) {
      leader = new LeaderChaos({
        kubeConfig,
        namespace: LEADER,
        random,
        violations,
        guard,
        chaos,
        factor: options.leader.factor,
        replicas: options.leader.replicas,
        meanPauseIntervalMs: options.leader.meanPauseIntervalMs,
        watchBackoffMaxMs: options.watchBackoffMaxMs,
        eventSeriesWindowMs: options.eventSeriesWindowMs,
        onOutcome,
        onEnded,
      });
      leader.start();
    }
    if (options.sharded) {
      shard = new ShardChaos({
        kubeConfig,
        namespace: LEADER,
        random,
        violations,
        guard,
        chaos,
        factor: options.sharded.factor,
        replicas: options.sharded.replicas,
        meanFaultIntervalMs: options.sharded.meanFaultIntervalMs,
        watchBackoffMaxMs: options.watchBackoffMaxMs,
        eventSeriesWindowMs: options.eventSeriesWindowMs,
        onOutcome,
        onEnded,
      });
      shard.start();
    }
    if (options.fleet) {
      fleet = new FleetChaos({
        home: api,
        namespace: FLEET,
        // A stream of its own: the fleet leaves the main scenario's faults and workload as a seed gives them without it.
        random: seededRandom(options.seed + 1),
        violations,
        guard,
        chaos,
        sources: options.fleet.sources,
        rate: options.fleet.rate,
        meanChurnIntervalMs: options.fleet.meanChurnIntervalMs,
        faults: options.faults,
        historyWindow: options.historyWindow,
        concurrency: options.concurrency,
        watchBackoffMaxMs: options.watchBackoffMaxMs,
        workload: { httpShare: 0, maxHttpInFlight: options.maxHttpInFlight, freshShare: options.freshShare, freshLive: options.freshLive, touched },
        onOutcome,
        onEnded,
      });
      await fleet.start();
      workloads.push(...fleet.workloads);
    }
    faults = new FaultInjector(api, random, options.faults);
    eventTtl = new EventTtl(api, options.eventTtlMs);
    eventTtl.start();

    const views = (): ClusterView[] => [clusterView(api, MAIN, true), ...(leader || shard ? [clusterView(api, LEADER, false)] : []), ...(fleet ? [clusterView(api, FLEET, false)] : [])];
    const names = {
      [MAIN]: { mirror: range(options.sources).map(sourceName), autoscaler: range(options.apps).map(appName), rollout: range(options.apps).map(appName) },
      [LEADER]: { mirror: range(second?.sources ?? 0).map(sourceName) },
    };
    const unconverged = (): string[] => [
      ...(fleet?.unconverged(fleet.names()) ?? []),
      ...views().filter((view) => view.namespace !== FLEET).flatMap((view) =>
        allSubjects(view, names[view.namespace as typeof MAIN] ?? {}).flatMap((id) => {
          const { kind, name } = parseSubject(id);
          const problem = subjectProblem(view, kind, name);
          return problem === undefined ? [] : [`${id}: ${problem}`];
        }),
      ),
    ];
    const storeMismatches = (): string[] => {
      const all = [...controllers!.all.map((c) => ({ c, ns: MAIN })), ...(leader?.controllers ?? []).map((c) => ({ c, ns: LEADER })), ...(shard?.controllers ?? []).map((c) => ({ c, ns: LEADER }))];
      // Controllers sharing an informer show one store (one Lister) under their own names: compare it once.
      const seen = new Set<unknown>();
      const out: string[] = [];
      for (const { c, ns } of all) {
        for (const [name, store] of Object.entries(c.stores)) {
          if (seen.has(store)) continue;
          seen.add(store);
          const ref = name === 'configmaps' ? resources.configmaps(ns) : name === 'deployments.apps' ? resources.deployments(ns) : resources.podautoscalers(ns);
          for (const d of storeDifferences(store, api.snapshot(ref)).slice(0, 5)) out.push(`${c.name} store ${name}: ${d}`);
        }
      }
      return [...out, ...(fleet?.storeMismatches() ?? [])];
    };

    await waitUntil(() => controllers!.synced() && (leader?.leading() ?? true) && (shard?.leading() ?? true) && (fleet?.synced() ?? true), 60_000);
    timers.push(setInterval(() => tracker.sweep(views()), 250));
    let last = { at: Date.now(), reconciles: 0, ops: 0 };
    timers.push(
      setInterval(() => {
        const now = Date.now();
        const ops = workloads.reduce((n, w) => n + Object.values(w.stats.operations).reduce((a, b) => a + b, 0), 0);
        const rate = (x: number, y: number) => Math.round((x - y) / ((now - last.at) / 1000));
        const { heapUsedMB, rssMB } = sampler.samples[sampler.samples.length - 1] ?? { heapUsedMB: 0, rssMB: 0 };
        options.progress(
          `${String(Math.round((now - started) / 1000)).padStart(5)} s  ${phase.padEnd(9)} ops/s ${String(rate(ops, last.ops)).padStart(4)}  ` +
            `reconciles/s ${String(rate(outcomes.total, last.reconciles)).padStart(4)}  in flight ${String(guard.inFlight).padStart(3)}  ` +
            `unconverged ${String(tracker.pending).padStart(4)}  faults ${Object.values(faults!.stats.injected).reduce((a, b) => a + b, 0)}  ` +
            `takeovers ${leader?.takeoverCount ?? shard?.takeoverCount ?? 0}  heap ${heapUsedMB} MB  rss ${rssMB} MB  violations ${violations.total}`,
        );
        last = { at: now, reconciles: outcomes.total, ops };
      }, options.progressMs),
    );

    for (let round = 1; ; round++) {
      const elapsed = Date.now() - started;
      const length = round === 1 ? options.firstRoundMs : options.rounds !== undefined ? options.roundMs : Math.min(options.roundMs, options.durationMs - elapsed);
      if (options.rounds !== undefined ? round > options.rounds : round > 1 && length < Math.min(20_000, options.roundMs)) break;
      // Faults.
      phase = `round ${round}`;
      chaos.failureRate = options.reconcileFailureRate;
      faults.start();
      leader?.startPausing();
      shard?.startPausing();
      fleet?.startFaults();
      for (const w of workloads) w.start();
      await sleep(length);
      // Calm: no writes, no faults; everything must converge.
      phase = `calm ${round}`;
      await Promise.all(workloads.map((w) => w.stop()));
      faults.stop();
      leader?.stopPausing();
      shard?.stopPausing();
      fleet?.stopFaults();
      chaos.failureRate = 0;
      const calmStart = performance.now();
      // With convergenceStallMs, the bound is progress: the phase goes on while reconciles run or
      // fewer subjects are left, and fails after that long without either (convergenceBoundMs then
      // only guards against a hang). Without it, convergenceBoundMs is the bound itself.
      let progress = { at: calmStart, reconciles: outcomes.total, left: Infinity };
      const within = () => {
        const now = performance.now();
        if (now - calmStart >= options.convergenceBoundMs) return false;
        return options.convergenceStallMs === undefined || now - progress.at < options.convergenceStallMs;
      };
      const moved = (leftNow: number) => {
        if (outcomes.total !== progress.reconciles || leftNow < progress.left) progress = { at: performance.now(), reconciles: outcomes.total, left: Math.min(leftNow, progress.left) };
      };
      let left = unconverged();
      while (left.length > 0 && within()) {
        await sleep(250);
        left = unconverged();
        moved(left.length);
      }
      const convergedMs = left.length === 0 ? performance.now() - calmStart : undefined;
      const howLong = (): string =>
        options.convergenceStallMs !== undefined && performance.now() - calmStart < options.convergenceBoundMs
          ? `no progress for ${options.convergenceStallMs} ms (no reconcile, no fewer left)`
          : `${options.convergenceBoundMs} ms after the faults stopped`;
      for (const problem of left) violations.record('convergence', `round ${round}: not converged, ${howLong()}: ${problem}`);
      let mismatches = storeMismatches();
      progress = { at: performance.now(), reconciles: outcomes.total, left: mismatches.length };
      while (mismatches.length > 0 && within()) {
        await sleep(250);
        mismatches = storeMismatches();
        moved(mismatches.length);
      }
      const storesMs = mismatches.length === 0 ? performance.now() - calmStart : undefined;
      for (const m of mismatches) violations.record('store-matches-server', `round ${round}: ${m}`);
      tracker.sweep(views());
      tracker.clear();
      const serverObjects = Object.fromEntries(Object.entries(counted).map(([name, ref]) => [name, api.snapshot(ref).length]));
      // The server's Events are the fixture's memory, not rxkube's, and how many the last half minute left depends on how busy it was.
      eventTtl.sweep(Date.now() + options.eventTtlMs);
      rounds.push({
        round,
        chaosSeconds: Math.round(length / 1000),
        endedAtSeconds: Math.round((Date.now() - started) / 1000),
        convergedMs: convergedMs === undefined ? undefined : Math.round(convergedMs),
        storesMatchedMs: storesMs === undefined ? undefined : Math.round(storesMs),
        unconverged: left.length,
        storeMismatches: mismatches.length,
        heapAfterGcMB: mb(heapAfterGc(gc)),
        ...handles(),
        serverObjects,
        recorderSeries: controllers.recorders.reduce((n, r) => n + r.stats().tracked, 0),
      });
      options.progress(`round ${round}: converged ${convergedMs === undefined ? 'NOT' : `in ${Math.round(convergedMs)} ms`}, stores ${storesMs === undefined ? 'DIFFER' : `match at ${Math.round(storesMs)} ms`}, heap after GC ${rounds[rounds.length - 1]!.heapAfterGcMB} MB`);
    }
    phase = 'report';
    const heap = checkHeap(rounds);
    if (heap.violation !== undefined) violations.record('heap-growth', heap.violation);
    gathered = {
      heap,
      faults: faults.stats,
      workloads: workloads.map((w) => w.stats),
      convergence: tracker.summary(),
      sources: controllers.sources,
      leader: leader?.report(),
      shard: shard?.report(),
      fleet: fleet?.report(),
      watches: api.openWatches(),
      expiredEvents: eventTtl.expired,
    };
  } finally {
    for (const t of timers) clearInterval(t);
    await Promise.all(workloads.map((w) => w.stop()));
    faults?.stop();
    eventTtl?.stop();
    await leader?.close();
    await shard?.close();
    await fleet?.close();
    await controllers?.close();
    await server?.close();
    sampler.stop();
    // Late rejections of requests cut by the shutdown still count.
    await sleep(200);
    unwatch();
  }
  // Built after the shutdown, so that what went wrong during it is in the report too.
  return buildReport({ ...gathered!, recorders: controllers!.recorderStats(), options, started, violations, rounds, outcomes, memory: sampler });
}

/** Open file descriptors (Linux; -1 elsewhere) and the event loop's active resources by kind. */
function handles(): { fds: number; handles: Record<string, number> } {
  let fds = -1;
  try {
    fds = readdirSync('/proc/self/fd').length;
  } catch {
    // Not Linux: the handle counts still tell.
  }
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return { fds, handles: counts };
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

async function waitUntil(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`the soak's controllers did not sync (and elect a leader) within ${ms} ms`);
    await sleep(50);
  }
}
