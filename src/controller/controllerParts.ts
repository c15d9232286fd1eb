import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import { asyncScheduler, defer, EMPTY, from, ignoreElements, type Observable, type SchedulerLike } from 'rxjs';
import { InformerFactory } from '../informers/informerFactory.js';
import { createDefaultLogger, type Logger } from '../logger.js';
import type { KeyTrigger, ReconcileOptions } from '../operators/reconcileByKey.js';
import type { WorkqueueObserver } from '../operators/workqueueObserver.js';
import { kubeClient, type KubeClient } from '../sinks/client/kubeClient.js';
import { eventRecorder, type EventRecorder } from '../sinks/events/eventRecorder.js';
import type { LeaderElectionOptions } from '../sinks/leader/leaderElection.js';
import { highResolutionClock } from '../sinks/metrics/clock.js';
import { controllerMetrics, type ControllerMetrics } from '../sinks/metrics/controllerMetrics.js';
import { leaderMetrics } from '../sinks/metrics/leaderMetrics.js';
import { withProcessMetrics } from '../sinks/metrics/processMetrics.js';
import { restClientMetrics, type RestClientMetrics } from '../sinks/metrics/restClientMetrics.js';
import { sourceMetrics, type SourceMetrics } from '../sinks/metrics/sourceMetrics.js';
import type { ShardSelection } from '../sources/sourceShard.js';
import type { Lister } from '../store/store.js';
import type { KubeObject, ObjectKey } from '../types.js';
import type { ControllerOptions } from './controllerOptions.js';
import { shardGate, shardRangesTo, type ShardGate } from './sharding.js';

/** What a controller runs on: its options' parts, each the caller's or its default, and the metrics they count on. */
export interface ControllerParts {
  readonly logger: Logger;
  readonly scheduler: SchedulerLike;
  /** The metrics' Registry: the caller's, or a new one, never the global one. */
  readonly registry: Registry;
  /** Measuring only; every wait still goes through the scheduler. */
  readonly clock: () => number;
  readonly concurrency: number;
  readonly metrics: ControllerMetrics;
  readonly monitor: SourceMetrics;
  readonly requests: RestClientMetrics;
  readonly informers: InformerFactory;
  readonly client: KubeClient;
  /** This replica's name in its Lease and its Events. */
  readonly identity: string;
}

/**
 * The parts of `options`, defaulted: pino on stderr, `asyncScheduler`, a
 * Registry of its own with the process metrics, durations on a
 * high-resolution clock unless a scheduler was given (then on its `now()`,
 * so that virtual time stays virtual), and informers and a client whose
 * requests count in `rest_client_*`.
 */
export function controllerParts<T extends KubeObject>(options: ControllerOptions<T>): ControllerParts {
  const logger = options.logger ?? createDefaultLogger({ controller: options.name });
  const scheduler = options.scheduler ?? asyncScheduler;
  const registry = options.registry ?? new Registry();
  if (options.processMetrics ?? options.registry === undefined) withProcessMetrics(registry);
  const clock = options.scheduler === undefined ? highResolutionClock() : () => scheduler.now();
  const concurrency = options.concurrency ?? 1;
  const metrics = controllerMetrics({ controller: options.name, registry, maxConcurrentReconciles: concurrency, scheduler, clock });
  const monitor = sourceMetrics(registry);
  const requests = restClientMetrics({ registry, clock });
  return {
    logger,
    scheduler,
    registry,
    clock,
    concurrency,
    metrics,
    monitor,
    requests,
    informers: options.informers ?? new InformerFactory(options.kubeConfig, { logger, scheduler, monitor, requests }),
    client: options.client ?? kubeClient(options.kubeConfig, { fieldManager: options.name, logger, requests }),
    identity: options.leaderElection?.identity ?? `${hostname()}-${Math.random().toString(36).slice(2, 10)}`,
  };
}

/** The leader election `options` asks for, on the controller's parts (`kubeConfig` defaults to the controller's); undefined for none. */
export function electionFor<T extends KubeObject>(options: ControllerOptions<T>, parts: ControllerParts): Omit<LeaderElectionOptions, 'stop'> | undefined {
  if (options.leaderElection === undefined) return undefined;
  const { scheduler, logger, identity, requests } = parts;
  return { ...options.leaderElection, kubeConfig: options.leaderElection.kubeConfig ?? options.kubeConfig, identity, scheduler, logger, metrics: leaderMetrics(parts.registry), requests };
}

/** The workqueue's options from the controller's: the limits given, the rest `reconcileByKey`'s defaults. */
export function queueFor<T extends KubeObject>(options: ControllerOptions<T>, parts: ControllerParts, observer: WorkqueueObserver): Omit<ReconcileOptions, 'stop'> {
  return {
    concurrency: parts.concurrency,
    scheduler: parts.scheduler,
    clock: parts.clock,
    logger: parts.logger,
    observer,
    ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    ...(options.priority?.aging !== undefined ? { aging: options.priority.aging } : {}),
  };
}

/**
 * The Event recorder of one run: the caller's, or one of our own that
 * lives as long as the run, closed at its end (`close`, which never
 * errors) so that no Event waiting to be retried keeps the process alive.
 */
export function runRecorder<T extends KubeObject>(options: ControllerOptions<T>, parts: ControllerParts): { recorder: EventRecorder; close: Observable<never> } {
  const { logger } = parts;
  const recorder = options.recorder ?? eventRecorder({ client: parts.client, reportingController: options.name, reportingInstance: parts.identity, logger });
  const close = defer(() =>
    options.recorder !== undefined ? EMPTY : from(recorder.close().catch((err: unknown) => logger.warn({ err: String(err) }, 'closing the Event recorder failed'))),
  ).pipe(ignoreElements());
  return { recorder, close };
}

/**
 * The sharding of one run, when `options` asks for it (undefined
 * otherwise): over the primary store, handing gained keys to `handoff`,
 * and, unless the primary informer caches all of it, telling
 * `cachedRanges` of the ranges it should list and watch.
 */
export function shardGateFor<T extends KubeObject>(
  options: ControllerOptions<T>,
  parts: ControllerParts,
  run: { store: Lister<T>; handoff: (key: ObjectKey) => KeyTrigger; gracePeriod: number; cachedRanges: { next(selection: ShardSelection): void } | undefined },
): ShardGate | undefined {
  const sharding = options.sharding;
  if (sharding === undefined) return undefined;
  const { scheduler, logger, registry, requests } = parts;
  return shardGate({
    controller: options.name,
    options: sharding,
    identity: sharding.identity ?? parts.identity,
    kubeConfig: options.kubeConfig,
    requests,
    store: run.store,
    scheduler,
    logger,
    registry,
    gracePeriod: run.gracePeriod,
    handoff: run.handoff,
    ...(run.cachedRanges !== undefined ? { onRanges: shardRangesTo(run.cachedRanges, sharding.by) } : {}),
  });
}
