import { catchError, concatMap, defer, EMPTY, filter, fromEvent, map, NEVER, Observable, of, repeat, take, takeUntil, tap, throwError, timer, type SchedulerLike } from 'rxjs';
import type { Logger } from '../logger.js';
import type { KubeObject, ListWatchEvent } from '../types.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import { ListWatchError } from './listWatchError.js';
import type { ListWatchMonitor } from './listWatch.js';

/** The polls while a type is not served: 1 s doubling to 30 s, half of it again at most as jitter. */
export const SERVED_POLL_DEFAULTS: Required<Omit<BackoffOptions, 'resetAfterMs'>> = Object.freeze({ initialMs: 1_000, maxMs: 30_000, factor: 2, jitter: 0.5 });

/** What `whenServed` needs besides the list-watch it runs. */
export interface WhenServedOptions {
  /** The resource, as kube names it in messages (`widgets.example.com`). */
  resource: string;
  /**
   * Whether the type is served now (`servedInDiscovery`): one value, then
   * complete. An error counts as "not yet": it is logged, and asked again
   * after the next pause.
   */
  probe: () => Observable<boolean>;
  /** The pauses between probes (default `SERVED_POLL_DEFAULTS`); reset once a list of the type completes. */
  poll?: BackoffOptions;
  scheduler: SchedulerLike;
  logger: Logger;
  /** Told through `status` that the source is failing while the type is not served, and healthy once it is again. */
  monitor?: ListWatchMonitor;
  /** For the jitter of the pauses; `Math.random` by default. */
  random?: () => number;
  /** Aborting it while waiting completes the output (the list-watch itself completes on its own abort). */
  signal?: AbortSignal | undefined;
}

function aborted(signal: AbortSignal | undefined): Observable<unknown> {
  if (signal === undefined) return NEVER;
  return signal.aborted ? of(null) : fromEvent(signal, 'abort');
}

/** A fault that says the type is not served: a 404 on the list or the watch of it (`ListWatchError`). */
export function isNotServed(err: unknown): err is ListWatchError {
  return err instanceof ListWatchError && err.code === 404;
}

/**
 * Runs the list-watch that `open` makes while its resource type is served,
 * and waits while it is not, instead of ending: a controller started
 * before its CRD is installed, or whose CRD is deleted and installed again,
 * goes on.
 *
 * ```
 * open():   ─R─L─S─A──✕(404)                  ─R─L─L─S─A─…
 * probe():                 ─f──────f──────────t
 * output:   ─R─L─S─A──(RS)─────────────────────R─L─L─S─A─…
 *                     └ pause, probe, longer pause, probe … ┘
 * ```
 *
 * - A 404 of the list or the watch (the type is not served: never
 *   installed, or its CRD deleted) is no end: the output says `Restart`
 *   (unless the list that failed just said it) then `Synced` with no
 *   resourceVersion, an empty list, so `deltas()`
 *   turns every object still stored into a `Deleted` (`finalStateUnknown`)
 *   and the store is empty and synced. The monitor's `status` says the
 *   source is failing (a controller is not `ready()` meanwhile), and the
 *   log says it once at warn.
 * - Then it asks `probe` after a pause (1 s, doubling to 30 s, with
 *   jitter; all on `scheduler`) until the type is served, says so (status
 *   healthy, a log line at info), and opens the list-watch again. A probe
 *   that fails counts as "not yet". The pauses start over once a list of
 *   the type has completed, so a type that comes back as soon as the probe
 *   says so but whose list still fails is asked about ever more slowly.
 * - Any other error of the list-watch ends the output with it; its
 *   completion (an aborted signal) completes the output, as does `signal`
 *   aborted during a wait; unsubscribing
 *   unsubscribes it and any probe under way.
 */
export function whenServed<T extends KubeObject>(open: () => Observable<ListWatchEvent<T>>, options: WhenServedOptions): Observable<ListWatchEvent<T>> {
  const { resource, scheduler, logger, monitor } = options;
  return defer(() => {
    const pauses = new Backoff({ ...SERVED_POLL_DEFAULTS, ...options.poll }, scheduler, options.random);
    let gone: ListWatchError | undefined;
    // Whether the list-watch's last event began a list: a list refused at once (404) began with one already.
    let listing = false;
    const run = defer(() => {
      gone = undefined;
      listing = false;
      return open();
    }).pipe(
      tap((event) => {
        listing = event.type === 'Restart';
        if (event.type === 'Synced') pauses.reset();
      }),
      catchError((err: unknown) => {
        if (!isNotServed(err)) return throwError(() => err);
        gone = err;
        logger.warn(
          { resource, verb: err.verb, message: err.message },
          `${resource} is not served (check group, version and plural, and that its CRD is installed): its cache is emptied, and the source waits for the type to be served`,
        );
        monitor?.status?.(resource, { healthy: false, verb: err.verb, reason: `not served (404 ${err.reason}); waiting for the type to be served`, code: 404 });
        const empty: ListWatchEvent<T> = { type: 'Synced', resourceVersion: '' };
        return listing ? of(empty) : of<ListWatchEvent<T>[]>({ type: 'Restart' }, empty);
      }),
    );
    // Each probe after its pause; the first true ends the wait.
    const untilServed = defer(() => timer(Math.max(1, pauses.next()), scheduler)).pipe(
      concatMap(() =>
        options.probe().pipe(
          take(1),
          catchError((err: unknown) => {
            logger.debug({ resource, err: err instanceof Error ? err.message : String(err) }, `asking whether ${resource} is served failed; asking again later`);
            return of(false);
          }),
        ),
      ),
      repeat(),
      filter(Boolean),
      take(1),
      tap(() => {
        logger.info({ resource }, `${resource} is served again: listing it`);
        monitor?.status?.(resource, { healthy: true });
      }),
      map(() => undefined),
      takeUntil(aborted(options.signal)),
    );
    return run.pipe(repeat({ delay: () => (gone === undefined ? EMPTY : untilServed) }));
  });
}
