/**
 * A bounded pool of canonical values by key, for sharing repeated values
 * across cached objects without a leak: two generations of at most
 * `maxEntries` keys (and `maxKeyChars` characters of keys, or of the sizes
 * given for number keys) each. A value
 * looked up is kept in the young generation; when it is full, the young
 * becomes the old and the old is dropped, with everything in it that was
 * not looked up since. So the pool holds at most twice its bounds however
 * many distinct keys it ever saw, values in use stay shared, and a value no
 * longer seen is let go of within two generations.
 *
 * No reference counts and no weak references: objects that go away need not
 * tell the pool, and a value it lets go of while objects still share it
 * stays alive through them (the next object with that value gets a fresh
 * canonical one).
 */
export class InternPool<V, K extends string | number = string> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private youngChars = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxKeyChars: number,
  ) {
    if (!(maxEntries >= 1) || !(maxKeyChars >= 1)) throw new RangeError(`InternPool: bounds must be at least 1, got ${maxEntries} entries, ${maxKeyChars} chars`);
  }

  /** The value held under `key`, kept for the next generation; undefined when the pool has none. */
  get(key: K, chars = typeof key === 'string' ? key.length : 1): V | undefined {
    const held = this.young.get(key);
    if (held !== undefined) return held;
    const old = this.old.get(key);
    if (old !== undefined) this.add(key, old, chars);
    return old;
  }

  /**
   * Holds `value` under `key`. `chars` is its size toward `maxKeyChars`
   * (by default a string key's length); one over `maxKeyChars` alone is not held.
   */
  add(key: K, value: V, chars = typeof key === 'string' ? key.length : 1): void {
    if (chars > this.maxKeyChars) return;
    if (this.young.size >= this.maxEntries || this.youngChars + chars > this.maxKeyChars) {
      this.old = this.young;
      this.young = new Map();
      this.youngChars = 0;
    }
    this.young.set(key, value);
    this.youngChars += chars;
  }

  /** Keys held, both generations (a key in both counts twice): at most twice `maxEntries`. */
  get size(): number {
    return this.young.size + this.old.size;
  }
}
