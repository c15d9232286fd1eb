import type { SchedulerLike } from 'rxjs';

/**
 * How long a list-watch waits before trying again after a failure: exponential, capped, with jitter, reset after a stable spell.
 */
export interface BackoffOptions {
  /** First delay, ms (default 800, as client-go's reflector). */
  initialMs?: number;
  /** Largest delay, ms (default 30 000). */
  maxMs?: number;
  /** Growth per consecutive failure (default 2). */
  factor?: number;
  /**
   * Random extra, as a fraction of the delay: a delay d becomes d + r·jitter·d
   * for r in [0, 1) (default 1, as client-go), so replicas that failed
   * together do not retry together.
   */
  jitter?: number;
  /** After this long without a failure, the next failure starts over from the first delay (default 120 000). */
  resetAfterMs?: number;
}

/**
 * The reflector's backoff: 800 ms doubling to 30 s, with jitter, forgotten
 * after two minutes of health. Time comes from the scheduler and randomness
 * from `random`, so the delays it picks can be checked exactly.
 */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly resetAfterMs: number;
  private step = 0;
  private lastFailure: number | undefined;

  constructor(
    options: BackoffOptions,
    private readonly scheduler: SchedulerLike,
    private readonly random: () => number = Math.random,
  ) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 1;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
  }

  /** Records a failure and returns how long to wait before the next attempt, ms. */
  next(): number {
    const now = this.scheduler.now();
    if (this.lastFailure !== undefined && now - this.lastFailure >= this.resetAfterMs) this.step = 0;
    this.lastFailure = now;
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** this.step);
    if (base < this.maxMs) this.step++;
    return Math.round(base + this.random() * this.jitter * base);
  }

  /** Forgets past failures at once (after a successful list, say). */
  reset(): void {
    this.step = 0;
    this.lastFailure = undefined;
  }
}
