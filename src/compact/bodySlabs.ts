/**
 * Where the compact cache keeps the bodies (the JSON past `metadata`) of the
 * objects it holds: bytes in slabs outside the JavaScript heap, not strings
 * in it.
 *
 * Why: a cached object lives until its key changes again, which on a busy
 * watch is thousands of events later: longer than V8's young generation
 * keeps anything. A body held as a string was copied twice by the scavenger
 * (within the young generation, then into the old), and at 10,000 pods that
 * copying was a third of the pipeline's time. The garbage collector never
 * moves the bytes of an ArrayBuffer.
 *
 * A slab is written once, never reused: a record's bytes stay valid as long
 * as the record is reachable, whatever becomes of the others. What would
 * waste memory is a slab kept alive by a few records while the rest of it
 * is garbage, so the arena counts, per slab, the bytes of the records still
 * current in the cache. The cache says when a record stops being current
 * (`release`: `deltas()` does, when a key's object is replaced or deleted).
 * When the slabs that hold current records hold more than 1 / `KEEP` times
 * those records' bytes (and more than `SLACK` past them), the current
 * records of the sparsest slab (full slabs are kept in buckets by the share
 * still current) are copied into the slab being filled, and the old slab
 * is left to the records already released, to go when they do. The bound is
 * over all slabs, not each: objects replaced in the order they came (a
 * round of updates over every key) empty the oldest slab while the others
 * stay full, and moving what that slab still holds would only move records
 * about to be replaced.
 *
 * Records never released (a pipeline without `deltas()` that keeps objects
 * its own way) would hold slabs without the arena knowing which parts are
 * garbage: so nothing goes to a slab until something says it keeps count
 * (`active`: `deltas()` says so of each object it starts holding, and a
 * first `release` says so); until then the codec keeps bodies as strings.
 */

/** Bytes in one slab. */
export const SLAB_BYTES = 64 * 1024;
/** A body larger than this (a quarter slab) gets a buffer of its own: nothing to share a slab with, nothing to move. */
export const OWN_BUFFER_BYTES = SLAB_BYTES / 4;
/** The share of the slabs' bytes that current records must fill (past `SLACK`): below it, the sparsest slab is emptied. */
export const KEEP = 0.75;
/** Bytes the slabs may hold past their current records' whatever `KEEP` says: a small source moves nothing. */
export const SLACK = 16 * SLAB_BYTES;

/** What the arena keeps a body for: the compact record, whose body fields it sets. */
export interface SlabBody {
  /** The buffer the body's bytes are in (a slab or a buffer of its own); a record may hold its body otherwise (a string) until placed. */
  body: Buffer | string | undefined;
  /** Where in `body` the body starts, and its length in bytes. */
  at: number;
  length: number;
  /** The slab that counts this body as current, or undefined (released, or not in a slab). */
  slab: Slab | undefined;
  /** Its place in `slab.holders`. */
  slot: number;
}

/** One slab: its bytes, how many are taken, how many belong to current records, and those records. */
export class Slab {
  readonly bytes: Buffer;
  /** Bytes written, and the end it was left with when the next body did not fit (so all of a full slab). */
  used = 0;
  live = 0;
  /** The current records whose bodies are here, by slot (undefined once released or moved). */
  readonly holders: (SlabBody | undefined)[] = [];
  /** Which of `BodySlabs`'s buckets (by the share of it that is current) it is in, and where; -1 while it is being filled or once it holds no current record. */
  bucket = -1;
  index = -1;

  constructor(size: number) {
    this.bytes = Buffer.allocUnsafeSlow(size);
  }
}

/** Full slabs are sorted into this many buckets by the share of their bytes that current records hold. */
const BUCKETS = 8;

/** The slabs of one source's compact records. */
export class BodySlabs {
  private current: Slab | undefined;
  /**
   * The full slabs that hold current records, bucket `b` those of which a
   * share in [b / BUCKETS, (b + 1) / BUCKETS) is current (the last, all of
   * it too): a sparse one is found without a search.
   */
  private readonly buckets: Slab[][] = Array.from({ length: BUCKETS }, () => []);
  private full = 0;
  /** Bytes taken in the slabs that hold current records and the one being filled, and the bytes of current records in them. */
  private used = 0;
  private live = 0;
  /**
   * Set once something keeps count of which records are current (the first
   * `release`, or a cache's word that it will release, as `deltas()` gives
   * for each object it starts holding): bodies go to slabs from then on.
   */
  active = false;
  /** Slabs made, and bodies moved out of sparse ones (for tests and benchmarks). */
  slabsMade = 0;
  moved = 0;

  constructor(
    /** Bytes in one slab; a body over a quarter of it gets a buffer of its own. */
    private readonly slabBytes = SLAB_BYTES,
    /** Bytes the slabs may hold past their current bodies' before any is moved. */
    private readonly slack = SLACK,
  ) {}

  /** Bytes of the slabs that hold current records, the one being filled included. */
  get heldBytes(): number {
    return (this.full + (this.current === undefined ? 0 : 1)) * this.slabBytes;
  }

  /** Bytes of the current records' bodies in slabs. */
  get liveBytes(): number {
    return this.live;
  }

  /**
   * Room for a body of `length` bytes, given to `holder` (its `body`, `at`,
   * `length`, `slab` and `slot`): the caller writes the bytes there.
   */
  place(holder: SlabBody, length: number): void {
    if (length > this.slabBytes / 4) {
      holder.body = Buffer.allocUnsafeSlow(length);
      holder.at = 0;
      holder.length = length;
      holder.slab = undefined;
      return;
    }
    let slab = this.current;
    if (slab === undefined || slab.used + length > slab.bytes.length) slab = this.nextSlab();
    holder.body = slab.bytes;
    holder.at = slab.used;
    holder.length = length;
    holder.slab = slab;
    holder.slot = slab.holders.length;
    slab.holders.push(holder);
    slab.used += length;
    slab.live += length;
    this.used += length;
    this.live += length;
  }

  /**
   * `holder` is no longer current in the cache (replaced, deleted): its
   * bytes stay where they are, valid for as long as it is reachable, but no
   * longer count towards keeping its slab.
   */
  release(holder: SlabBody): void {
    this.active = true;
    const slab = holder.slab;
    if (slab === undefined) return;
    holder.slab = undefined;
    slab.holders[holder.slot] = undefined;
    slab.live -= holder.length;
    this.live -= holder.length;
    if (slab !== this.current) {
      if (slab.live === 0) this.forget(slab);
      else if (bucketOf(slab) !== slab.bucket) this.sort(slab);
    }
    if (this.used - this.live > Math.max(this.slack, this.live * (1 / KEEP - 1))) this.evacuate();
  }

  private nextSlab(): Slab {
    const full = this.current;
    const slab = new Slab(this.slabBytes);
    this.slabsMade++;
    this.current = slab;
    if (full !== undefined) {
      // The end left unwritten is as lost as a released record's bytes.
      this.used += full.bytes.length - full.used;
      full.used = full.bytes.length;
      if (full.live === 0) this.forget(full);
      else this.sort(full);
    }
    return slab;
  }

  /** Puts a full slab in the bucket its current share says, taking it out of the one it was in. */
  private sort(slab: Slab): void {
    this.unsort(slab);
    slab.bucket = bucketOf(slab);
    const bucket = this.buckets[slab.bucket] as Slab[];
    slab.index = bucket.length;
    bucket.push(slab);
    this.full++;
  }

  private unsort(slab: Slab): void {
    if (slab.bucket === -1) return;
    const bucket = this.buckets[slab.bucket] as Slab[];
    const last = bucket.pop() as Slab;
    if (last !== slab) {
      bucket[slab.index] = last;
      last.index = slab.index;
    }
    slab.bucket = -1;
    slab.index = -1;
    this.full--;
  }

  /** `slab`, full, no longer counts: it holds no current record, or they are being moved out of it. */
  private forget(slab: Slab): void {
    this.unsort(slab);
    this.used -= slab.used;
    this.live -= slab.live;
    slab.live = 0;
    slab.holders.length = 0;
  }

  /** Moves the bodies of the current records of a slab of the sparsest bucket to the one being filled. */
  private evacuate(): void {
    const bucket = this.buckets.find((b) => b.length > 0);
    const sparsest = bucket?.[bucket.length - 1];
    if (sparsest === undefined) return;
    const holders = sparsest.holders.slice();
    this.forget(sparsest);
    for (let i = 0; i < holders.length; i++) {
      const holder = holders[i];
      if (holder === undefined) continue;
      const from = holder.at;
      const length = holder.length;
      this.place(holder, length);
      sparsest.bytes.copy(holder.body as Buffer, holder.at, from, from + length);
      this.moved++;
    }
  }
}

/** The bucket of a full slab: the share of its bytes that current records hold, in eighths (all of them in the last). */
function bucketOf(slab: Slab): number {
  return Math.min(BUCKETS - 1, Math.floor((slab.live * BUCKETS) / slab.used));
}
