import { performance } from 'node:perf_hooks';

/**
 * A clock for measuring, in ms since the epoch with sub-millisecond
 * resolution: `performance.timeOrigin + performance.now()`. The scheduler's
 * `now()` (`Date.now()` for `asyncScheduler`) counts whole milliseconds, so
 * a reconcile of 200 µs measured with it reads 0 ms, and client-go's
 * workqueue buckets below 1 ms stay empty. Pass it as `reconcileByKey`'s
 * and `controllerMetrics`' `clock` for durations; waits keep going through
 * the scheduler. Monotonic, unlike `Date.now()`: a wall-clock step does
 * not turn into a negative duration.
 */
export function highResolutionClock(): () => number {
  const origin = performance.timeOrigin;
  return () => origin + performance.now();
}
