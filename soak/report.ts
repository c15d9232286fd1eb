import { cpus } from 'node:os';
import type { EventRecorderStats } from '../src/sinks/events/eventRecorder.js';
import type { LeaderReport } from './leader/leaderChaos.js';
import type { ShardReport } from './shard/shardChaos.js';
import type { FleetReport } from './fleet/fleetChaos.js';
import type { FaultStats } from './faultInjector.js';
import type { HeapCheck } from './invariants/heap.js';
import type { MemorySample, MemorySampler } from './memorySampler.js';
import type { SoakOptions } from './options.js';
import type { ControllerStats, OutcomeCounter } from './outcomes.js';
import type { SourceStats } from './sourceMonitor.js';
import { distribution, type Distribution } from './stats.js';
import { INVARIANTS, type Invariant, type ViolationSample, type Violations } from './violations.js';
import type { WorkloadStats } from './workload.js';

/** One round of faults and the calm phase after it. */
export interface RoundReport {
  round: number;
  chaosSeconds: number;
  /** Seconds since the start of the soak at the end of the calm phase. */
  endedAtSeconds: number;
  /** Ms from the faults stopping until every subject had converged (undefined: not within the bound). */
  convergedMs: number | undefined;
  /** Ms from the faults stopping until every store matched the server (undefined: not within the bound). */
  storesMatchedMs: number | undefined;
  unconverged: number;
  storeMismatches: number;
  heapAfterGcMB: number;
  /** Open file descriptors and active handles by kind (sockets, timers) at that point: a leak of connections shows here. */
  fds: number;
  handles: Record<string, number>;
  /** Objects the server held at that point, by resource (all namespaces), and Event series the main controllers' recorders held. */
  serverObjects: Record<string, number>;
  recorderSeries: number;
}

export interface ReportInput {
  options: SoakOptions;
  started: number;
  violations: Violations;
  rounds: RoundReport[];
  heap: HeapCheck;
  faults: FaultStats;
  workloads: WorkloadStats[];
  outcomes: OutcomeCounter;
  convergence: Record<string, Distribution>;
  sources: SourceStats;
  leader: LeaderReport | undefined;
  shard: ShardReport | undefined;
  fleet: FleetReport | undefined;
  memory: MemorySampler;
  watches: number;
  expiredEvents: number;
  recorders: Record<string, EventRecorderStats>;
}

export interface SoakReport {
  startedAt: string;
  seconds: number;
  seed: number;
  machine: { cpus: number; node: string };
  settings: Omit<SoakOptions, 'progress' | 'seed'>;
  bounds: { convergenceMs: number; convergence: string; takeoverMs: number | undefined; takeover: string | undefined };
  workload: { operations: number; perSecond: number; http: number; local: number; byOperation: Record<string, number>; httpErrors: Record<string, number>; skipped: number; freshNames: number };
  faults: FaultStats;
  reconciles: { total: number; perSecond: number; retries: number; byController: Record<string, ControllerStats> };
  /** What the main informers' list-watches did (re-lists, watch restarts, backoff retries). */
  sources: SourceStats;
  convergence: {
    /** From a workload write until the server showed its subject converged again, while faults ran (ms). */
    duringFaults: Record<string, Distribution>;
    /** From the faults stopping until everything had converged, per round (ms). */
    afterFaults: Distribution;
  };
  rounds: RoundReport[];
  /** What the main controllers' Event recorders did (failed: writes given up or refused). */
  recorders: Record<string, EventRecorderStats>;
  /** Events the soak's stand-in for kube's event TTL deleted. */
  expiredEvents: number;
  /** Watches open on the server just before the end: one per shared informer of the three controllers, one per replica. */
  openWatches: number;
  leader: LeaderReport | undefined;
  shard: ShardReport | undefined;
  /** The many-clusters scenario: its clusters, churn and reconciles per cluster. */
  fleet: FleetReport | undefined;
  memory: HeapCheck & { samples: MemorySample[]; peakRssMB: number; eventLoopDelayMs: { p50: number; p99: number; max: number } };
  invariants: Record<Invariant, { rule: string; violations: number }>;
  violations: { total: number; samples: ViolationSample[] };
  passed: boolean;
}

/** At most `n` samples, evenly spread, first and last kept. */
function thin<T>(items: readonly T[], n: number): T[] {
  if (items.length <= n) return [...items];
  return Array.from({ length: n }, (_, i) => items[Math.round((i * (items.length - 1)) / (n - 1))] as T);
}

export function buildReport(input: ReportInput): SoakReport {
  const { options, violations, rounds, outcomes, memory, leader } = input;
  const seconds = Math.round((Date.now() - input.started) / 1000);
  const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
  const byOperation: Record<string, number> = {};
  for (const w of input.workloads) for (const [k, v] of Object.entries(w.operations)) byOperation[k] = (byOperation[k] ?? 0) + v;
  const httpErrors: Record<string, number> = {};
  for (const w of input.workloads) for (const [k, v] of Object.entries(w.httpErrors)) httpErrors[k] = (httpErrors[k] ?? 0) + v;
  const operations = sum(byOperation);
  const http = Object.entries(byOperation).filter(([k]) => k.endsWith('.http')).reduce((n, [, v]) => n + v, 0);
  const chaosSeconds = rounds.reduce((n, r) => n + r.chaosSeconds, 0) || 1;
  const { progress: _progress, seed, ...settings } = options;
  return {
    startedAt: new Date(input.started).toISOString(),
    seconds,
    seed,
    machine: { cpus: cpus().length, node: process.version },
    settings,
    bounds: {
      convergenceMs: options.convergenceBoundMs,
      convergence:
        options.convergenceStallMs !== undefined
          ? `after the faults stop: every subject converged and every store equal to the server, with progress (a reconcile, or fewer left) ` +
            `at least every ${options.convergenceStallMs} ms (${options.convergenceStallMs / options.watchBackoffMaxMs} × the informers' longest backoff); ` +
            `${options.convergenceBoundMs} ms guards against a hang`
          : `after the faults stop: every subject converged and every store equal to the server within ${options.convergenceBoundMs} ms ` +
            `(2 × the informers' longest backoff with its jitter, ${2 * options.watchBackoffMaxMs} ms, for a watch that failed just before; ` +
            `the rest for the re-list, the workqueue's retry backoff and the reconciles the backlog needs)`,
      takeoverMs: leader?.takeoverBoundMs,
      takeover: leader?.takeoverBound,
    },
    workload: {
      operations,
      perSecond: Math.round(operations / chaosSeconds),
      http,
      local: operations - http,
      byOperation,
      httpErrors,
      skipped: input.workloads.reduce((n, w) => n + w.skipped, 0),
      freshNames: input.workloads.reduce((n, w) => n + w.freshNames, 0),
    },
    faults: input.faults,
    reconciles: { total: outcomes.total, perSecond: Math.round(outcomes.total / (seconds || 1)), retries: outcomes.retries, byController: outcomes.byController },
    sources: input.sources,
    convergence: {
      duringFaults: input.convergence,
      afterFaults: distribution(rounds.flatMap((r) => (r.convergedMs === undefined ? [] : [r.convergedMs]))),
    },
    rounds,
    recorders: input.recorders,
    expiredEvents: input.expiredEvents,
    openWatches: input.watches,
    leader,
    shard: input.shard,
    fleet: input.fleet,
    memory: {
      ...input.heap,
      samples: thin(memory.samples, 120),
      peakRssMB: Math.max(0, ...memory.samples.map((s) => s.rssMB)),
      eventLoopDelayMs: memory.eventLoopDelay(),
    },
    invariants: Object.fromEntries(
      (Object.keys(INVARIANTS) as Invariant[]).map((k) => [k, { rule: INVARIANTS[k], violations: violations.counts[k] }]),
    ) as SoakReport['invariants'],
    violations: { total: violations.total, samples: violations.samples },
    // A heap comparison is part of passing (a check skipped is recorded as a violation too; this says it twice).
    passed: violations.total === 0 && input.heap.growthPercent !== undefined,
  };
}
