/** The key this map holds for itself: a symbol, so that no key of a caller's can be it. */
const HELD = Symbol('ChurnMap.held');

/**
 * A Map from string keys for keys that come and go all the time: a
 * workqueue's active keys, each set when triggered and deleted when its
 * run ends. V8 rebuilds a Map's table, allocating a new one, whenever a
 * delete leaves it less than a quarter full; a Map that a busy queue
 * empties after every key would allocate a table per key (about 150 bytes
 * an event, measured). This one holds one entry of its own that no caller
 * can name, so it never empties; sizes and iteration leave that entry out.
 */
export class ChurnMap<V> {
  readonly #map = new Map<string | typeof HELD, V | undefined>([[HELD, undefined]]);

  get size(): number {
    return this.#map.size - 1;
  }

  get(key: string): V | undefined {
    return this.#map.get(key);
  }

  set(key: string, value: V): void {
    this.#map.set(key, value);
  }

  delete(key: string): boolean {
    return this.#map.delete(key);
  }

  /** The values, in insertion order. */
  *values(): IterableIterator<V> {
    for (const [key, value] of this.#map) if (key !== HELD) yield value as V;
  }

  clear(): void {
    this.#map.clear();
    this.#map.set(HELD, undefined);
  }
}
