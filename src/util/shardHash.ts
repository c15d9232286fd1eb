/**
 * The hash space that sharding splits (KEP-5866, `ShardedListAndWatch`): the 64-bit FNV-1a hash of
 * a field's UTF-8 bytes, a number in `[0, 2^64)`. A shard owns half-open ranges `[start, end)` of
 * that space; the top of the space is written as `2^64` (`0x10000000000000000`), so one range can
 * reach the last hash value and `[0, 2^64)` is the whole space.
 *
 * The API server, a client filtering on its own side and the membership that hands out ranges all
 * hash with this one function, so that they agree on which object belongs to which shard.
 */

/** The number of hash values, `2^64`: the exclusive end of the last range. */
export const HASH_SPACE_END = 1n << 64n;

/** A half-open range `[start, end)` of the hash space, `0 <= start < end <= 2^64`. */
export interface ShardRange {
  /** Inclusive lower bound. */
  readonly start: bigint;
  /** Exclusive upper bound; `2^64` for a range that reaches the top of the space. */
  readonly end: bigint;
}

/** The range of every hash value: what an unsharded reader owns. */
export const FULL_RANGE: ShardRange = Object.freeze({ start: 0n, end: HASH_SPACE_END });

const OFFSET_BASIS = [0x2325, 0x8422, 0x9ce4, 0xcbf2] as const; // 0xcbf29ce484222325, low limb first
const PRIME_LOW = 0x1b3; // the FNV 64-bit prime is 2^40 + 0x1b3

/**
 * FNV-1a 64 of the UTF-8 bytes of `text`, as an unsigned bigint. A lone surrogate (which a JSON
 * `\ud800` escape can produce) counts as U+FFFD, as it does when Go or `TextEncoder` encode it.
 *
 * Computed on four 16-bit limbs in plain numbers rather than in bigint: it runs for every object
 * of every sharded list and watch event, and bigint multiplication per byte is several times slower.
 */
export function fnv1a64(text: string): bigint {
  let h0: number = OFFSET_BASIS[0];
  let h1: number = OFFSET_BASIS[1];
  let h2: number = OFFSET_BASIS[2];
  let h3: number = OFFSET_BASIS[3];
  const step = (byte: number): void => {
    h0 ^= byte;
    // h × (2^40 + 0x1b3) mod 2^64: the low product limb by limb with carries, plus h shifted left 40.
    const t0 = h0 * PRIME_LOW;
    const t1 = h1 * PRIME_LOW + (t0 >>> 16);
    const t2 = h2 * PRIME_LOW + (t1 >>> 16) + ((h0 << 8) & 0xffff);
    const t3 = h3 * PRIME_LOW + (t2 >>> 16) + (((h1 << 8) | (h0 >>> 8)) & 0xffff);
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
    h3 = t3 & 0xffff;
  };
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      step(c);
      continue;
    }
    if (c < 0x800) {
      step(0xc0 | (c >> 6));
      step(0x80 | (c & 0x3f));
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
        step(0xf0 | (cp >> 18));
        step(0x80 | ((cp >> 12) & 0x3f));
        step(0x80 | ((cp >> 6) & 0x3f));
        step(0x80 | (cp & 0x3f));
        continue;
      }
      c = 0xfffd;
    }
    step(0xe0 | (c >> 12));
    step(0x80 | ((c >> 6) & 0x3f));
    step(0x80 | (c & 0x3f));
  }
  return (BigInt(h3) << 48n) | (BigInt(h2) << 32n) | (BigInt(h1) << 16n) | BigInt(h0);
}

/** Whether `hash` lies in `[range.start, range.end)`. */
export function inRange(range: ShardRange, hash: bigint): boolean {
  return hash >= range.start && hash < range.end;
}

/** Whether `hash` lies in any of `ranges` (none: it lies in none). */
export function inAnyRange(ranges: readonly ShardRange[], hash: bigint): boolean {
  for (const range of ranges) if (inRange(range, hash)) return true;
  return false;
}

/**
 * A bound as the `shardSelector` grammar writes it: `0x` and 16 lowercase hex digits, or
 * `0x10000000000000000` for the top of the space (the padded form of kube's own examples).
 */
export function formatShardBound(bound: bigint): string {
  if (bound < 0n || bound > HASH_SPACE_END) throw new RangeError(`shard bound ${bound} is outside [0, 2^64]`);
  return `0x${bound.toString(16).padStart(16, '0')}`;
}

/**
 * `n` contiguous ranges of (nearly) equal size that cover the whole space in order, the last one
 * reaching `2^64`: the static split of `n` replicas, and a fixture for tests.
 */
export function evenRanges(n: number): ShardRange[] {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`evenRanges needs a positive whole number of shards, got ${n}`);
  const span = HASH_SPACE_END / BigInt(n);
  return Array.from({ length: n }, (_, i) => ({
    start: span * BigInt(i),
    end: i === n - 1 ? HASH_SPACE_END : span * BigInt(i + 1),
  }));
}
