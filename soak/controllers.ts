import type { KubeConfig } from '@kubernetes/client-node';
import { bucketRateLimiter, controller, eventRecorder, exponentialFailureRateLimiter, InformerFactory, maxOfRateLimiter, silentLogger, type Controller, type EventRecorder, type KubeObject, type ReconcileOutcome } from 'rxkube';
import { type EventRecorderStats } from '../src/sinks/events/eventRecorder.js';
import { configMapRolloutOptions } from '../examples/configmap-rollout/controller.js';
import { podAutoscalerOptions } from '../examples/podautoscaler/controller.js';
import { chaoticReconcile, type InFlightGuard, type ReconcileChaos } from './chaosReconcile.js';
import { mirrorOptions } from './mirror/controller.js';
import type { Random } from './random.js';
import { runAll, stopWithin, type Running } from './running.js';
import { countingMonitor, type SourceStats } from './sourceMonitor.js';

export interface ControllersOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  random: Random;
  guard: InFlightGuard;
  chaos: ReconcileChaos;
  concurrency: number;
  /** The rate limiter's overall retry budget (retries per second; burst 10×). */
  retryQps: number;
  watchBackoffMaxMs: number;
  eventSeriesWindowMs: number;
  onOutcome: (controller: string, outcome: ReconcileOutcome) => void;
  onEnded: (controller: string, how: string) => void;
}

/**
 * The soak's three controllers in one process, on ONE informer factory: the
 * podautoscaler and configmap-rollout examples and the mirror controller.
 * Where they watch the same things they share the watch and the store: one
 * watch of Deployments (podautoscaler's watched resource, configmap-rollout's
 * primary, each adding its index), one of ConfigMaps (configmap-rollout's
 * watched resource, mirror's primary and owned), one of PodAutoscalers.
 * Every reconcile is wrapped by `chaoticReconcile`.
 */
export class SoakControllers {
  readonly informers: InformerFactory;
  readonly monitor = countingMonitor();
  readonly all: Controller<KubeObject>[];
  /** The controllers' Event recorders, ours so that they are closed before the server goes (and their series counted). */
  readonly recorders: EventRecorder[] = [];
  readonly recorderNames: string[] = [];
  private readonly stop = new AbortController();
  private running: Running | undefined;

  constructor(private readonly options: ControllersOptions) {
    const { kubeConfig, namespace, random, guard, chaos } = options;
    // Pages of 100 (not 500): several continue tokens per list, so a compaction can land mid-list.
    this.informers = new InformerFactory(kubeConfig, { logger: silentLogger, monitor: this.monitor, pageSize: 100, backoff: { maxMs: options.watchBackoffMaxMs } });
    const common = {
      namespace,
      informers: this.informers,
      logger: silentLogger,
      concurrency: options.concurrency,
      signal: this.stop.signal,
      gracePeriod: 5_000,
      // client-go's default limiter, with an overall retry budget sized for the soak's load (see README).
      rateLimiter: maxOfRateLimiter(exponentialFailureRateLimiter(5, 1_000_000), bucketRateLimiter(options.retryQps, options.retryQps * 10)),
    };
    // All built before any starts: informers of one resource merge their indexes only until then.
    const autoscaling = podAutoscalerOptions(kubeConfig, common);
    const rollout = configMapRolloutOptions(kubeConfig, common);
    const mirror = mirrorOptions(kubeConfig, common);
    const recorder = (name: string) => {
      const r = eventRecorder({ kubeConfig, reportingController: name, reportingInstance: 'soak', logger: silentLogger, seriesWindow: options.eventSeriesWindowMs });
      this.recorders.push(r);
      this.recorderNames.push(name);
      return r;
    };
    // Read-your-own-writes on (off by default): the soak checks its invariants with it, under chaos.
    this.all = [
      controller({ ...autoscaling, readYourWrites: true, recorder: recorder(autoscaling.name), reconcile: chaoticReconcile(autoscaling.name, autoscaling.reconcile, chaos, guard, random) }),
      controller({ ...rollout, readYourWrites: true, recorder: recorder(rollout.name), reconcile: chaoticReconcile(rollout.name, rollout.reconcile, chaos, guard, random) }),
      controller({ ...mirror, readYourWrites: true, recorder: recorder(mirror.name), reconcile: chaoticReconcile(mirror.name, mirror.reconcile, chaos, guard, random) }),
    ] as unknown as Controller<KubeObject>[];
  }

  recorderStats(): Record<string, EventRecorderStats> {
    return Object.fromEntries(this.recorders.map((r, i) => [this.recorderNames[i] as string, r.stats()]));
  }

  get sources(): SourceStats {
    return this.monitor.stats;
  }

  start(): void {
    this.running ??= runAll(
      this.all.map((c) => ({ name: c.name, controller: c })),
      this.stop.signal,
      this.options.onOutcome,
      this.options.onEnded,
    );
  }

  synced(): boolean {
    return this.all.every((c) => c.synced());
  }

  /** Graceful shutdown: in-flight reconciles finish (5 s at most), then the watches close. */
  async close(): Promise<void> {
    this.stop.abort();
    await stopWithin(this.running, 10_000);
    await Promise.all(this.recorders.map((r) => r.close()));
  }
}
