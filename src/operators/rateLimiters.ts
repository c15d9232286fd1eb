import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { ObjectKey } from '../types.js';

/**
 * Decides how long a key waits before it is retried: client-go's workqueue
 * `RateLimiter`, as a small object. Delays are in milliseconds.
 *
 * - `when(key)` is asked once per rate-limited requeue and counts it: a
 *   per-key limiter answers a longer delay each time until `forget(key)`.
 * - `forget(key)` is called when the key stops failing (success, a
 *   `requeueAfter`, or the key is dropped); per-key state goes with it, so a
 *   limiter holds state only for keys that are failing right now.
 * - `retries(key)` says how many times `when(key)` was asked since the last
 *   `forget(key)` (client-go's `NumRequeues`).
 *
 * Limiters that depend on time read it from a `SchedulerLike`, so they run in
 * virtual time under a `TestScheduler`. Each call of a factory makes a new
 * limiter with its own state; share one object only where sharing is meant
 * (one token bucket for all keys of a controller).
 */
export interface RateLimiter {
  /** Ms to wait before retrying `key`, counting one more failure of it. */
  when(key: ObjectKey): number;
  /** Forgets `key`'s failures: its next delay starts from the first again. */
  forget(key: ObjectKey): void;
  /** Failures of `key` counted since it was last forgotten. */
  retries(key: ObjectKey): number;
}

function requireDelay(what: string, value: number): void {
  if (typeof value !== 'number' || !(value >= 0) || value === Infinity) {
    throw new RangeError(`${what} must be a finite number of ms >= 0, got ${String(value)}`);
  }
}

/** Counts `when` per key; the shared part of the per-key limiters. */
function failureCounter(delayFor: (failuresBefore: number) => number): RateLimiter {
  const failures = new Map<ObjectKey, number>();
  return {
    when(key) {
      const before = failures.get(key) ?? 0;
      failures.set(key, before + 1);
      return delayFor(before);
    },
    forget(key) {
      failures.delete(key);
    },
    retries(key) {
      return failures.get(key) ?? 0;
    },
  };
}

/**
 * Per-key exponential backoff: the nth consecutive failure of a key waits
 * `baseMs × 2ⁿ⁻¹`, never more than `maxMs` (client-go's
 * `ItemExponentialFailureRateLimiter`). With base 5 and max 1000 s:
 * 5, 10, 20, 40 … ms, and 1000 s from the 19th failure on (5 ms × 2¹⁸ is
 * past the cap). Keys back off independently; `forget(key)` starts a key
 * over at `baseMs`. The delay saturates at `maxMs` however many failures
 * pile up (2ⁿ grows to Infinity, never wraps).
 */
export function exponentialFailureRateLimiter(baseMs: number, maxMs: number): RateLimiter {
  requireDelay('exponentialFailureRateLimiter baseMs', baseMs);
  requireDelay('exponentialFailureRateLimiter maxMs', maxMs);
  return failureCounter((before) => Math.min(maxMs, baseMs * 2 ** before));
}

/**
 * Per key: the first `maxFastAttempts` failures wait `fastMs`, every later
 * one `slowMs` (client-go's `ItemFastSlowRateLimiter`), until `forget(key)`.
 */
export function fastSlowRateLimiter(fastMs: number, slowMs: number, maxFastAttempts: number): RateLimiter {
  requireDelay('fastSlowRateLimiter fastMs', fastMs);
  requireDelay('fastSlowRateLimiter slowMs', slowMs);
  if (!Number.isInteger(maxFastAttempts) || maxFastAttempts < 0) {
    throw new RangeError(`fastSlowRateLimiter maxFastAttempts must be an integer >= 0, got ${String(maxFastAttempts)}`);
  }
  return failureCounter((before) => (before < maxFastAttempts ? fastMs : slowMs));
}

/**
 * One token bucket for all keys: `burst` tokens, refilled at `qps` per
 * second; each `when` takes a token and answers how long until that token
 * exists (0 while the bucket has some). Like a reservation of
 * golang.org/x/time/rate's `Limiter` (client-go's `BucketRateLimiter`), a
 * reservation is never refused: when the bucket is empty the debt grows and
 * each call waits one more interval. With 10 qps and burst 100, 100 calls at
 * once wait 0, the 101st 100 ms, the 102nd 200 ms; after one idle second the
 * bucket holds 10 more tokens.
 *
 * It keeps no per-key state: `forget` does nothing and `retries` is 0.
 * `qps` may be `Infinity` (never waits). Time comes from `scheduler`.
 */
export function bucketRateLimiter(qps: number, burst: number, scheduler: SchedulerLike = asyncScheduler): RateLimiter {
  if (typeof qps !== 'number' || !(qps > 0)) {
    throw new RangeError(`bucketRateLimiter qps must be a number > 0 (or Infinity), got ${String(qps)}`);
  }
  if (!Number.isInteger(burst) || burst < 1) {
    // x/time/rate grants nothing with burst 0: every retry would wait forever.
    throw new RangeError(`bucketRateLimiter burst must be an integer >= 1, got ${String(burst)}`);
  }
  const interval = 1000 / qps;
  // The time at which the bucket is (or was) empty, counting tokens already
  // promised: tokens(t) = (t - emptyAt) / interval, at most `burst`. One
  // number instead of (tokens, last) keeps the arithmetic exact for whole
  // intervals, so 10 qps answers 300 ms, not 300.00000000000006.
  let emptyAt = -Infinity;
  return {
    when() {
      if (interval === 0) return 0;
      const now = scheduler.now();
      emptyAt = Math.max(emptyAt, now - burst * interval) + interval;
      return Math.max(0, emptyAt - now);
    },
    forget() {},
    retries() {
      return 0;
    },
  };
}

/**
 * Asks every limiter and waits for the longest answer (client-go's
 * `MaxOfRateLimiter`). Every limiter is asked each time, so a token bucket
 * inside spends a token even when another limiter's delay is longer.
 * `retries` is the largest count; `forget` forgets in all of them.
 */
export function maxOfRateLimiter(...limiters: RateLimiter[]): RateLimiter {
  if (limiters.length === 0) throw new RangeError('maxOfRateLimiter needs at least one limiter');
  limiters.forEach((limiter, i) => {
    if (typeof limiter?.when !== 'function' || typeof limiter.forget !== 'function' || typeof limiter.retries !== 'function') {
      throw new TypeError(`maxOfRateLimiter argument ${i} is not a RateLimiter (needs when, forget and retries)`);
    }
  });
  return {
    when(key) {
      let delay = 0;
      for (const limiter of limiters) delay = Math.max(delay, limiter.when(key));
      return delay;
    },
    forget(key) {
      for (const limiter of limiters) limiter.forget(key);
    },
    retries(key) {
      let retries = 0;
      for (const limiter of limiters) retries = Math.max(retries, limiter.retries(key));
      return retries;
    },
  };
}

/**
 * client-go's `DefaultControllerRateLimiter`: per key, exponential from 5 ms
 * to 1000 s; over all keys, a bucket of 10 retries per second with a burst of
 * 100, so a mass failure cannot retry faster than that overall.
 */
export function defaultControllerRateLimiter(scheduler: SchedulerLike = asyncScheduler): RateLimiter {
  return maxOfRateLimiter(exponentialFailureRateLimiter(5, 1_000_000), bucketRateLimiter(10, 100, scheduler));
}
