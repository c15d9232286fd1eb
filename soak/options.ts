import type { FaultWeather } from './faultInjector.js';

/** Everything a soak run can be told; `soakDefaults` are what `npm run soak` uses. */
export interface SoakOptions {
  /** Total time to run, ms (rounds of faults, each followed by a calm phase). */
  durationMs: number;
  /** Run exactly this many rounds (then `durationMs` is ignored). */
  rounds?: number;
  /** Length of the first round of faults, ms: its calm phase gives the heap baseline. */
  firstRoundMs: number;
  /** Length of each later round of faults, ms. */
  roundMs: number;
  seed: number;
  /** Workload operations per second in the main namespace. */
  rate: number;
  /** Share of the workload's operations sent over HTTP. */
  httpShare: number;
  maxHttpInFlight: number;
  /** Mirror sources and apps in the main namespace. */
  sources: number;
  apps: number;
  /** Share of the source operations on fresh names, and how many fresh sources live at most (see `WorkloadOptions.freshShare`). */
  freshShare: number;
  freshLive: number;
  /** When faults come: storms and lulls. */
  faults: FaultWeather;
  /** Probability that a reconcile fails on purpose while faults run. */
  reconcileFailureRate: number;
  /** Each reconcile first waits a random 0..this ms. */
  maxReconcileDelayMs: number;
  /** Reconciles in flight per controller. */
  concurrency: number;
  /** The controllers' overall retry budget per second. */
  retryQps: number;
  /** The informers' longest backoff between failed lists/watches, ms (rxkube's default is 30 000). */
  watchBackoffMaxMs: number;
  /** After the faults stop, every subject must converge, and every store match the server, within this, ms. */
  convergenceBoundMs: number;
  /**
   * When set, the bound after the faults is progress instead: the calm
   * phase fails once this long has passed with no reconcile and no fewer
   * subjects (or store differences) left, and `convergenceBoundMs` only
   * guards against a hang. For a run on a machine whose load is unknown.
   */
  convergenceStallMs?: number;
  /**
   * Time-bounded memory, shortened so that it is at its steady size before
   * the heap baseline (after the first minute): Events on the server expire
   * this long after their last write (kube's --event-ttl, 1 h by default),
   * and the recorders join repeats into a series within this window (6 min
   * by default), ms.
   */
  eventTtlMs: number;
  eventSeriesWindowMs: number;
  /** The embedded server's watch history, in changes. */
  historyWindow: number;
  /** The leader-election scenario, or undefined for none. */
  leader: { replicas: number; factor: number; rate: number; sources: number; meanPauseIntervalMs: number } | undefined;
  /** The sharding scenario (`--sharded`, in the leader scenario's namespace and instead of it), or undefined for none. */
  sharded?: { replicas: number; factor: number; rate: number; sources: number; meanFaultIntervalMs: number } | undefined;
  /**
   * The many-clusters scenario (`FleetChaos`): one mirror controller over
   * the main server and a second one, `west` leaving and joining again
   * every `meanChurnIntervalMs` on average while faults run; or undefined for none.
   */
  fleet?: { sources: number; rate: number; meanChurnIntervalMs: number } | undefined;
  /** Progress lines, about every `progressMs`. */
  progress: (line: string) => void;
  progressMs: number;
  /** Heap and RSS samples every this many ms. */
  sampleMs: number;
}

export const soakDefaults: Omit<SoakOptions, 'seed' | 'progress'> = {
  durationMs: 10 * 60_000,
  firstRoundMs: 60_000,
  roundMs: 120_000,
  rate: 200,
  httpShare: 0.5,
  maxHttpInFlight: 32,
  sources: 400,
  apps: 150,
  freshShare: 0.3,
  freshLive: 40,
  faults: { meanIntervalMs: 500, stormMs: [3_000, 8_000], lullMs: [4_000, 10_000] },
  reconcileFailureRate: 0.1,
  maxReconcileDelayMs: 20,
  concurrency: 8,
  retryQps: 100,
  watchBackoffMaxMs: 4_000,
  convergenceBoundMs: 30_000,
  eventTtlMs: 30_000,
  eventSeriesWindowMs: 30_000,
  historyWindow: 10_000,
  leader: { replicas: 3, factor: 5, rate: 5, sources: 20, meanPauseIntervalMs: 3_000 },
  sharded: undefined,
  fleet: { sources: 20, rate: 5, meanChurnIntervalMs: 6_000 },
  progressMs: 10_000,
  sampleMs: 5_000,
};

/** `--sharded`: three sharded replicas at 5× time, a fault of a member every 2 s on average, 40 sources. */
export const shardedDefaults = { replicas: 3, factor: 5, rate: 10, sources: 40, meanFaultIntervalMs: 2_000 } as const;
