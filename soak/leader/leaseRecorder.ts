import { delay, Observable, switchMap, tap, timer, type SchedulerLike } from 'rxjs';
import type { Lease } from '../../src/sinks/leader/leaseRecord.js';
import type { LeaseClient } from '../../src/sinks/leader/leaseClient.js';

/** A write the lease store accepted: when (on the replicas' clock), by whom, and who holds the lease after it. */
export interface LeaseWrite {
  t: number;
  writer: string;
  holder: string;
  /** The record's renewTime after the write: what tells one renewal from the next. */
  renewTime?: string;
}

/** A read of the lease as it reached the replica's elector: when (its clock), by whom, what it said. */
export interface LeaseRead {
  t: number;
  reader: string;
  holder: string;
  renewTime: string | undefined;
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
  reads?: LeaseRead[],
): LeaseClient {
  const call = <T>(send: () => Observable<T>, record?: (value: T) => void): Observable<T> =>
    timer(leg(), scheduler).pipe(
      switchMap(send),
      tap((value) => record?.(value)),
      delay(leg(), scheduler),
    );
  const written = (lease: Lease) => writes.push({ t: scheduler.now(), writer, holder: lease.spec?.holderIdentity ?? '', renewTime: lease.spec?.renewTime });
  // Recorded on delivery, after the way back: the moment (and tick) the elector judges the lease by.
  const read = (lease: Lease | undefined) => reads?.push({ t: scheduler.now(), reader: writer, holder: lease?.spec?.holderIdentity ?? '', renewTime: lease?.spec?.renewTime });
  return {
    get: (namespace, name) => call(() => inner.get(namespace, name)).pipe(tap(read)),
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
 * old holder's last write is `leaseDuration` old (else two could lead), and,
 * given its reads, must take it on its first try after the lease expired in
 * its own eyes (see `lateTakeover`): a bound in the lease's terms, which a
 * busy machine cannot stretch. A release (empty holder) written by the
 * holder hands over at once and is not a takeover; a clear written by any
 * other replica is a violation (only the holder may give the lease up) and
 * changes nothing in the tracking, so the next takeover is still measured
 * from the real holder's last renewal.
 */
export function takeovers(writes: readonly LeaseWrite[], leaseDuration: number, reads: readonly LeaseRead[] | undefined, tolerance: number): Takeovers {
  const result: Takeovers = { count: 0, gaps: [], violations: [], handovers: [] };
  let holder = '';
  let lastByHolder = 0;
  let lastRenewTime: string | undefined;
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
      if (reads !== undefined) {
        const late = lateTakeover(reads, w, holder, lastRenewTime, leaseDuration, tolerance);
        if (late !== undefined) result.violations.push(late);
      }
    }
    holder = w.holder;
    lastByHolder = w.t;
    lastRenewTime = w.renewTime;
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

/**
 * The lease expires for a candidate `leaseDuration` after it first read the
 * old holder's last renewal; its first try after that must take it. A
 * second read after the expiry, before the takeover, means a try wasted
 * (or a replica that did not judge the lease as the lease says). Reads
 * within `tolerance` (the clock's resolution) of the expiry may fall on
 * either side of it and are not counted.
 */
function lateTakeover(reads: readonly LeaseRead[], w: LeaseWrite, from: string, renewTime: string | undefined, leaseDuration: number, tolerance: number): string | undefined {
  const mine = reads.filter((r) => r.reader === w.holder && r.t <= w.t);
  const seen = mine.find((r) => r.holder === from && r.renewTime === renewTime);
  if (seen === undefined) return `${w.holder} took the lease from ${from} without having read its last renewal (${renewTime ?? 'no renewTime'})`;
  const expired = seen.t + leaseDuration;
  const after = mine.filter((r) => r.t > expired + tolerance);
  if (after.length <= 1) return undefined;
  return `${w.holder} took the lease from ${from} on try ${after.length} after it expired in its eyes (reads at ${after.map((r) => Math.round(r.t - expired)).join(', ')} ms after), not on the first`;
}
