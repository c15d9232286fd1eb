import { delay, Observable, switchMap, tap, timer, type SchedulerLike } from 'rxjs';
import type { Lease } from '../../src/sinks/leader/leaseRecord.js';
import type { LeaseClient } from '../../src/sinks/leader/leaseClient.js';

/** A write the lease store accepted: when (on the replicas' clock), by whom, and who holds the lease after it. */
export interface LeaseWrite {
  t: number;
  writer: string;
  holder: string;
}

/**
 * Wraps the replicas' shared lease store for one replica: each call takes a
 * random latency on the way there and on the way back (on the replica's
 * scheduler), and every write is recorded at the moment the store applied
 * it, which is when the other replicas can see it. Wrap this one in
 * `pausable`: a pause then stops calls before they reach the store, and
 * answers after.
 */
export function recordingLeaseClient(
  inner: LeaseClient,
  writer: string,
  writes: LeaseWrite[],
  scheduler: SchedulerLike,
  leg: () => number,
): LeaseClient {
  const call = <T>(send: () => Observable<T>, record?: (value: T) => void): Observable<T> =>
    timer(leg(), scheduler).pipe(
      switchMap(send),
      tap((value) => record?.(value)),
      delay(leg(), scheduler),
    );
  const written = (lease: Lease) => writes.push({ t: scheduler.now(), writer, holder: lease.spec?.holderIdentity ?? '' });
  return {
    get: (namespace, name) => call(() => inner.get(namespace, name)),
    create: (lease) => call(() => inner.create(lease), written),
    update: (lease) => call(() => inner.update(lease), written),
  };
}

export interface Takeovers {
  /** Times the lease passed from one holder to another. */
  count: number;
  /** For each: ms (replica clock) from the old holder's last accepted write to the new holder's first. */
  gaps: number[];
  /** Takeovers sooner than the lease duration or later than the bound, described. */
  violations: string[];
}

/**
 * Reads the lease's history for takeovers: a write whose holder differs
 * from the previous holder. The new holder may take the lease only once the
 * old holder's last write is `leaseDuration` old (else two could lead), and
 * should have within `bound`. A release (empty holder) hands over at once
 * and is not a takeover.
 */
export function takeovers(writes: readonly LeaseWrite[], leaseDuration: number, bound: number, tolerance: number): Takeovers {
  const result: Takeovers = { count: 0, gaps: [], violations: [] };
  let holder = '';
  let lastByHolder = 0;
  for (const w of writes) {
    if (w.holder === '') {
      holder = '';
      continue;
    }
    if (w.holder !== holder && holder !== '') {
      const gap = w.t - lastByHolder;
      result.count++;
      result.gaps.push(gap);
      if (gap < leaseDuration - tolerance) result.violations.push(`${w.holder} took the lease from ${holder} ${Math.round(gap)} ms after its last renewal, before the lease duration (${leaseDuration} ms)`);
      if (gap > bound) result.violations.push(`${w.holder} took the lease from ${holder} ${Math.round(gap)} ms after its last renewal, beyond the bound (${bound} ms)`);
    }
    holder = w.holder;
    lastByHolder = w.t;
  }
  return result;
}
