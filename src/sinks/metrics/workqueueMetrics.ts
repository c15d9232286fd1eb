import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { Registry } from 'prom-client';
import type { ObjectKey } from '../../types.js';
import { counterOn, gaugeOn, histogramOn, scrapedGaugeOn } from './metricRegistry.js';

/**
 * client-go's workqueue buckets (`prometheus.ExponentialBuckets(10e-9, 10, 12)`,
 * 10 ns to 1000 s), written out so each bound prints exactly.
 */
export const workqueueDurationBuckets: readonly number[] = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 100, 1000];

/**
 * The hooks of `reconcileByKey`'s `observer` option (its `WorkqueueObserver`,
 * by shape: metrics import no operator), every one present. Times are ms of
 * the queue's clock.
 */
export interface WorkqueueHooks {
  /** A key entered the queue. */
  added(key: ObjectKey): void;
  /** The number of keys waiting for a worker at `priority` is now `n`. */
  priorityDepth(priority: number, n: number): void;
  /** A run began, `queuedMs` after its key entered the queue. */
  started(key: ObjectKey, queuedMs: number): void;
  /** A run ended after `workMs`. */
  finished(key: ObjectKey, workMs: number): void;
  /** The run just finished asked for a rerun, rate-limited or after a delay. */
  retried(key: ObjectKey): void;
  /** The number of runs in flight is now `n`. */
  activeWorkers(n: number): void;
}

/** The workqueue half of a controller's metrics: its hooks plus a way to drop its series. */
export interface WorkqueueMetrics extends Omit<WorkqueueHooks, 'activeWorkers'> {
  /** Forgets the runs in flight (their time stops counting as unfinished work). */
  clearInFlight(): void;
  /** Removes this queue's series from the registry and stops computing its scrape-time gauges. */
  remove(): void;
}

export interface WorkqueueMetricsOptions {
  /** The queue's name: the `name` and `controller` labels, as controller-runtime sets both to the controller's name. */
  name: string;
  registry: Registry;
  /** Where "now" comes from for the scrape-time gauges, without `clock`: the queue's own scheduler (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /** The queue's `clock`, when it has one: the scrape-time gauges age runs on it (default: the scheduler's `now()`). */
  clock?: () => number;
}

/**
 * client-go's workqueue metrics, as controller-runtime registers them
 * (`pkg/metrics/workqueue.go`), fed by `reconcileByKey`'s observer hooks:
 *
 * | metric | type | from |
 * | --- | --- | --- |
 * | `workqueue_depth{name,controller,priority}` | gauge | `priorityDepth(priority, n)`: one series per priority keys waited at, labelled as controller-runtime's priority queue does (`"0"`, `"-100"`) |
 * | `workqueue_adds_total{name,controller}` | counter | `added` |
 * | `workqueue_queue_duration_seconds{name,controller}` | histogram | `started`'s `queuedMs` |
 * | `workqueue_work_duration_seconds{name,controller}` | histogram | `finished`'s `workMs` |
 * | `workqueue_retries_total{name,controller}` | counter | `retried`: every rerun asked for, rate-limited or `requeueAfter` |
 * | `workqueue_unfinished_work_seconds{name,controller}` | gauge | at scrape: the summed age of the runs in flight |
 * | `workqueue_longest_running_processor_seconds{name,controller}` | gauge | at scrape: the age of the oldest run in flight |
 *
 * client-go refreshes the last two every 500 ms from a goroutine; here they
 * are computed when the registry is collected, from the start times of the
 * runs in flight and the scheduler's clock, so they are exact at scrape time
 * and cost nothing between scrapes.
 */
export function workqueueMetrics(options: WorkqueueMetricsOptions): WorkqueueMetrics {
  const { name, registry } = options;
  const scheduler = options.scheduler ?? asyncScheduler;
  const clock = options.clock ?? (() => scheduler.now());
  const labels = { name, controller: name };
  // As controller-runtime's priority queue labels it: the priority as a decimal integer.
  const depthLabels = (priority: number) => ({ ...labels, priority: String(priority) });
  const priorities = new Set<number>([0]);

  const depth = gaugeOn(registry, 'workqueue_depth', 'Current depth of workqueue by workqueue and priority', [
    'name',
    'controller',
    'priority',
  ]);
  const adds = counterOn(registry, 'workqueue_adds_total', 'Total number of adds handled by workqueue', ['name', 'controller']);
  const latency = histogramOn(
    registry,
    'workqueue_queue_duration_seconds',
    'How long in seconds an item stays in workqueue before being requested',
    ['name', 'controller'],
    workqueueDurationBuckets,
  );
  const workDuration = histogramOn(
    registry,
    'workqueue_work_duration_seconds',
    'How long in seconds processing an item from workqueue takes.',
    ['name', 'controller'],
    workqueueDurationBuckets,
  );
  const retries = counterOn(registry, 'workqueue_retries_total', 'Total number of retries handled by workqueue', ['name', 'controller']);
  const unfinished = scrapedGaugeOn(
    registry,
    'workqueue_unfinished_work_seconds',
    "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
      'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
    ['name', 'controller'],
  );
  const longest = scrapedGaugeOn(
    registry,
    'workqueue_longest_running_processor_seconds',
    'How many seconds has the longest running processor for workqueue been running.',
    ['name', 'controller'],
  );

  // At most one run per key is in flight, so the key identifies the run.
  const startedAt = new Map<ObjectKey, number>();

  const updateUnfinished = (): void => {
    const now = clock();
    let total = 0;
    let oldest = 0;
    for (const start of startedAt.values()) {
      const age = Math.max(0, now - start) / 1000;
      total += age;
      if (age > oldest) oldest = age;
    }
    unfinished.set(labels, total);
    longest.set(labels, oldest);
  };
  // On both gauges, so that either one read alone (getSingleMetricAsString) is current.
  unfinished.updaters.add(updateUnfinished);
  longest.updaters.add(updateUnfinished);

  depth.set(depthLabels(0), 0);
  adds.inc(labels, 0);
  retries.inc(labels, 0);
  latency.zero(labels);
  workDuration.zero(labels);
  unfinished.set(labels, 0);
  longest.set(labels, 0);

  return {
    added: () => adds.inc(labels),
    priorityDepth: (priority, n) => {
      priorities.add(priority);
      depth.set(depthLabels(priority), n);
    },
    started: (key, queuedMs) => {
      startedAt.set(key, clock());
      latency.observe(labels, queuedMs / 1000);
    },
    finished: (key, workMs) => {
      startedAt.delete(key);
      workDuration.observe(labels, workMs / 1000);
    },
    retried: () => retries.inc(labels),
    clearInFlight: () => startedAt.clear(),
    remove: () => {
      unfinished.updaters.delete(updateUnfinished);
      longest.updaters.delete(updateUnfinished);
      startedAt.clear();
      for (const priority of priorities) depth.remove(depthLabels(priority));
      priorities.clear();
      for (const metric of [adds, latency, workDuration, retries, unfinished, longest]) metric.remove(labels);
    },
  };
}
