import { catchError, concat, defer, EMPTY, map, mergeMap, type Observable, of, throwError } from 'rxjs';
import {
  type Lease,
  type LeaseObservation,
  type LeaseSpec,
  leaseFree,
  leaseValid,
  observeLease,
} from './leaseRecord.js';
import { kubeMicroTime } from '../../util/time.js';
import { isConflict } from '../client/errors.js';
import type { LeaseClient } from './leaseClient.js';

/**
 * The writes leader election makes on its Lease (client-go's
 * `tryAcquireOrRenew` and `release` over a `LeaseLock`), as cold
 * Observables: one try each, no waiting, no retry loop; the elector
 * (`./leaderElection.ts`) decides when to try again.
 */

export interface LeaseLock {
  readonly client: LeaseClient;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  /** Written as `leaseDurationSeconds` when taking or renewing the lease. */
  readonly leaseDurationSeconds: number;
  /** The local clock, ms (the elector's scheduler). */
  now(): number;
}

/**
 * What one try learned: `observed` when it read the lease (whatever it then
 * did), `acquired` when its write succeeded (this replica now holds the lease
 * as that observation shows).
 */
export interface LeaseStep {
  readonly type: 'observed' | 'acquired';
  readonly observation: LeaseObservation;
}

function holds(observation: LeaseObservation | undefined, identity: string): observation is LeaseObservation {
  return observation !== undefined && observation.record.holderIdentity === identity;
}

/**
 * The spec this replica writes to take or keep the lease. Renewing keeps
 * `acquireTime` and the transition count; taking it over (from another
 * holder, or from nobody after a release) counts one more transition. The
 * whole spec is replaced, as client-go does, so a coordinated-election
 * `strategy` or `preferredHolder` left by someone else is cleared.
 */
function holderSpec(lock: LeaseLock, previous: LeaseObservation | undefined): LeaseSpec {
  const now = kubeMicroTime(lock.now());
  const renewing = holds(previous, lock.identity);
  const transitions = previous === undefined ? 0 : previous.record.leaderTransitions + (renewing ? 0 : 1);
  return {
    holderIdentity: lock.identity,
    leaseDurationSeconds: lock.leaseDurationSeconds,
    acquireTime: renewing ? previous.record.acquireTime : now,
    renewTime: now,
    leaseTransitions: transitions,
  };
}

function write(lock: LeaseLock, observation: LeaseObservation): Observable<LeaseStep> {
  const lease: Lease = { ...observation.lease, spec: holderSpec(lock, observation) };
  return lock.client
    .update(lease)
    .pipe(map((updated) => ({ type: 'acquired', observation: observeLease(observation, updated, lock.now()) })));
}

/** Reads the lease and takes it if it is free, or renews it if it is ours; creates it if it does not exist. */
function readThenWrite(lock: LeaseLock, observed: LeaseObservation | undefined): Observable<LeaseStep> {
  return lock.client.get(lock.namespace, lock.name).pipe(
    mergeMap((lease): Observable<LeaseStep> => {
      if (lease === undefined) {
        const fresh: Lease = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { namespace: lock.namespace, name: lock.name },
          spec: holderSpec(lock, undefined),
        };
        return lock.client
          .create(fresh)
          .pipe(map((created) => ({ type: 'acquired', observation: observeLease(undefined, created, lock.now()) })));
      }
      const observation = observeLease(observed, lease, lock.now());
      const seen: LeaseStep = { type: 'observed', observation };
      if (!holds(observation, lock.identity) && !leaseFree(observation, lock.now())) return of(seen);
      return concat(of(seen), write(lock, observation));
    }),
  );
}

/**
 * One try to acquire or renew, given what this replica observed last.
 * The holder of a lease it still judges valid first renews optimistically
 * with the resourceVersion it last wrote (one request instead of two);
 * if that fails (a conflict, a fault) it falls back to reading the lease
 * and deciding again. Errors (a lost race is a `KubeApiError` with
 * `isConflict` / `isAlreadyExists`) end the try; the `observed` step that
 * came before an error still stands.
 */
export function tryAcquireOrRenew(
  lock: LeaseLock,
  observed: LeaseObservation | undefined,
  onFastPathFailure: (err: unknown) => void = () => {},
): Observable<LeaseStep> {
  return defer(() => {
    if (!holds(observed, lock.identity) || !leaseValid(observed, lock.now())) return readThenWrite(lock, observed);
    return write(lock, observed).pipe(
      catchError((err: unknown) => {
        onFastPathFailure(err);
        return readThenWrite(lock, observed);
      }),
    );
  });
}

/**
 * Gives the lease up, as client-go's `release`: an empty holder and a
 * duration of 1 s, so the others take over within a second instead of
 * waiting out the full lease. One conditional write over the lease as this
 * replica last saw it, and only if that showed this replica as the holder:
 * if the lease changed since (another holder, or a write of ours that
 * landed after we stopped, possibly from a new subscription with the same
 * identity that now leads), the 409 leaves it alone and it expires in its
 * own time. Safer than client-go, which re-reads and retries on conflict
 * and so can release a lease that a newer writer under the same identity
 * relies on. Emits the released lease, or completes empty when there was
 * nothing to release or the lease had changed.
 */
export function releaseLease(lock: LeaseLock, observed: LeaseObservation | undefined): Observable<Lease> {
  return defer(() => {
    if (!holds(observed, lock.identity)) return EMPTY;
    const now = kubeMicroTime(lock.now());
    const released: Lease = {
      ...observed.lease,
      spec: {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: observed.record.leaderTransitions,
      },
    };
    return lock.client
      .update(released)
      .pipe(catchError((err: unknown) => (isConflict(err) ? EMPTY : throwError(() => err))));
  });
}
