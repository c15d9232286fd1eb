import type { KubeObject } from '../../types.js';

/**
 * The observed state of a coordination.k8s.io/v1 Lease used as a leader
 * election lock, and the one judgement made from it: has it expired?
 *
 * The rule is client-go's: a replica never trusts the timestamps written in
 * the Lease (they come from another machine's clock). It remembers when it
 * last saw the lease record *change*, on its own clock, and judges the lease
 * expired once `leaseDurationSeconds` have passed since then without a
 * further change. Every renewal rewrites `renewTime`, so a live holder keeps
 * pushing that moment forward in every observer's eyes; a silent one lets it
 * run out. Skew between clocks does not matter, only their rates.
 */

/** `Lease.spec`. Times are kube `MicroTime` strings (RFC 3339 with six fractional digits). */
export interface LeaseSpec {
  /** Who holds the lease; empty or absent when nobody does. */
  holderIdentity?: string;
  /** How long the holder may go without renewing before others may take the lease. */
  leaseDurationSeconds?: number;
  /** When the current holder acquired the lease. */
  acquireTime?: string;
  /** When the holder last renewed it. */
  renewTime?: string;
  /** How many times the lease changed hands. */
  leaseTransitions?: number;
  /** Kube's coordinated leader election strategy, if one is set (kept as read). */
  strategy?: string;
  /** The holder kube's coordinated leader election prefers, if any (kept as read). */
  preferredHolder?: string;
}

/** A coordination.k8s.io/v1 Lease as plain JSON. */
export interface Lease extends KubeObject {
  /** The holder, its lease duration and times. */
  spec?: LeaseSpec;
}

/**
 * The part of a Lease that leader election reads and writes (client-go's
 * `LeaderElectionRecord`), with absent fields at their zero values so that
 * two records compare equal exactly when they say the same thing.
 */
export interface LeaderElectionRecord {
  /** `''` when nobody holds the lease (never created, or released). */
  readonly holderIdentity: string;
  /** `spec.leaseDurationSeconds`, 0 when absent. */
  readonly leaseDurationSeconds: number;
  /** `spec.acquireTime`, `''` when absent. */
  readonly acquireTime: string;
  /** `spec.renewTime`, `''` when absent. */
  readonly renewTime: string;
  readonly leaderTransitions: number;
  /** `spec.strategy`, `''` when absent. */
  readonly strategy: string;
  /** `spec.preferredHolder`, `''` when absent. */
  readonly preferredHolder: string;
}

/** What one replica knows of the lease: the object last read or written, and when its record last changed. */
export interface LeaseObservation {
  /** The object as last read or written; its resourceVersion guards the next update. */
  readonly lease: Lease;
  readonly record: LeaderElectionRecord;
  /** Local time (the scheduler's `now()`, ms) at which this replica first saw `record`. */
  readonly observedTime: number;
}

export function leaderElectionRecord(lease: Lease): LeaderElectionRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: spec.acquireTime ?? '',
    renewTime: spec.renewTime ?? '',
    leaderTransitions: spec.leaseTransitions ?? 0,
    strategy: spec.strategy ?? '',
    preferredHolder: spec.preferredHolder ?? '',
  };
}

export function sameRecord(a: LeaderElectionRecord, b: LeaderElectionRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaderTransitions === b.leaderTransitions &&
    a.strategy === b.strategy &&
    a.preferredHolder === b.preferredHolder
  );
}

/**
 * Folds a freshly read (or written) Lease into what was known. The observed
 * time moves to `now` only when the record differs from the one observed
 * before; the object itself is always replaced, since a change of metadata
 * alone (labels, a no-op write) still moves the resourceVersion the next
 * update must carry.
 */
export function observeLease(previous: LeaseObservation | undefined, lease: Lease, now: number): LeaseObservation {
  const record = leaderElectionRecord(lease);
  if (previous !== undefined && sameRecord(previous.record, record)) {
    return { lease, record, observedTime: previous.observedTime };
  }
  return { lease, record, observedTime: now };
}

/**
 * Whether the lease is still valid at `now` in this replica's eyes: its
 * record changed less than `leaseDurationSeconds` ago (the duration the
 * record itself states, as current client-go reads it, so a lease released
 * with a duration of 1 s frees up within a second).
 */
export function leaseValid(observation: LeaseObservation, now: number): boolean {
  return observation.observedTime + observation.record.leaseDurationSeconds * 1000 > now;
}

/** Whether a candidate may try to take the lease at `now`: nobody holds it, or its holder let it expire. */
export function leaseFree(observation: LeaseObservation, now: number): boolean {
  return observation.record.holderIdentity === '' || !leaseValid(observation, now);
}
