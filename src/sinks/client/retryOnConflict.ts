import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { defaultLogger, type Logger } from '../../logger.js';
import { delay } from '../../util/wait.js';
import { ConflictRetriesExhaustedError, isConflict, KubeApiError, type RequestDescription } from './errors.js';

/**
 * How a write that keeps meeting 409 Conflict backs off: client-go's
 * `wait.Backoff`. `steps` is the number of attempts in all; before attempt
 * n+1 it waits `duration × factorⁿ⁻¹`, plus up to `jitter` of that at random.
 */
export interface ConflictBackoff {
  /** Attempts in all, the first included. */
  steps: number;
  /** Ms before the second attempt. */
  duration: number;
  /** Growth of the wait per attempt. */
  factor: number;
  /** Random extra, as a fraction of the wait. */
  jitter: number;
}

/** client-go's `retry.DefaultRetry`: 5 attempts, 10 ms apart, plus up to 10 % jitter. */
export const defaultConflictBackoff: Readonly<ConflictBackoff> = Object.freeze({ steps: 5, duration: 10, factor: 1, jitter: 0.1 });

export interface RetryOnConflictOptions {
  backoff?: Partial<ConflictBackoff>;
  scheduler?: SchedulerLike;
  /** The source of jitter, in [0, 1) (default `Math.random`). */
  random?: () => number;
  signal?: AbortSignal;
  logger?: Logger;
}

function checkBackoff(backoff: ConflictBackoff): void {
  if (!Number.isInteger(backoff.steps) || backoff.steps < 1) {
    throw new RangeError(`conflict backoff steps must be a positive integer, got ${String(backoff.steps)}`);
  }
  for (const field of ['duration', 'factor', 'jitter'] as const) {
    const value = backoff[field];
    if (typeof value !== 'number' || !(value >= 0) || value === Infinity) {
      throw new RangeError(`conflict backoff ${field} must be a finite number >= 0, got ${String(value)}`);
    }
  }
}

/**
 * Runs `attempt` until it does not fail with a 409 Conflict, at most
 * `backoff.steps` times, waiting between attempts (client-go's
 * `retry.RetryOnConflict`). Each attempt must re-read what it writes: the
 * conflict says the copy it wrote from was stale. Other errors end it at
 * once. When every attempt conflicted it fails with a
 * `ConflictRetriesExhaustedError` saying so, whose cause is the last conflict.
 * `attempt` gets its 0-based number.
 */
export async function retryOnConflict<R>(
  request: RequestDescription,
  attempt: (n: number) => Promise<R>,
  options: RetryOnConflictOptions = {},
): Promise<R> {
  const backoff = { ...defaultConflictBackoff, ...options.backoff };
  checkBackoff(backoff);
  const scheduler = options.scheduler ?? asyncScheduler;
  const random = options.random ?? Math.random;
  const logger = options.logger ?? defaultLogger({ part: 'kubeClient' });
  let wait = backoff.duration;
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (!isConflict(err) || !(err instanceof KubeApiError)) throw err;
      if (n + 1 >= backoff.steps) throw new ConflictRetriesExhaustedError(request, n + 1, err);
      const ms = wait + random() * backoff.jitter * wait;
      logger.debug({ ...request, attempt: n + 1, retryInMs: ms }, 'conflict: re-reading and retrying');
      await delay(ms, scheduler, options.signal);
      wait *= backoff.factor;
    }
  }
}
