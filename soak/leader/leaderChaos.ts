import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { controller, eventRecorder, InformerFactory, silentLogger, type Controller, type EventRecorder, type ReconcileOutcome } from 'rxkube';
import { leaderElectionJitterFactor } from '../../src/sinks/leader/leaderElection.js';
import { inMemoryLeaseClient, pausable, type PausableLeaseClient } from 'rxkube/testing';
import { dilatedScheduler } from '../../test/support/dilatedScheduler.js';
import { chaoticReconcile, type InFlightGuard, type ReconcileChaos } from '../chaosReconcile.js';
import { mirrorOptions } from '../mirror/controller.js';
import type { ConfigMap } from '../mirror/types.js';
import type { Random } from '../random.js';
import { runAll, stopWithin, type Running } from '../running.js';
import { countingMonitor, type SourceStats } from '../sourceMonitor.js';
import { distribution, type Distribution } from '../stats.js';
import type { Violations } from '../violations.js';
import { leadingAfterHandover, recordingLeaseClient, takeovers, type LeadingInterval, type LeaseRead, type LeaseWrite } from './leaseRecorder.js';

export interface LeaderChaosOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  random: Random;
  violations: Violations;
  guard: InFlightGuard;
  chaos: ReconcileChaos;
  /** Replica clock ms per real ms: client-go's 15 s lease lasts 15/factor real seconds. */
  factor: number;
  replicas: number;
  /** Mean real ms between pauses of the leader's renewals. */
  meanPauseIntervalMs: number;
  watchBackoffMaxMs: number;
  eventSeriesWindowMs: number;
  onOutcome: (controller: string, outcome: ReconcileOutcome) => void;
  onEnded: (controller: string, how: string) => void;
}

/** One leadership term: consecutive reconciles of one replica. Seconds since the scenario began. */
export interface Term {
  identity: string;
  from: number;
  to: number;
  reconciles: number;
}

export interface LeaderReport {
  replicas: number;
  factor: number;
  lease: { durationMs: number; renewDeadlineMs: number; retryPeriodMs: number };
  /** Takeover bound (replica-clock ms) and how it is made up. */
  takeoverBoundMs: number;
  takeoverBound: string;
  pauses: Record<'hang' | 'fail', number>;
  takeovers: number;
  /** Replica-clock ms from the old leader's last renewal to the new leader's acquisition. */
  takeoverGapMs: Distribution;
  reconcilesByReplica: Record<string, number>;
  /** Seconds each replica spent in its terms (from its first reconcile of a term to the end of its last). */
  secondsByReplica: Record<string, number>;
  /** Leadership terms as seen in who reconciled when (the last 200). */
  terms: Term[];
  termCount: number;
  /** Times every replica's leading() was read together. */
  leadingSamples: number;
  sources: SourceStats;
}

const leaseDuration = 15_000;
const renewDeadline = 10_000;
const retryPeriod = 2_000;
/** Up to 100 ms (replica clock) each way for a lease call. */
const maxLegMs = 100;

/**
 * Leader election under chaos: `replicas` replicas of the mirror controller
 * in one namespace, each with its own identity, informers, metrics registry
 * and lease client, all on a dilated clock (`factor`× real time) and all
 * sharing one in-memory lease store. At random intervals the current
 * leader's lease client is paused (hanging or failing every call) for a
 * random while, long enough or not for a failover, then resumed.
 *
 * Checked live: no reconcile of one replica starts while another replica
 * has one in flight, and no two replicas' leading() are true in the same
 * sample (every 10 ms). Checked from the lease's write history: each
 * takeover comes no sooner than the lease duration after the old leader's
 * last accepted renewal, and within the bound; only the holder clears the
 * lease; and no sample shows the old leader's leading() still true at or
 * after the new leader's acquisition.
 */
export class LeaderChaos {
  readonly controllers: Controller<ConfigMap>[] = [];
  private readonly recorders: EventRecorder[] = [];
  private readonly clients = new Map<string, PausableLeaseClient>();
  private readonly writes: LeaseWrite[] = [];
  private readonly reads: LeaseRead[] = [];
  private readonly active = new Map<string, number>();
  private readonly reconciles: Record<string, number> = {};
  private readonly terms: Term[] = [];
  private termCount = 0;
  private readonly pauses = { hang: 0, fail: 0 };
  private readonly store = inMemoryLeaseClient();
  private readonly monitor = countingMonitor();
  private readonly started = performance.now();
  private readonly stop = new AbortController();
  private pauseTimer: NodeJS.Timeout | undefined;
  private sampleTimer: NodeJS.Timeout | undefined;
  /** Every replica's leading(), sampled: intervals of true, on the replicas' clock (the last 2000). */
  private readonly leadingIntervals: LeadingInterval[] = [];
  private readonly openIntervals = new Map<string, LeadingInterval>();
  private leadingSamples = 0;
  private resumeTimer: NodeJS.Timeout | undefined;
  private running: Running | undefined;
  private readonly leaseName: string;

  constructor(private readonly options: LeaderChaosOptions) {
    this.leaseName = 'mirror-leader';
    const { kubeConfig, namespace, random, factor } = options;
    for (let i = 0; i < options.replicas; i++) {
      const identity = `replica-${i}`;
      const scheduler = dilatedScheduler(factor);
      const client = pausable(recordingLeaseClient(this.store, identity, this.writes, scheduler, () => random.next() * maxLegMs, this.reads));
      this.clients.set(identity, client);
      this.reconciles[identity] = 0;
      // Replicas list through a watch (sendInitialEvents), the main controllers page by page: both ways under the faults.
      const informers = new InformerFactory(kubeConfig, {
        logger: silentLogger,
        scheduler,
        monitor: this.monitor,
        streamingList: true,
        backoff: { maxMs: options.watchBackoffMaxMs },
      });
      const base = mirrorOptions(kubeConfig, { namespace });
      const recorder = eventRecorder({ kubeConfig, reportingController: 'mirror-leader', reportingInstance: identity, logger: silentLogger, seriesWindow: options.eventSeriesWindowMs });
      this.recorders.push(recorder);
      const c = controller<ConfigMap>({
        ...base,
        name: 'mirror-leader',
        logger: silentLogger,
        scheduler,
        informers,
        concurrency: 2,
        registry: new Registry(),
        recorder,
        signal: this.stop.signal,
        gracePeriod: 5_000,
        leaderElection: { lease: `${namespace}/${this.leaseName}`, identity, client: client.client, leaseDuration, renewDeadline, retryPeriod },
        reconcile: chaoticReconcile(`mirror-leader/${identity}`, base.reconcile, options.chaos, options.guard, random, {
          onStart: () => this.reconcileStarted(identity),
          onEnd: () => this.reconcileEnded(identity),
        }),
      });
      this.controllers.push(c);
    }
  }

  start(): void {
    this.sampleTimer ??= setInterval(() => this.sampleLeading(), 10);
    this.running ??= runAll(
      this.controllers.map((c, i) => ({ name: `mirror-leader/replica-${i}`, controller: c as never })),
      this.stop.signal,
      this.options.onOutcome,
      this.options.onEnded,
    );
  }

  /**
   * Starts pausing the leader's renewals at random. The first pause after
   * each start hangs the leader for twice the lease duration, so every
   * round has at least one failover; later ones last a random while.
   */
  startPausing(): void {
    if (this.pauseTimer !== undefined) return;
    let first = true;
    const next = () => {
      this.pauseTimer = setTimeout(() => {
        if (this.pauseLeader(first)) first = false;
        next();
      }, this.options.random.exponential(this.options.meanPauseIntervalMs));
    };
    next();
  }

  /** Stops pausing and resumes every client. */
  stopPausing(): void {
    clearTimeout(this.pauseTimer);
    clearTimeout(this.resumeTimer);
    this.pauseTimer = this.resumeTimer = undefined;
    for (const c of this.clients.values()) if (c.paused !== undefined) c.resume();
  }

  /** True once some replica leads (has the lease and renews it). */
  leading(): boolean {
    return this.controllers.some((c) => c.leading());
  }

  async close(): Promise<void> {
    clearInterval(this.sampleTimer);
    this.stopPausing();
    this.stop.abort();
    await stopWithin(this.running, 10_000);
    await Promise.all(this.recorders.map((r) => r.close()));
  }

  report(): LeaderReport {
    // What a takeover takes when all goes well (the check itself is in tries, see takeovers()).
    const bound = leaseDuration + 2 * retryPeriod * (1 + leaderElectionJitterFactor) + 2 * maxLegMs;
    // The clock's resolution: one real ms, in replica ms.
    const found = takeovers(this.writes, leaseDuration, this.reads, this.options.factor);
    for (const v of found.violations) this.options.violations.record('leader-takeover', v);
    const intervals = [...this.leadingIntervals, ...this.openIntervals.values()];
    for (const v of leadingAfterHandover(found.handovers, intervals)) this.options.violations.record('leader-overlap', v);
    return {
      replicas: this.options.replicas,
      factor: this.options.factor,
      lease: { durationMs: leaseDuration, renewDeadlineMs: renewDeadline, retryPeriodMs: retryPeriod },
      takeoverBoundMs: bound,
      takeoverBound:
        `checked in the lease's terms, not in ms: the new holder takes the lease on its first try after the lease expired in its own eyes ` +
        `(leaseDuration ${leaseDuration} after it first read the old holder's last renewal); on an idle machine that is within ` +
        `${bound} replica-clock ms (${this.options.factor}× real time) of the last renewal: the lease duration, 2 jittered retry periods, the lease calls' latency`,
      pauses: { ...this.pauses },
      takeovers: found.count,
      takeoverGapMs: distribution(found.gaps),
      reconcilesByReplica: { ...this.reconciles },
      secondsByReplica: this.terms.reduce<Record<string, number>>((acc, t) => ({ ...acc, [t.identity]: Math.round(((acc[t.identity] ?? 0) + t.to - t.from) * 10) / 10 }), {}),
      terms: [...this.terms],
      termCount: this.termCount,
      leadingSamples: this.leadingSamples,
      sources: this.monitor.stats,
    };
  }

  /** The takeover figures so far, without recording violations (for progress lines). */
  get takeoverCount(): number {
    return takeovers(this.writes, leaseDuration, undefined, Infinity).count;
  }

  /** Pauses the current leader's lease client, unless one is paused already or nobody leads; true if it did. */
  private pauseLeader(long: boolean): boolean {
    if ([...this.clients.values()].some((c) => c.paused !== undefined)) return false;
    const holder = this.store.lease(this.options.namespace, this.leaseName)?.spec?.holderIdentity;
    const client = holder === undefined ? undefined : this.clients.get(holder);
    if (client === undefined) return false;
    const { random, factor } = this.options;
    const mode = long || random.chance(0.5) ? 'hang' : 'fail';
    this.pauses[mode]++;
    client.pause(mode);
    // From well inside the renew deadline to well past the lease duration, in real ms.
    const ms = long ? (2 * leaseDuration) / factor : random.int(Math.round((0.3 * renewDeadline) / factor), Math.round((2.5 * leaseDuration) / factor));
    this.resumeTimer = setTimeout(() => client.resume(), ms);
    return true;
  }

  /**
   * Reads every replica's leading() at once: two true together is an
   * overlap whatever their reconciles do (a run in flight on both at the
   * same instant is rare). The intervals are kept to compare, in report(),
   * when the old leader stopped saying so with when the new one acquired.
   */
  private sampleLeading(): void {
    const t = Date.now() * this.options.factor; // the replicas' dilated clock
    this.leadingSamples++;
    const leaders: string[] = [];
    this.controllers.forEach((c, i) => {
      const identity = `replica-${i}`;
      const open = this.openIntervals.get(identity);
      if (c.leading()) {
        leaders.push(identity);
        if (open) open.to = t;
        else this.openIntervals.set(identity, { identity, from: t, to: t });
      } else if (open) {
        this.openIntervals.delete(identity);
        this.leadingIntervals.push(open);
        if (this.leadingIntervals.length > 2_000) this.leadingIntervals.splice(0, this.leadingIntervals.length - 2_000);
      }
    });
    if (leaders.length > 1) this.options.violations.record('leader-overlap', `${leaders.join(' and ')} all said leading() at once`);
  }

  private reconcileStarted(identity: string): void {
    for (const [other, n] of this.active) {
      if (other !== identity && n > 0) this.options.violations.record('leader-overlap', `${identity} started a reconcile while ${other} had ${n} in flight`);
    }
    this.active.set(identity, (this.active.get(identity) ?? 0) + 1);
    this.reconciles[identity] = (this.reconciles[identity] ?? 0) + 1;
    const t = Math.round(performance.now() - this.started) / 1000;
    const last = this.terms[this.terms.length - 1];
    if (last?.identity === identity) last.reconciles++;
    else {
      this.termCount++;
      this.terms.push({ identity, from: t, to: t, reconciles: 1 });
      if (this.terms.length > 200) this.terms.splice(0, this.terms.length - 200);
    }
  }

  private reconcileEnded(identity: string): void {
    this.active.set(identity, (this.active.get(identity) ?? 1) - 1);
    const last = this.terms[this.terms.length - 1];
    if (last?.identity === identity) last.to = Math.round(performance.now() - this.started) / 1000;
  }
}
