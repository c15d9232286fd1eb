import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { Subscription } from 'rxjs';
import { controller, eventRecorder, InformerFactory, silentLogger, type Controller, type EventRecorder, type ReconcileOutcome } from 'rxkube';
import { shardLeaseClient } from '../../src/sinks/leader/shardLeaseClient.js';
import { memoryTransport } from '../../src/testing/memory/memoryTransport.js';
import { virtualServer } from '../../src/testing/memory/virtualServer.js';
import { dilatedScheduler } from '../../test/support/dilatedScheduler.js';
import { pausableShard, type PausableShardClient } from '../../test/support/shardClients.js';
import { chaoticReconcile, type InFlightGuard, type ReconcileChaos } from '../chaosReconcile.js';
import { mirrorOptions } from '../mirror/controller.js';
import type { ConfigMap } from '../mirror/types.js';
import type { Random } from '../random.js';
import { countingMonitor, type SourceStats } from '../sourceMonitor.js';
import type { Violations } from '../violations.js';

export interface ShardChaosOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  random: Random;
  violations: Violations;
  guard: InFlightGuard;
  chaos: ReconcileChaos;
  /** Replica clock ms per real ms: client-go's 15 s lease lasts 15/factor real seconds. */
  factor: number;
  replicas: number;
  /** Mean real ms between faults of the members (pauses, kills). */
  meanFaultIntervalMs: number;
  watchBackoffMaxMs: number;
  eventSeriesWindowMs: number;
  onOutcome: (controller: string, outcome: ReconcileOutcome) => void;
  onEnded: (controller: string, how: string) => void;
}

export interface ShardReport {
  replicas: number;
  factor: number;
  /** Replica-clock ms within which every slot has one owner once the faults stop, and why. */
  ownershipBoundMs: number;
  ownershipBound: string;
  faults: Record<'hang' | 'fail' | 'kill' | 'restart', number>;
  reconcilesByReplica: Record<string, number>;
  handoffsByReplica: Record<string, { gained: number; released: number }>;
  /** Real ms from each calm's start until every slot had exactly one owner. */
  ownedWithinMs: number[];
  sources: SourceStats;
}

const slots = 256;
const leaseDuration = 15_000;
const retryPeriod = 2_000;
/** Up to 100 ms (replica clock) each way for a lease call. */
const maxLegMs = 100;

interface Replica {
  identity: string;
  client: PausableShardClient;
  controller?: Controller<ConfigMap>;
  subscription?: Subscription;
  stop?: AbortController;
  recorder?: EventRecorder;
  handoffs: { gained: number; released: number };
}

/**
 * Sharding under chaos: `replicas` sharded replicas of the mirror
 * controller in one namespace (the API server's watch drops and errors
 * included), each with its own identity, informers, metrics registry and
 * Lease client, on a dilated clock, sharing one in-memory Lease store. At
 * random a member's Lease client hangs or fails for a while (a pause), or
 * the member is killed (its runs aborted at once, its Lease left to
 * expire) and restarted later under the same identity.
 *
 * Checked live by the soak's in-flight guard: every replica reports its
 * runs under one controller name, so a key started on one replica while a
 * run of it is in flight on another is a violation. Checked after each
 * calm: every slot has exactly one owner among the live replicas.
 */
export class ShardChaos {
  private readonly replicas: Replica[] = [];
  private readonly reconciles: Record<string, number> = {};
  private readonly faults = { hang: 0, fail: 0, kill: 0, restart: 0 };
  private readonly monitor = countingMonitor();
  private readonly server = virtualServer(dilatedScheduler(5));
  private readonly ownedWithin: number[] = [];
  private faultTimer: NodeJS.Timeout | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly options: ShardChaosOptions) {
    for (let i = 0; i < options.replicas; i++) {
      const identity = `replica-${i}`;
      const scheduler = dilatedScheduler(options.factor);
      const leg = () => options.random.next() * maxLegMs;
      const client = pausableShard(shardLeaseClient(memoryTransport(this.server, { scheduler, latency: leg, answerLatency: leg })));
      this.reconciles[identity] = 0;
      this.replicas.push({ identity, client, handoffs: { gained: 0, released: 0 } });
    }
  }

  /** The controllers running now (for the store checks). */
  get controllers(): Controller<ConfigMap>[] {
    return this.replicas.flatMap((r) => (r.controller === undefined ? [] : [r.controller]));
  }

  start(): void {
    for (const replica of this.replicas) this.launch(replica);
  }

  /** Starts the faults: a random member is paused or killed every so often. */
  startPausing(): void {
    if (this.faultTimer !== undefined) return;
    const next = () => {
      this.faultTimer = setTimeout(() => {
        this.fault();
        next();
      }, this.options.random.exponential(this.options.meanFaultIntervalMs));
    };
    next();
  }

  /** Stops the faults: every client reconnects and every dead member restarts. */
  stopPausing(): void {
    clearTimeout(this.faultTimer);
    this.faultTimer = undefined;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const replica of this.replicas) {
      if (replica.client.paused !== undefined) replica.client.resume();
      if (replica.controller === undefined) this.launch(replica);
    }
    const calm = performance.now();
    const check = setInterval(() => {
      if (!this.leading()) return;
      clearInterval(check);
      this.timers.delete(check);
      this.ownedWithin.push(Math.round(performance.now() - calm));
    }, 20);
    this.timers.add(check);
  }

  /** True once every slot has exactly one owner among the running replicas. */
  leading(): boolean {
    const owners = this.controllers.flatMap((c) => [...(c.shards()?.active ?? [])]);
    return owners.length === slots && new Set(owners).size === slots;
  }

  get takeoverCount(): number {
    return this.replicas.reduce((n, r) => n + r.handoffs.gained + (r.controller?.shards()?.handoffs.gained ?? 0), 0);
  }

  async close(): Promise<void> {
    clearTimeout(this.faultTimer);
    for (const t of this.timers) clearTimeout(t);
    if (!this.leading()) this.options.violations.record('shard-ownership', 'at the end, not every slot had exactly one owner among the running replicas');
    await Promise.all(this.replicas.map((r) => this.halt(r, false)));
  }

  report(): ShardReport {
    const bound = leaseDuration + 10 * retryPeriod;
    return {
      replicas: this.options.replicas,
      factor: this.options.factor,
      ownershipBoundMs: bound,
      ownershipBound: `every slot has one owner within the lease duration (a killed member's Lease expiring) plus ten retry periods (${bound} replica-clock ms, ${bound / this.options.factor} real ms at ${this.options.factor}×) of the faults stopping, as the property test states; the soak's convergence bound covers it`,
      faults: { ...this.faults },
      reconcilesByReplica: { ...this.reconciles },
      handoffsByReplica: Object.fromEntries(
        this.replicas.map((r) => [r.identity, { gained: r.handoffs.gained + (r.controller?.shards()?.handoffs.gained ?? 0), released: r.handoffs.released + (r.controller?.shards()?.handoffs.released ?? 0) }]),
      ),
      ownedWithinMs: [...this.ownedWithin],
      sources: this.monitor.stats,
    };
  }

  private launch(replica: Replica): void {
    const { kubeConfig, namespace, factor, random } = this.options;
    const scheduler = dilatedScheduler(factor);
    const informers = new InformerFactory(kubeConfig, { logger: silentLogger, scheduler, monitor: this.monitor, backoff: { maxMs: this.options.watchBackoffMaxMs } });
    const base = mirrorOptions(kubeConfig, { namespace });
    const recorder = eventRecorder({ kubeConfig, reportingController: 'mirror-sharded', reportingInstance: replica.identity, logger: silentLogger, seriesWindow: this.options.eventSeriesWindowMs });
    const stop = new AbortController();
    const c = controller<ConfigMap>({
      ...base,
      name: 'mirror-sharded',
      logger: silentLogger,
      scheduler,
      informers,
      concurrency: 2,
      registry: new Registry(),
      recorder,
      signal: stop.signal,
      stopNow: stop.signal,
      gracePeriod: 5_000,
      sharding: { replicas: 'auto', by: 'uid', identity: replica.identity, namespace, client: replica.client.client },
      // One name for every replica, so the guard sees an object running on two replicas at once. Sharded
      // by uid, the guarantee is per object: a name deleted and made again is another object, in another slot.
      reconcile: (key, ctx) =>
        chaoticReconcile(`mirror-sharded uid ${ctx.object?.metadata.uid ?? '(deleted)'}`, base.reconcile, this.options.chaos, this.options.guard, random, {
          onStart: () => (this.reconciles[replica.identity] = (this.reconciles[replica.identity] ?? 0) + 1),
        })(key, ctx),
    });
    replica.controller = c;
    replica.stop = stop;
    replica.recorder = recorder;
    replica.subscription = c.subscribe({
      next: (o) => this.options.onOutcome(`mirror-sharded/${replica.identity}`, o),
      error: (err: unknown) => this.options.onEnded(`mirror-sharded/${replica.identity}`, `errored: ${String(err)}`),
      complete: () => {
        if (!stop.signal.aborted) this.options.onEnded(`mirror-sharded/${replica.identity}`, 'completed on its own');
      },
    });
  }

  /** Stops a replica: killed (its Lease client failing first, so nothing is given up) or at the end. */
  private async halt(replica: Replica, kill: boolean): Promise<void> {
    const c = replica.controller;
    if (c === undefined) return;
    if (kill) replica.client.pause('fail');
    const state = c.shards();
    replica.handoffs.gained += state?.handoffs.gained ?? 0;
    replica.handoffs.released += state?.handoffs.released ?? 0;
    replica.controller = undefined;
    // Both signals at once: no grace, runs in flight aborted now, as a crash would end them.
    replica.stop?.abort();
    replica.subscription?.unsubscribe();
    await replica.recorder?.close();
  }

  private fault(): void {
    const { random, factor } = this.options;
    const replica = this.replicas[random.int(0, this.replicas.length - 1)]!;
    if (replica.controller === undefined || replica.client.paused !== undefined) return;
    const roll = random.next();
    if (roll < 0.3) {
      this.faults.kill++;
      void this.halt(replica, true);
      const t = setTimeout(() => {
        this.timers.delete(t);
        this.faults.restart++;
        replica.client.resume();
        this.launch(replica);
      }, random.int(Math.round(5_000 / factor), Math.round((2.5 * leaseDuration) / factor)));
      this.timers.add(t);
      return;
    }
    const mode = roll < 0.65 ? 'hang' : 'fail';
    this.faults[mode]++;
    replica.client.pause(mode);
    const t = setTimeout(() => {
      this.timers.delete(t);
      replica.client.resume();
    }, random.int(Math.round(3_000 / factor), Math.round((2.5 * leaseDuration) / factor)));
    this.timers.add(t);
  }
}
