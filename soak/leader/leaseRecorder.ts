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
  /** Each takeover: when (replica clock) `to` wrote its first record as holder, and whom it took the lease from. */
  handovers: { t: number; from: string; to: string }[];
}

/**
 * Reads the lease's history for takeovers: a write whose holder differs
 * from the previous holder. The new holder may take the lease only once the
 * old holder's last write is `leaseDuration` old (else two could lead), and
 * should have within `bound`. A release (empty holder) written by the
 * holder hands over at once and is not a takeover; a clear written by any
 * other replica is a violation (only the holder may give the lease up) and
 * changes nothing in the tracking, so the next takeover is still measured
 * from the real holder's last renewal.
 */
export function takeovers(writes: readonly LeaseWrite[], leaseDuration: number, bound: number, tolerance: number): Takeovers {
  const result: Takeovers = { count: 0, gaps: [], violations: [], handovers: [] };
  let holder = '';
  let lastByHolder = 0;
  for (const w of writes) {
    if (w.holder === '') {
      if (w.writer === holder || holder === '') holder = '';
      else result.violations.push(`${w.writer} cleared the lease held by ${holder}`);
      continue;
    }
    if (w.holder !== holder && holder !== '') {
      const gap = w.t - lastByHolder;
      result.count++;
      result.gaps.push(gap);
      result.handovers.push({ t: w.t, from: holder, to: w.holder });
      if (gap < leaseDuration - tolerance) result.violations.push(`${w.holder} took the lease from ${holder} ${Math.round(gap)} ms after its last renewal, before the lease duration (${leaseDuration} ms)`);
      if (gap > bound) result.violations.push(`${w.holder} took the lease from ${holder} ${Math.round(gap)} ms after its last renewal, beyond the bound (${bound} ms)`);
    }
    holder = w.holder;
    lastByHolder = w.t;
  }
  return result;
}

/** When a replica's `leading()` was seen true: sampled intervals, replica clock. */
export interface LeadingInterval {
  identity: string;
  from: number;
  to: number;
}

/**
 * Checks each takeover against what the replicas said: the old holder's
 * `leading()` must have gone false before the new holder acquired, so a
 * sample showing it still leading at or after the acquisition is a
 * violation. Samples only bound the moment from below (it went false
 * after the last sample that showed it leading), so the check never flags
 * a replica that was not in fact still leading.
 */
export function leadingAfterHandover(handovers: Takeovers['handovers'], intervals: readonly LeadingInterval[]): string[] {
  const out: string[] = [];
  for (const h of handovers) {
    for (const i of intervals) {
      if (i.identity === h.from && i.from < h.t && i.to >= h.t) {
        out.push(`${h.from} still said leading() ${Math.round(i.to - h.t)} ms after ${h.to} acquired the lease (replica clock)`);
      }
    }
  }
  return out;
}
