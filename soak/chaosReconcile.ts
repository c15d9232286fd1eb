import type { ControllerContext, ControllerReconciler, KubeObject, ObjectKey, ReconcileResult } from 'rxkube';
import type { Random } from './random.js';
import type { Violations } from './violations.js';

/** What the wrapped reconciles do besides their work; changed live by the soak's phases. */
export interface ReconcileChaos {
  /** Probability that a run fails on purpose (before or after the real work, half each). */
  failureRate: number;
  /** Each run first waits a random 0..maxDelayMs (aborted with the run). */
  maxDelayMs: number;
}

/** The error a run fails with on purpose; the workqueue must retry it like any other. */
export class InjectedReconcileFailure extends Error {
  override readonly name = 'InjectedReconcileFailure';
}

/**
 * Counts reconciles in flight per controller and key, and records a
 * violation when a run of a key starts while another run of the same key
 * (same controller) has not returned yet (DESIGN invariant 9). A run counts
 * from the call until its promise settles, not until the workqueue moves on,
 * so a run the queue gave up on but that still works would be caught too.
 */
export class InFlightGuard {
  private readonly running = new Map<string, number>();
  /** Runs in flight now, over all controllers and keys. */
  inFlight = 0;

  constructor(private readonly violations: Violations) {}

  enter(controller: string, key: ObjectKey): () => void {
    const id = `${controller} ${key}`;
    const before = this.running.get(id) ?? 0;
    if (before > 0) this.violations.record('concurrent-reconcile', `${controller}: key ${key} started while ${before} run(s) of it were in flight`);
    this.running.set(id, before + 1);
    this.inFlight++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inFlight--;
      const now = (this.running.get(id) ?? 1) - 1;
      if (now === 0) this.running.delete(id);
      else this.running.set(id, now);
    };
  }
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Wraps a controller's reconcile: checked by the guard, slowed by a random
 * delay, and failing at random (`chaos.failureRate`), half the time before
 * the real work and half after it, so that retries of work already done are
 * exercised too (the reconciles must be idempotent).
 */
export function chaoticReconcile<T extends KubeObject>(
  controller: string,
  reconcile: ControllerReconciler<T>,
  chaos: ReconcileChaos,
  guard: InFlightGuard,
  random: Random,
  hooks: { onStart?: (key: ObjectKey) => void; onEnd?: (key: ObjectKey) => void } = {},
): (key: ObjectKey, ctx: ControllerContext<T>) => Promise<ReconcileResult | void> {
  return async (key, ctx) => {
    const leave = guard.enter(controller, key);
    hooks.onStart?.(key);
    try {
      const fail = random.chance(chaos.failureRate);
      const failFirst = random.chance(0.5);
      if (chaos.maxDelayMs > 0) await pause(random.next() * chaos.maxDelayMs, ctx.signal);
      if (fail && failFirst) throw new InjectedReconcileFailure(`injected failure before reconciling ${key}`);
      const result = await reconcile(key, ctx);
      if (result !== undefined && typeof result === 'object' && 'subscribe' in result) {
        throw new TypeError(`${controller}: the soak wraps promise reconciles only`);
      }
      if (fail) throw new InjectedReconcileFailure(`injected failure after reconciling ${key}`);
      return result;
    } finally {
      leave();
      hooks.onEnd?.(key);
    }
  };
}
