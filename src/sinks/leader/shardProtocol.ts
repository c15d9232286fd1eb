import type { Lease } from './leaseRecord.js';
import { parseSlots, slotsOf } from './shardSlots.js';

/**
 * The handoff protocol of sharding membership, as pure functions of what a
 * member knows; `./shardMembership.ts` is the shell that reads and writes
 * the Leases and keeps time.
 *
 * Every member has a Lease of its own, renewed as a leader renews (client-go
 * timing), whose annotation `rxkube.io/shard-slots` lists every slot it
 * *announces*: the slots it runs (active), the ones it is letting go of
 * (draining: no run starts, runs in flight finish) and the ones it claims.
 * A member's slots, per tick:
 *
 *   desired ─(nobody live announces it)─▶ claiming ─(written, and a list read after
 *   that write shows no other live member announcing it)─▶ active
 *   active ─(no longer desired)─▶ draining ─(no run in flight)─▶ released
 *
 * - `desired` is what rendezvous hashing gives this member among the live
 *   members: itself (while its own renewals succeed) and every other whose
 *   Lease it judges valid by client-go's rule (the record changed less than
 *   `leaseDurationSeconds` ago on the local clock; timestamps written in
 *   Leases are never compared with the local clock).
 * - A claim conflicting with another live member's announcement is
 *   withdrawn, never forced; an active slot is never given up because of one.
 * - Released slots leave the announcement at the next write; only then can
 *   another member see them free.
 *
 * Why no slot is active on two members at once: a member writes its claim,
 * then lists. Of two members claiming one slot, the one whose write came
 * second in the server's order lists after the other's write and sees it,
 * so at most the first goes on. The first keeps announcing the slot, in
 * every write, for as long as a run of it may still be going. So the second
 * sees it as taken unless it judged the first member's Lease expired: that
 * takes `leaseDuration` without a change of its record, while the first
 * member drops every slot once no renewal succeeded for `renewDeadline`
 * (shorter) since the last successful one was sent. What this needs: clocks
 * that run at the same rate (skew and steps of wall clocks do not matter),
 * and aborted runs that end within `leaseDuration − renewDeadline`.
 */

/** The annotation listing the slots a member announces (`formatSlots`). */
export const shardSlotsAnnotation = 'rxkube.io/shard-slots';
/** The annotation stating how many slots the writer cuts the hash space into. */
export const shardSlotCountAnnotation = 'rxkube.io/shard-slot-count';
/** The label that marks the Leases of one sharded controller's members. */
export const shardControllerLabel = 'rxkube.io/shard-controller';

/** What a member knows of another member's Lease. */
export interface PeerView {
  /** `spec.holderIdentity`; empty once the member released its Lease. */
  readonly identity: string;
  /** The slots it announces. */
  readonly slots: ReadonlySet<number>;
  /** Everything that counts as a change of its record, as one string. */
  readonly record: string;
  /** Local time at which this member first saw `record`. */
  readonly observedTime: number;
  /** `spec.leaseDurationSeconds`, in ms. */
  readonly duration: number;
  /** Set when its annotations could not be read: then it is taken to announce every slot. */
  readonly unreadable?: string;
}

/** A member's own slots. */
export interface SlotState {
  /** Runs may start. */
  readonly active: ReadonlySet<number>;
  /** No run starts; runs in flight may finish. By slot, the local time the drain began. */
  readonly draining: ReadonlyMap<number, number>;
  /** Claimed, not yet confirmed. */
  readonly claiming: ReadonlySet<number>;
}

export const noSlots: SlotState = Object.freeze({ active: new Set<number>(), draining: new Map<number, number>(), claiming: new Set<number>() });

/** Every slot a member's next write announces. */
export function announced(state: SlotState): Set<number> {
  return new Set([...state.active, ...state.draining.keys(), ...state.claiming]);
}

function allSlots(slots: number): Set<number> {
  return new Set(Array.from({ length: slots }, (_, i) => i));
}

/** Reads the slots a Lease announces, conservatively: unreadable text, or another slot count, announces all. */
function readSlots(lease: Lease, slots: number): { slots: Set<number>; unreadable?: string } {
  const annotations = lease.metadata?.annotations ?? {};
  const count = annotations[shardSlotCountAnnotation];
  if (count !== undefined && count !== String(slots)) {
    return { slots: allSlots(slots), unreadable: `it cuts the hash space into ${count} slots, this member into ${slots}` };
  }
  try {
    return { slots: parseSlots(annotations[shardSlotsAnnotation] ?? '', slots) };
  } catch (err) {
    return { slots: allSlots(slots), unreadable: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Folds a fresh list of the members' Leases (this member's own left out by
 * the caller) into what was known: a peer's observed time moves to `now`
 * only when its record (holder, duration, times, announced slots) differs.
 */
export function observePeers(previous: ReadonlyMap<string, PeerView>, leases: readonly Lease[], now: number, slots: number): Map<string, PeerView> {
  const next = new Map<string, PeerView>();
  for (const lease of leases) {
    const name = lease.metadata?.name;
    if (typeof name !== 'string') continue;
    const spec = lease.spec ?? {};
    const read = readSlots(lease, slots);
    const record = JSON.stringify([
      spec.holderIdentity ?? '',
      spec.leaseDurationSeconds ?? 0,
      spec.acquireTime ?? '',
      spec.renewTime ?? '',
      lease.metadata?.annotations?.[shardSlotsAnnotation] ?? '',
      lease.metadata?.annotations?.[shardSlotCountAnnotation] ?? '',
    ]);
    const before = previous.get(name);
    next.set(name, {
      identity: spec.holderIdentity ?? '',
      slots: read.slots,
      record,
      observedTime: before !== undefined && before.record === record ? before.observedTime : now,
      duration: (spec.leaseDurationSeconds ?? 0) * 1000,
      ...(read.unreadable !== undefined ? { unreadable: read.unreadable } : {}),
    });
  }
  return next;
}

/** The peers that count as live at `now`: held (non-empty holder) and not expired by client-go's rule. */
export function livePeers(peers: ReadonlyMap<string, PeerView>, now: number): PeerView[] {
  return [...peers.values()].filter((peer) => peer.identity !== '' && peer.observedTime + peer.duration > now);
}

/** What a member decides after a successful write and the list read after it. */
export interface Decision {
  /** The identities that count as live, this member first. */
  readonly members: readonly string[];
  readonly state: SlotState;
}

/**
 * One step of the protocol (see above) for member `self`: `written` is the
 * set of claims the write just before the list carried; `live` the peers
 * live by that list; `stopping` desires nothing (a member shutting down
 * drains every slot and claims none).
 */
export function decide(
  state: SlotState,
  input: {
    self: string;
    written: ReadonlySet<number>;
    live: readonly PeerView[];
    slots: number;
    now: number;
    stopping?: boolean;
    /** `slotsOf(self, members, slots)`, or a memo of it (the shell's: the members rarely change). */
    assign?: (members: readonly string[]) => ReadonlySet<number>;
  },
): Decision {
  const members = [input.self, ...new Set(input.live.map((peer) => peer.identity).filter((id) => id !== input.self))];
  const assign = input.assign ?? ((all: readonly string[]) => slotsOf(input.self, all, input.slots));
  const desired = input.stopping === true ? new Set<number>() : assign(members);
  const taken = new Set<number>();
  for (const peer of input.live) if (peer.identity !== input.self) for (const slot of peer.slots) taken.add(slot);

  const active = new Set<number>();
  const draining = new Map<number, number>();
  const claiming = new Set<number>();
  for (const slot of state.active) {
    if (desired.has(slot)) active.add(slot);
    else draining.set(slot, input.now);
  }
  for (const [slot, since] of state.draining) {
    // Still announced, so nobody else can have it: taking it back is safe.
    if (desired.has(slot)) active.add(slot);
    else draining.set(slot, since);
  }
  for (const slot of state.claiming) {
    if (!desired.has(slot) || taken.has(slot)) continue;
    if (input.written.has(slot)) active.add(slot);
    else claiming.add(slot);
  }
  for (const slot of desired) {
    if (!active.has(slot) && !draining.has(slot) && !claiming.has(slot) && !taken.has(slot)) claiming.add(slot);
  }
  return { members, state: { active, draining, claiming } };
}

/**
 * Lets go of the draining slots with no run in flight. Those whose drain has
 * lasted `gracePeriod` are returned as `overdue`: their runs are to be
 * aborted, and the slot is released once they have ended.
 */
export function releaseDrained(
  state: SlotState,
  busy: (slot: number) => boolean,
  now: number,
  gracePeriod: number,
): { state: SlotState; released: number[]; overdue: number[] } {
  const draining = new Map<number, number>();
  const released: number[] = [];
  const overdue: number[] = [];
  for (const [slot, since] of state.draining) {
    if (!busy(slot)) {
      released.push(slot);
      continue;
    }
    draining.set(slot, since);
    if (now - since >= gracePeriod) overdue.push(slot);
  }
  if (released.length === 0) return { state, released, overdue };
  return { state: { active: state.active, draining, claiming: state.claiming }, released, overdue };
}
