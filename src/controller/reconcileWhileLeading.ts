import {
  catchError,
  concat,
  defer,
  timer,
  distinctUntilChanged,
  EMPTY,
  filter,
  finalize,
  fromEvent,
  ignoreElements,
  map,
  merge,
  NEVER,
  type Observable,
  of,
  ReplaySubject,
  type OperatorFunction,
  type SchedulerLike,
  share,
  switchMap,
  take,
  takeUntil,
  tap,
  throwError,
} from 'rxjs';
import type { Logger } from '../logger.js';
import { reconcileByKey, type KeyTrigger, type ReconcileOptions, type ReconcileOutcome } from '../operators/reconcileByKey.js';
import type { Reconciler } from '../operators/reconciler.js';
import { leaderElection, type LeaderElectionOptions, type LeaderState } from '../sinks/leader/leaderElection.js';
import type { SourceMetrics } from '../sinks/metrics/sourceMetrics.js';
import type { KubeObject } from '../types.js';
import { resourceName } from '../types.js';
import type { Wiring } from './wiring.js';

/** The caches did not sync in time; the message names each resource and why. */
export class CacheSyncTimeoutError extends Error {
  override readonly name = 'CacheSyncTimeoutError';
  constructor(
    controller: string,
    timeoutMs: number,
    /** One line per resource that had not synced, with why. */
    readonly resources: readonly string[],
  ) {
    super(`controller "${controller}": caches did not sync within ${timeoutMs} ms: ${resources.join('; ')}`);
  }
}

export interface ReconcileWhileLeadingParts<T extends KubeObject> {
  name: string;
  wiring: Wiring<T>;
  /** Emits once to shut down gracefully. */
  stopping: Observable<void>;
  /** Aborting it ends the grace period at once. */
  stopNow?: AbortSignal;
  gracePeriod: number;
  /** The caches must sync within this (ms, scheduler time), or the run fails naming what did not. */
  cacheSyncTimeout: number;
  scheduler: SchedulerLike;
  logger: Logger;
  metrics: { readonly observer: ReconcileOptions['observer'] };
  monitor: Pick<SourceMetrics, 'storeSize'>;
  /** Leader election, or none: then this replica always leads. */
  election: Omit<LeaderElectionOptions, 'stop'> | undefined;
  /** Instead of `election`: sharding membership, leading throughout, told to stop (and give its Lease up) once the work has drained. */
  membership?: (stop: Observable<void>) => Observable<LeaderState>;
  onLeader: (state: LeaderState) => void;
  reconcile: Reconciler;
  queue: Omit<ReconcileOptions, 'stop'>;
  /** What wraps the queue (read-your-own-writes holds its input), if anything. */
  around?: (queue: OperatorFunction<KeyTrigger, ReconcileOutcome>) => OperatorFunction<KeyTrigger, ReconcileOutcome>;
  /** More informers to keep running for the run's whole life (watches added at run time); a failure of it fails the run. */
  keepWarm?: Observable<never>;
}

/**
 * A controller's run, composed: the informers kept warm for its whole life;
 * the queue (`reconcileByKey`) running only while this replica leads and
 * its stores have synced, torn down at once (runs aborted) when leadership
 * is lost; and a graceful end when `stopping` emits.
 *
 * ```
 * leading:   ─t──────────────f──t────────────s(stop)─────────────────────
 * queue:      └─runs…─────────┘  └─runs…──────┤drain (≤ grace)├
 * elector:   ──────────────────────────────────────────────────release─|
 * output:    ─outcomes…───────────outcomes…─────last outcomes─────────|
 * ```
 *
 * When the informers' watches end (scripted ones, in a test), the queue
 * drains what it has and the run ends the same way.
 *
 * On `stopping`: the queue starts no key any more and lets the runs in
 * flight finish (its `stop`); at `gracePeriod` after the stop, or when
 * `stopNow` aborts, the queue is unsubscribed, which aborts what still
 * runs. Once the queue has ended (or at once, when this replica was not
 * leading), the elector is told to stop: it steps down, releases the lease
 * and completes, and then the output completes: a host that waits for it
 * knows the lease is free. Leadership lost during the drain still aborts
 * the runs at once: no replica reconciles without the lease. A failure (an
 * informer that fails for good, an error of the queue) ends the run the same
 * way, the queue cut at once, and then the run errors with it.
 */
export function reconcileWhileLeading<T extends KubeObject>(parts: ReconcileWhileLeadingParts<T>): Observable<ReconcileOutcome> {
  const { wiring, stopping, scheduler, logger } = parts;
  const drained = new ReplaySubject<void>(1);
  // A failure (an informer failing for good, a queue erroring) ends the run the graceful way: the queue
  // is cut at once, the lease still released, then the run errors with it.
  const failed = new ReplaySubject<void>(1);
  let failure: { error: unknown } | undefined;
  const fail = (error: unknown): Observable<never> => {
    failure ??= { error };
    failed.next();
    return EMPTY;
  };
  const electionOptions = parts.election;
  const membership = parts.membership;
  const election: Observable<LeaderState> = (
    membership !== undefined
      ? defer(() => membership(drained))
      : electionOptions === undefined
      ? concat(of<LeaderState>({ leading: true, holder: undefined }), NEVER).pipe(takeUntil(drained))
      : defer(() => {
          logger.info({}, 'waiting to acquire the lease before reconciling');
          return leaderElection({ ...electionOptions, stop: drained });
        })
  ).pipe(
    tap((state) => parts.onLeader(state)),
    // One elector per run, and whoever subscribes late learns where it stands.
    share({ connector: () => new ReplaySubject<LeaderState>(1) }),
  );
  const leading = election.pipe(
    map((state) => state.leading),
    distinctUntilChanged(),
  );
  const lost = leading.pipe(
    filter((isLeading) => !isLeading),
    tap(() => logger.warn({}, 'lost leadership: aborting reconciles in flight')),
  );
  const stopNow = defer(() => {
    const signal = parts.stopNow;
    if (signal === undefined) return NEVER;
    return signal.aborted ? of(null) : fromEvent(signal, 'abort');
  });
  const graceOver = stopping.pipe(
    switchMap(() => merge(timer(parts.gracePeriod, scheduler), stopNow)),
    take(1),
    tap(() => logger.warn({ gracePeriod: parts.gracePeriod }, 'grace period over: aborting reconciles still in flight')),
  );
  // Informers whose watches end (scripted ones in tests) end the queue's input: it drains, and the run ends with it.
  const inputEnded = new ReplaySubject<void>(1);
  const cached = [...new Set(wiring.all.map(({ resource }) => resourceName(resource)))];
  const queue = defer(() => {
    // Start-up says what it waits for: a server that cannot be reached shows as a wait that does not end.
    if (!wiring.synced()) logger.info({ resources: cached }, `waiting for the caches of ${cached.join(', ')} to sync before reconciling`);
    return wiring.whenSynced;
  }).pipe(
    tap(() => logger.info({ resources: cached }, 'caches synced: reconciling')),
    switchMap(() => wiring.triggers),
    (parts.around ?? ((queue) => queue))(reconcileByKey(parts.reconcile, { ...parts.queue, stop: stopping })),
    tap({ complete: () => inputEnded.next() }),
    takeUntil(merge(lost, graceOver, failed)),
    catchError(fail),
  );
  const work = leading.pipe(
    takeUntil(merge(stopping.pipe(tap(() => logger.info({}, 'shutting down: no key starts any more'))), inputEnded, failed)),
    switchMap((isLeading) => {
      if (!isLeading) return EMPTY;
      return queue;
    }),
    finalize(() => drained.next()),
  );
  const done = new ReplaySubject<void>(1);
  // The elector is held from first to last (subscribed before the work), and ends after the work has drained.
  const main = merge(election.pipe(ignoreElements()), work).pipe(finalize(() => done.next()));
  // Informers run for the controller's whole life, leading or not.
  const warm = merge(
    ...wiring.all.map(({ resource, informer }) => {
      const name = resourceName(resource);
      return informer.events.pipe(tap((event) => parts.monitor.storeSize(name, event.store.size)));
    }),
    parts.keepWarm ?? EMPTY,
  ).pipe(ignoreElements(), takeUntil(done), catchError(fail));
  // controller-runtime's CacheSyncTimeout: caches that never sync are an error, not a silent wait.
  const syncDeadline =
    Number.isFinite(parts.cacheSyncTimeout) && parts.cacheSyncTimeout >= 0
      ? timer(parts.cacheSyncTimeout, scheduler).pipe(
          takeUntil(merge(wiring.whenSynced, done)),
          switchMap(() => fail(new CacheSyncTimeoutError(parts.name, parts.cacheSyncTimeout, wiring.problems()))),
        )
      : EMPTY;
  // The first failure is thrown once everything has wound down.
  return concat(
    merge(main, warm, syncDeadline),
    defer(() => (failure === undefined ? EMPTY : throwError(() => failure?.error))),
  );
}
