import { timer, type Observable, type SchedulerLike } from 'rxjs';

/**
 * Abortable waiting, written once: everything that waits on a promise and
 * can be cancelled by an `AbortSignal` (a request, a retry's pause) goes
 * through `abortableValue`, and so rejects with the signal's reason, at once
 * if it is already aborted, and cancels what it waited for.
 */

/**
 * The last value of `source` (undefined if it completes empty), as a
 * promise. Aborting `signal` unsubscribes from `source` and rejects with
 * the signal's reason; an error of `source` rejects with that error.
 */
export function abortableValue<T>(source: Observable<T>, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let value: T | undefined;
    let settled = false;
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      subscription.unsubscribe();
      reject(signal?.reason);
    };
    const done = (): void => {
      settled = true;
      signal?.removeEventListener('abort', onAbort);
    };
    const subscription = source.subscribe({
      next: (v) => {
        value = v;
      },
      error: (err: unknown) => {
        done();
        reject(err);
      },
      complete: () => {
        done();
        resolve(value as T);
      },
    });
    if (!settled) signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Resolves after `ms` on `scheduler`'s clock, or rejects with the signal's
 * reason as soon as `signal` aborts. Every wait of the sinks goes through it,
 * so a test can pass a scheduler that records the delays asked for instead
 * of sleeping.
 */
export async function delay(ms: number, scheduler: SchedulerLike, signal?: AbortSignal): Promise<void> {
  await abortableValue(timer(Math.max(0, ms), scheduler), signal);
}
