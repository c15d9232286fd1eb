import type { SchedulerLike } from 'rxjs';

/**
 * A promise that resolves after `ms` on `scheduler`'s clock, or rejects with
 * the signal's reason as soon as `signal` aborts (at once if it already
 * has). Every wait of the sinks goes through it, so a test can pass a
 * scheduler that records the delays asked for instead of sleeping.
 */
export function delay(ms: number, scheduler: SchedulerLike, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let settled = false;
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      subscription.unsubscribe();
      reject(signal?.reason);
    };
    const subscription = scheduler.schedule(() => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    if (!settled) signal?.addEventListener('abort', onAbort, { once: true });
  });
}
