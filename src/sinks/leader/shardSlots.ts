/**
 * The hash space of a sharded controller, cut into slots, and which live
 * member each slot belongs to.
 *
 * Keys hash to 64 bits (FNV-1a over `metadata.uid` or `metadata.namespace`,
 * as KEP-5866's `shardRange`). The space is cut into `slots` equal,
 * contiguous pieces (a power of two, 256 by default): slot `i` covers
 * `[i × 2^64 / slots, (i + 1) × 2^64 / slots)`, so a set of slots is a set
 * of ranges a `shardRange` selector can name. Slots, not keys, are what
 * members own and hand over: a handoff concerns a few slots, never a
 * per-key list.
 *
 * Each slot goes to the live member that ranks it highest (rendezvous, or
 * highest-random-weight, hashing): every member computes the same owner
 * from the same member list with no coordination, and a member joining or
 * leaving moves only the slots it gains or held (about `slots / members`),
 * none between the others.
 */

import { fnv1a64, type ShardRange } from '../../util/shardHash.js';

export { fnv1a64 };

/** Slots of the hash space by default: small enough to name in a Lease, fine enough to balance a few dozen replicas. */
export const defaultShardSlots = 256;

const mask64 = (1n << 64n) - 1n;
/**
 * splitmix64's finaliser: FNV-1a of two strings that differ in their last
 * bytes differ mostly in the low bits, which would bias rendezvous weights;
 * this spreads every input bit over the whole word.
 */
function mix64(value: bigint): bigint {
  let z = value & mask64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask64;
  return z ^ (z >> 31n);
}

/** Throws unless `slots` is a power of two from 1 to 65,536 (so each slot is a whole range of the space). */
export function checkSlotCount(slots: number): number {
  if (!Number.isInteger(slots) || slots < 1 || slots > 65_536 || (slots & (slots - 1)) !== 0) {
    throw new TypeError(`sharding: slots must be a power of two from 1 to 65536, got ${String(slots)}`);
  }
  return slots;
}

function slotBits(slots: number): bigint {
  return BigInt(Math.log2(slots));
}

/** The slot a 64-bit hash falls in: its top log2(slots) bits. */
export function slotOfHash(hash: bigint, slots: number): number {
  return Number((hash & mask64) >> (64n - slotBits(slots)));
}

/** A range of the hash space, `[start, end)`; `end` is 2^64 for the last one. */
export type HashRange = ShardRange;

/** The ranges covered by a set of slots, adjacent slots merged, in order. */
export function slotRanges(owned: Iterable<number>, slots: number): HashRange[] {
  const width = 1n << (64n - slotBits(slots));
  const ranges: HashRange[] = [];
  for (const slot of [...new Set(owned)].sort((a, b) => a - b)) {
    const start = BigInt(slot) * width;
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last.end === start) ranges[ranges.length - 1] = { start: last.start, end: start + width };
    else ranges.push({ start, end: start + width });
  }
  return ranges;
}

/** The rendezvous weight of `member` for `slot`. */
function weight(member: string, slot: number): bigint {
  return mix64(fnv1a64(`${member}\u0000${slot}`));
}

/** The member that owns `slot` among `members` (highest weight, ties to the smaller name); undefined when there are none. */
export function slotOwner(slot: number, members: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestWeight = -1n;
  for (const member of members) {
    const w = weight(member, slot);
    if (w > bestWeight || (w === bestWeight && best !== undefined && member < best)) {
      best = member;
      bestWeight = w;
    }
  }
  return best;
}

/** The slots rendezvous hashing gives `member` among `members` (which should include it). */
export function slotsOf(member: string, members: readonly string[], slots: number): Set<number> {
  const mine = new Set<number>();
  for (let slot = 0; slot < slots; slot += 1) if (slotOwner(slot, members) === member) mine.add(slot);
  return mine;
}

/** A set of slots as text for a Lease annotation: ascending, runs collapsed (`0-15,32,40-47`); empty for none. */
export function formatSlots(owned: Iterable<number>): string {
  const sorted = [...new Set(owned)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j += 1;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/**
 * Reads what `formatSlots` wrote. Throws a `TypeError` naming the bad part
 * for text that is not a list of slots below `slots`: a member must never
 * read a claim it cannot understand as no claim.
 */
export function parseSlots(text: string, slots: number): Set<number> {
  const owned = new Set<number>();
  if (text.trim() === '') return owned;
  for (const part of text.split(',')) {
    const match = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(part);
    const from = match === null ? NaN : Number(match[1]);
    const to = match === null ? NaN : match[2] === undefined ? from : Number(match[2]);
    if (!Number.isInteger(from) || !Number.isInteger(to) || from > to || to >= slots) {
      throw new TypeError(`sharding: "${part}" is not a slot or a range of slots below ${slots}`);
    }
    for (let slot = from; slot <= to; slot += 1) owned.add(slot);
  }
  return owned;
}
