import { Observable, asyncScheduler, interval, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { StoreEvent } from '../store/indexer.js';
import type { KubeObject, ObjectKey } from '../types.js';

/** Options of `resync()`. */
export interface ResyncOptions {
  /** The clock of the resync period (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /**
   * How many equal steps a period's resync is spread over (default 10): each
   * step re-emits its share of the keys, so a large store never replays all
   * at once.
   */
  slices?: number;
}

/**
 * client-go's periodic resync: once the store has synced, every `periodMs`
 * each stored key comes through again as a `Sync` delta (`object` and `old`
 * both the stored object), so level-triggered reconciles re-check state that
 * no event touched.
 *
 * With `slices: 2`, `periodMs: 40` and keys a, b, c, d stored:
 * ```
 * in:  ─Synced────────────────────────────────────────────
 * out: ─Synced──────────Sync(a,b)──────Sync(c,d)──────Sync(a,b)…
 *       |<── 20 ms ──>|               |<── 20 ms ──>|
 * ```
 * Keys are read at the start of each period; one deleted before its slice
 * comes is skipped, one added waits for the next period. Events from the
 * input pass through unchanged and in order. Completing or erroring the
 * input stops the timer.
 *
 * Edge case: if reading the store throws (a `Lister` of one's own, or an
 * event without one), the output errors with an Error naming `resync`, the
 * thrown value as `cause`, and the timer stops.
 */
export function resync<T extends KubeObject = KubeObject>(
  periodMs: number,
  options: ResyncOptions = {},
): MonoTypeOperatorFunction<StoreEvent<T>> {
  if (!(periodMs > 0)) throw new RangeError(`resync period must be a positive number of ms, got ${periodMs}`);
  const scheduler = options.scheduler ?? asyncScheduler;
  const slices = Math.max(1, Math.floor(options.slices ?? 10));
  return (source) =>
    new Observable<StoreEvent<T>>((subscriber) => {
      let ticking: Subscription | undefined;
      const start = (store: StoreEvent<T>['store']) => {
        let period: ObjectKey[] = [];
        let perSlice = 0;
        ticking = interval(periodMs / slices, scheduler).subscribe((tick) => {
          // Thrown from a timer's callback, an error would escape into the
          // event loop and the timer tick on; the output gets it instead.
          try {
            const slice = tick % slices;
            if (slice === 0) {
              period = store.keys();
              perSlice = Math.ceil(period.length / slices);
            }
            const end = Math.min(period.length, (slice + 1) * perSlice);
            for (let i = slice * perSlice; i < end; i++) {
              const key = period[i] as ObjectKey;
              const object = store.get(key);
              if (object !== undefined) subscriber.next({ type: 'Sync', key, object, old: object, store });
            }
          } catch (err) {
            subscriber.error(new Error(`resync: reading the store threw: ${messageOf(err)}`, { cause: err }));
          }
        });
      };
      const input = source.subscribe({
        next(event) {
          // A synchronous source goes on calling this observer after the output errored.
          if (subscriber.closed) return;
          subscriber.next(event);
          if (ticking !== undefined) return;
          try {
            if (event.store.synced) start(event.store);
          } catch (err) {
            subscriber.error(new Error(`resync: reading the store threw: ${messageOf(err)}`, { cause: err }));
          }
        },
        error(err: unknown) {
          ticking?.unsubscribe();
          subscriber.error(err);
        },
        complete() {
          ticking?.unsubscribe();
          subscriber.complete();
        },
      });
      return () => {
        input.unsubscribe();
        ticking?.unsubscribe();
      };
    });
}

function messageOf(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown);
}
