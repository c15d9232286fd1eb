import { BehaviorSubject, concatMap, dematerialize, filter, map, materialize, mergeMap, type Observable, take } from 'rxjs';
import type { LeaseClient } from '../../sinks/leader/leaseClient.js';

/**
 * How a paused client behaves: `hang` holds every call and every answer
 * until `resume()` (a partition: requests queue, responses stall); `fail`
 * fails every new call at once and turns every answer that arrives into an
 * error (a dead connection: a write may still have landed, its caller will
 * never know).
 */
export type PauseMode = 'hang' | 'fail';

/** A lease client that a test can cut off from its server and reconnect. */
export interface PausableLeaseClient {
  /** Use this one: it behaves as the wrapped client while not paused. */
  readonly client: LeaseClient;
  /** Cuts the client off: `hang` (default) or `fail`, see `PauseMode`. */
  pause(mode?: PauseMode): void;
  /** Reconnects: held calls go on, new ones pass. */
  resume(): void;
  /** The current mode while paused; undefined while connected. */
  readonly paused: PauseMode | undefined;
}

/** The error a paused client in `fail` mode answers with. */
export class LeaseClientPausedError extends Error {
  /** Always `LeaseClientPausedError`. */
  override readonly name = 'LeaseClientPausedError';
}

/**
 * Wraps a `LeaseClient` so a test can cut it off and restore it: pause the
 * leader's client to stop its renewals, resume to let it back. Nothing is
 * timed here; what a hang lasts is up to the test (and the elector's own
 * deadlines). While not paused, calls pass through synchronously, so it adds
 * no step in virtual time.
 */
export function pausable(inner: LeaseClient): PausableLeaseClient {
  const state = new BehaviorSubject<PauseMode | undefined>(undefined);

  /** Waits while hanging; then passes (undefined) or fails (`fail`), per what the state is at that moment. */
  const gate = (what: string): Observable<void> =>
    state.pipe(
      filter((mode) => mode !== 'hang'),
      take(1),
      map((mode) => {
        if (mode === 'fail') throw new LeaseClientPausedError(`lease client paused: ${what} failed`);
      }),
    );

  const wrap = <T>(what: string, call: () => Observable<T>): Observable<T> =>
    gate(what).pipe(
      mergeMap(() => call().pipe(materialize())),
      concatMap((notification) =>
        notification.kind === 'C' ? [notification] : gate(what).pipe(map(() => notification)),
      ),
      dematerialize(),
    );

  const client: LeaseClient = {
    get: (namespace, name) => wrap(`get ${namespace}/${name}`, () => inner.get(namespace, name)),
    create: (lease) =>
      wrap(`create ${lease.metadata.namespace}/${lease.metadata.name}`, () => inner.create(lease)),
    update: (lease) =>
      wrap(`update ${lease.metadata.namespace}/${lease.metadata.name}`, () => inner.update(lease)),
  };

  return {
    client,
    pause: (mode = 'hang') => state.next(mode),
    resume: () => state.next(undefined),
    get paused() {
      return state.value;
    },
  };
}
