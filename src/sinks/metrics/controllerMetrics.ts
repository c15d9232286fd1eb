import { Registry } from 'prom-client';
import { tap, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';
import { counterOn, gaugeOn, histogramOn } from './metricRegistry.js';
import { workqueueMetrics, type WorkqueueHooks } from './workqueueMetrics.js';

/** controller-runtime's `controller_runtime_reconcile_time_seconds` buckets. */
export const reconcileTimeBuckets: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0,
  2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** What the metrics read from a `reconcileByKey` outcome (a `ReconcileOutcome` fits). */
export interface OutcomeForMetrics {
  /** How the run ended, as `controller_runtime_reconcile_total`'s `result` label counts it. */
  result: 'success' | 'error' | 'requeue' | 'requeue_after' | 'dropped';
  /** What kind of failure an `error` or `dropped` was, when it was one of these (`reconcileByKey`'s `FailureKind`). */
  failure?: 'timeout' | 'panic' | 'terminal';
  /** Ms the run took. */
  duration: number;
}

/** Options of `controllerMetrics()`. */
export interface ControllerMetricsOptions {
  /** The controller's name: the `controller` label, and `name` on the workqueue metrics. */
  controller: string;
  /** Where the metrics go. Default: a new `Registry`, never prom-client's global one. */
  registry?: Registry;
  /** The `concurrency` given to `reconcileByKey` (controller_runtime_max_concurrent_reconciles); default 1. */
  maxConcurrentReconciles?: number;
  /** The scheduler `reconcileByKey` runs on, for the scrape-time workqueue gauges (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /** The `clock` given to `reconcileByKey`, if any: the scrape-time gauges read it instead of the scheduler. */
  clock?: () => number;
}

/** controller-runtime's and client-go's workqueue metrics of one controller, on a prom-client Registry. */
export interface ControllerMetrics {
  /** The Registry the metrics are on. */
  readonly registry: Registry;
  /** Pass as `reconcileByKey`'s `observer`: feeds the workqueue metrics and `controller_runtime_active_workers`. */
  readonly observer: WorkqueueHooks;
  /** Counts one reconcile outcome. */
  outcome(outcome: OutcomeForMetrics): void;
  /** An operator that counts every outcome passing through it, unchanged. */
  recordOutcomes<O extends OutcomeForMetrics>(): MonoTypeOperatorFunction<O>;
  /** Sets `controller_runtime_max_concurrent_reconciles`. */
  setMaxConcurrentReconciles(n: number): void;
  /** Removes this controller's series from the registry (for a controller stopped in a process that goes on). */
  remove(): void;
}

/**
 * The metrics of one controller, under the names controller-runtime and
 * client-go dashboards already read (controller-runtime's
 * `pkg/internal/controller/metrics` and `pkg/metrics/workqueue.go`):
 *
 * | metric | type | labels |
 * | --- | --- | --- |
 * | `controller_runtime_reconcile_total` | counter | `controller`, `result` (success, error, requeue, requeue_after) |
 * | `controller_runtime_reconcile_errors_total` | counter | `controller` |
 * | `controller_runtime_terminal_reconcile_errors_total` | counter | `controller` |
 * | `controller_runtime_reconcile_panics_total` | counter | `controller` |
 * | `controller_runtime_reconcile_timeouts_total` | counter | `controller` |
 * | `controller_runtime_reconcile_time_seconds` | histogram (controller-runtime's buckets) | `controller` |
 * | `controller_runtime_max_concurrent_reconciles` | gauge | `controller` |
 * | `controller_runtime_active_workers` | gauge | `controller` |
 * | `workqueue_*` (see `workqueueMetrics`) | | `name`, `controller` |
 *
 * Every series exists from the start at 0, as controller-runtime
 * initialises them, so a rate over a fresh controller is 0 rather than absent.
 *
 * A `dropped` outcome (a key that failed `maxRetries` times in a row and is
 * not retried) counts as `result="error"` and in `reconcile_errors_total`,
 * like any failure, and also in `terminal_reconcile_errors_total`:
 * controller-runtime's counter for errors that are not requeued. Its
 * `result` label has no value for it, and dashboards sum the four values as
 * the number of reconciles, so a fifth would be lost from their totals.
 *
 * A `TerminalError` is a `dropped` outcome too, counted the same way. A
 * failure of kind `panic` (see `FailureKind`: a throw of a non-Error, or an
 * error the engine throws for a bug) counts in `reconcile_panics_total`, and
 * one of kind `timeout` in `reconcile_timeouts_total`, each besides the
 * error counters, as controller-runtime counts a recovered panic and a
 * reconcile that outlived its `ReconciliationTimeout`.
 *
 * Controllers sharing a registry share the families and differ by label;
 * each registry is the caller's own, so two controllers in separate
 * registries never meet.
 */
export function controllerMetrics(options: ControllerMetricsOptions): ControllerMetrics {
  const { controller } = options;
  if (typeof controller !== 'string' || controller === '') {
    throw new TypeError(`controllerMetrics needs a non-empty controller name, got ${JSON.stringify(controller)}`);
  }
  const registry = options.registry ?? new Registry();
  const labels = { controller };

  const total = counterOn(registry, 'controller_runtime_reconcile_total', 'Total number of reconciliations per controller', [
    'controller',
    'result',
  ]);
  const errors = counterOn(
    registry,
    'controller_runtime_reconcile_errors_total',
    'Total number of reconciliation errors per controller',
    ['controller'],
  );
  const terminal = counterOn(
    registry,
    'controller_runtime_terminal_reconcile_errors_total',
    'Total number of terminal reconciliation errors per controller',
    ['controller'],
  );
  const panics = counterOn(registry, 'controller_runtime_reconcile_panics_total', 'Total number of reconciliation panics per controller', [
    'controller',
  ]);
  const timeouts = counterOn(
    registry,
    'controller_runtime_reconcile_timeouts_total',
    'Total number of reconciliation timeouts per controller',
    ['controller'],
  );
  const time = histogramOn(
    registry,
    'controller_runtime_reconcile_time_seconds',
    'Length of time per reconciliation per controller',
    ['controller'],
    reconcileTimeBuckets,
  );
  const maxConcurrent = gaugeOn(
    registry,
    'controller_runtime_max_concurrent_reconciles',
    'Maximum number of concurrent reconciles per controller',
    ['controller'],
  );
  const activeWorkers = gaugeOn(registry, 'controller_runtime_active_workers', 'Number of currently used workers per controller', [
    'controller',
  ]);
  const queue = workqueueMetrics({
    name: controller,
    registry,
    ...(options.scheduler !== undefined ? { scheduler: options.scheduler } : {}),
    ...(options.clock !== undefined ? { clock: options.clock } : {}),
  });

  const results = ['success', 'error', 'requeue', 'requeue_after'] as const;
  for (const result of results) total.inc({ controller, result }, 0);
  errors.inc(labels, 0);
  terminal.inc(labels, 0);
  panics.inc(labels, 0);
  timeouts.inc(labels, 0);
  time.zero(labels);
  maxConcurrent.set(labels, options.maxConcurrentReconciles ?? 1);
  activeWorkers.set(labels, 0);

  const outcome = (o: OutcomeForMetrics): void => {
    switch (o.result) {
      case 'success':
      case 'requeue':
      case 'requeue_after':
        total.inc({ controller, result: o.result });
        break;
      case 'dropped':
        terminal.inc(labels);
        total.inc({ controller, result: 'error' });
        errors.inc(labels);
        break;
      default:
        total.inc({ controller, result: 'error' });
        errors.inc(labels);
    }
    if (o.failure === 'panic') panics.inc(labels);
    else if (o.failure === 'timeout') timeouts.inc(labels);
    time.observe(labels, o.duration / 1000);
  };

  return {
    registry,
    observer: {
      added: queue.added,
      priorityDepth: queue.priorityDepth,
      started: queue.started,
      finished: queue.finished,
      retried: queue.retried,
      activeWorkers: (n) => {
        activeWorkers.set(labels, n);
        // No run in flight: whatever started and was never reported finished is not work any more.
        if (n === 0) queue.clearInFlight();
      },
    },
    outcome,
    recordOutcomes: <O extends OutcomeForMetrics>() => tap<O>(outcome),
    setMaxConcurrentReconciles: (n) => maxConcurrent.set(labels, n),
    remove: () => {
      queue.remove();
      for (const result of results) total.remove({ controller, result });
      for (const metric of [errors, terminal, panics, timeouts, time, maxConcurrent, activeWorkers]) metric.remove(labels);
    },
  };
}
