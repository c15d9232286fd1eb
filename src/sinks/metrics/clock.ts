import { performance } from 'node:perf_hooks';

/** Where a `highResolutionClock` reads time; tests give their own. */
export interface ClockSources {
  /** A monotonic clock in ms, with a fraction (default `performance.now`). */
  monotonic: () => number;
  /** The wall clock in ms since the epoch (default `Date.now`). */
  wall: () => number;
}

const systemClock: ClockSources = { monotonic: () => performance.now(), wall: () => Date.now() };

/**
 * A clock for measuring, in ms since the epoch with sub-millisecond
 * resolution: the monotonic clock, anchored to the wall clock. The
 * scheduler's `now()` (`Date.now()` for `asyncScheduler`) counts whole
 * milliseconds, so a reconcile of 200 µs measured with it reads 0 ms, and
 * client-go's workqueue buckets below 1 ms stay empty. Pass it as
 * `reconcileByKey`'s and `controllerMetrics`' `clock` for durations; waits
 * keep going through the scheduler.
 *
 * Never going back, unlike `Date.now()`: a wall-clock step back is not
 * followed, so it never turns into a negative duration. The monotonic
 * clock stands still while the machine (or its VM) is suspended, so
 * `performance.timeOrigin + performance.now()` falls behind the wall
 * clock for good, seconds at a time; this one looks at the wall clock once
 * a second of its own time and catches up (forward only) when it has
 * fallen more than a second behind.
 */
export function highResolutionClock(sources: ClockSources = systemClock): () => number {
  const { monotonic, wall } = sources;
  let offset = wall() - monotonic();
  let checkedAt = monotonic();
  return () => {
    const now = monotonic();
    if (now - checkedAt >= 1000) {
      checkedAt = now;
      const behind = wall() - (offset + now);
      if (behind > 1000) offset += behind;
    }
    return offset + now;
  };
}
