/**
 * A bounded, ordered window of the latest items: pushing past capacity
 * evicts the oldest. Items are ordered by a strictly increasing number
 * (the resourceVersion), so "everything after N" is a binary search.
 */
export class HistoryRing<T extends { readonly rv: number }> {
  private readonly items: (T | undefined)[];
  private start = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`history capacity must be a positive integer, got ${capacity}`);
    }
    this.items = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.size;
  }

  /** Adds an item; returns the item evicted to make room, if any. */
  push(item: T): T | undefined {
    if (this.size < this.capacity) {
      this.items[(this.start + this.size) % this.capacity] = item;
      this.size += 1;
      return undefined;
    }
    const evicted = this.items[this.start];
    this.items[this.start] = item;
    this.start = (this.start + 1) % this.capacity;
    return evicted;
  }

  clear(): void {
    this.items.fill(undefined);
    this.start = 0;
    this.size = 0;
  }

  private at(index: number): T {
    return this.items[(this.start + index) % this.capacity] as T;
  }

  /** Index of the first item with rv > `rv`. */
  private firstAfter(rv: number): number {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Items with rv > `rv`, oldest first. */
  *after(rv: number): Generator<T> {
    for (let i = this.firstAfter(rv); i < this.size; i++) yield this.at(i);
  }

  /** Items with rv > `rv`, newest first. */
  *newestDownTo(rv: number): Generator<T> {
    const stop = this.firstAfter(rv);
    for (let i = this.size - 1; i >= stop; i--) yield this.at(i);
  }
}
