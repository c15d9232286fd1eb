/** A serialization kept for whoever asks while it holds. */
export interface SharedSnapshot {
  /** The JSON bytes: the kept ones while they hold, else freshly built (and kept). */
  get(): Buffer;
  /** The state moved on in a way a later reader must see (a delta was taken): the next `get` builds anew. */
  invalidate(): void;
}

/**
 * One serialization of the live view's snapshot for every reader that asks
 * until it no longer holds: until `invalidate()` (a delta was taken, and a
 * page that got this snapshot would miss what that delta carried) or until
 * it is `maxAge` ms old by `now()` (a reader that polls gets a view at most
 * that old). 32 pages that connect at once cost one multi-MiB
 * serialization, and the Buffer they all hold while their sockets drain is
 * one, not 32.
 */
export function sharedSnapshot(build: () => unknown, now: () => number, maxAge: number): SharedSnapshot {
  let kept: { bytes: Buffer; at: number } | undefined;
  return {
    get() {
      const at = now();
      if (kept === undefined || at - kept.at >= maxAge || at < kept.at) kept = { bytes: Buffer.from(JSON.stringify(build())), at };
      return kept.bytes;
    },
    invalidate() {
      kept = undefined;
    },
  };
}
