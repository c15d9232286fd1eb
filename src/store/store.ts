import { isDelta, type DeltaEvent, type KubeObject, type ObjectKey } from '../types.js';
import { NAMESPACE_INDEX, byNamespace, type IndexFunc, type Indexers } from './indexFunctions.js';
import { readable } from '../util/compactObject.js';

/**
 * A read-only view of a store: what reconciles and request handlers read.
 *
 * It is a cache: it may lag the server, and what it returns is shared with
 * the store, so treat objects as read-only (copy one before changing it).
 */
export interface Lister<T extends KubeObject = KubeObject> {
  /** The object under a key (`"namespace/name"` or `"name"`), if stored. */
  get(key: ObjectKey): T | undefined;
  /** Whether an object is stored under `key`. */
  has(key: ObjectKey): boolean;
  /** Every stored object, in no particular order. O(n): a fresh array each call. */
  list(): T[];
  /** Every stored key, in no particular order. O(n): a fresh array each call. */
  keys(): ObjectKey[];
  /** How many objects are stored. */
  readonly size: number;
  /** Objects indexed under `value` by the index `indexName`. */
  byIndex(indexName: string, value: string): T[];
  /** Keys of the objects indexed under `value` by the index `indexName`. */
  indexKeys(indexName: string, value: string): ObjectKey[];
  /** The values the index `indexName` currently holds objects under. */
  listIndexValues(indexName: string): string[];
  /** True from the end of the first complete list on. */
  readonly synced: boolean;
  /** The last resourceVersion the store has seen (list, object or bookmark). */
  readonly resourceVersion: string | undefined;
}

/** An index name that the store was not built with. */
export class UnknownIndexError extends Error {
  override readonly name = 'UnknownIndexError';
}

/** An index function that threw, or returned something that is not an array, for an object. */
export class IndexFunctionError extends Error {
  override readonly name = 'IndexFunctionError';
  constructor(
    readonly index: string,
    readonly key: ObjectKey,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Options of a `Store`. */
export interface StoreOptions<T extends KubeObject> {
  /** Extra indexes; the namespace index is always kept. */
  indexers?: Indexers<T>;
}

/**
 * The indexer's state: objects by key, and for each index the keys under
 * each value. Applying a delta costs O(1) plus the index functions of the
 * new object: each object keeps the values it is indexed under, so the one
 * it replaces is not read again (in a large cache it was last read long
 * ago, and its memory is cold).
 */
export class Store<T extends KubeObject = KubeObject> implements Lister<T> {
  private readonly objects = new Map<ObjectKey, StoreEntry<T>>();
  /** The indexes by name, and their names, functions and maps in one order (that of `StoreEntry.values`). */
  private readonly indices = new Map<string, Map<string, Set<ObjectKey>>>();
  private readonly indexNames: string[];
  private readonly indexFuncs: IndexFunc<T>[];
  private readonly indexMaps: Map<string, Set<ObjectKey>>[];
  /** The first index function failure of the delta being applied, thrown once it is applied. */
  private failure: IndexFunctionError | undefined;
  private isSynced = false;
  private lastResourceVersion: string | undefined;

  /** The same store, without the means to change it. */
  readonly lister: Lister<T>;

  constructor(options: StoreOptions<T> = {}) {
    const funcs: Indexers<T> = { [NAMESPACE_INDEX]: byNamespace, ...options.indexers };
    this.indexNames = Object.keys(funcs);
    this.indexFuncs = Object.values(funcs);
    this.indexMaps = this.indexNames.map((name) => {
      const index = new Map<string, Set<ObjectKey>>();
      this.indices.set(name, index);
      return index;
    });
    this.lister = readOnlyView(this);
  }

  /** How many objects are stored. */
  get size(): number {
    return this.objects.size;
  }

  /** True from the end of the first complete list on. */
  get synced(): boolean {
    return this.isSynced;
  }

  /** The last resourceVersion the store has seen (list, object or bookmark). */
  get resourceVersion(): string | undefined {
    return this.lastResourceVersion;
  }

  /** The object under a key (`"namespace/name"` or `"name"`), if stored. */
  get(key: ObjectKey): T | undefined {
    const entry = this.objects.get(key);
    return entry === undefined ? undefined : readable(entry.object);
  }

  /** Whether an object is stored under `key`. */
  has(key: ObjectKey): boolean {
    return this.objects.has(key);
  }

  /** Every stored object, in no particular order. O(n): a fresh array each call. */
  list(): T[] {
    return Array.from(this.objects.values(), (entry) => readable(entry.object));
  }

  /** Every stored key, in no particular order. O(n): a fresh array each call. */
  keys(): ObjectKey[] {
    return Array.from(this.objects.keys());
  }

  /** Objects indexed under `value` by the index `indexName`; an `UnknownIndexError` for an index the store lacks. */
  byIndex(indexName: string, value: string): T[] {
    const keys = this.index(indexName).get(value);
    if (keys === undefined) return [];
    const out: T[] = [];
    for (const key of keys) out.push(readable((this.objects.get(key) as StoreEntry<T>).object));
    return out;
  }

  /** Keys of the objects indexed under `value` by the index `indexName`. */
  indexKeys(indexName: string, value: string): ObjectKey[] {
    const keys = this.index(indexName).get(value);
    return keys === undefined ? [] : Array.from(keys);
  }

  /** The values the index `indexName` currently holds objects under. */
  listIndexValues(indexName: string): string[] {
    return Array.from(this.index(indexName).keys());
  }

  /**
   * Applies one delta or marker.
   *
   * Edge case: an index function that throws, or returns no array, is a bug
   * in the caller's function; as client-go's indexer panics there, `apply`
   * throws an `IndexFunctionError` naming the index and the key, with the
   * function's error as `cause`. It throws only after the delta is applied
   * whole and the store is consistent: the object is left out of that index
   * (no entry of it stays under a value it had), every other index is kept.
   */
  apply(event: DeltaEvent<T>): void {
    this.applyDelta(event);
    const failure = this.failure;
    if (failure !== undefined) {
      this.failure = undefined;
      throw failure;
    }
  }

  private applyDelta(event: DeltaEvent<T>): void {
    if (!isDelta(event)) {
      if (event.type === 'Synced') this.isSynced = true;
      this.noteResourceVersion(event.resourceVersion);
      return;
    }
    const entry = this.objects.get(event.key);
    if (event.type === 'Deleted') {
      if (entry === undefined) return;
      this.objects.delete(event.key);
      this.unindex(event.key, entry);
      return;
    }
    if (entry === undefined) this.objects.set(event.key, { object: event.object, values: this.addToIndex(event.key, event.object) });
    else this.reindex(event.key, entry, event.object);
    this.noteResourceVersion(event.object.metadata.resourceVersion);
  }

  /** Only a non-empty string is a resourceVersion: a mistyped one from a broken source is not kept. */
  private noteResourceVersion(rv: unknown): void {
    if (typeof rv === 'string' && rv !== '') this.lastResourceVersion = rv;
  }

  private index(name: string): Map<string, Set<ObjectKey>> {
    const index = this.indices.get(name);
    if (index === undefined) {
      throw new UnknownIndexError(
        `no index named "${name}" (this store has: ${Array.from(this.indices.keys()).join(', ')})`,
      );
    }
    return index;
  }

  /**
   * The values of an object under index `i`; undefined when the index
   * function failed for it. Kept with the object, to take it out from under
   * them later without calling the function on the old object again (and
   * getting another answer from a function that is not pure): so a copy,
   * unless it is the namespace index's own fresh array.
   */
  private valuesOf(i: number, key: ObjectKey, object: T): readonly string[] | undefined {
    const name = this.indexNames[i] as string;
    const func = this.indexFuncs[i] as IndexFunc<T>;
    let values: unknown;
    try {
      values = func(object);
    } catch (err) {
      this.failure ??= new IndexFunctionError(name, key, `the index function "${name}" threw for "${key}": ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      return undefined;
    }
    if (!Array.isArray(values)) {
      this.failure ??= new IndexFunctionError(name, key, `the index function "${name}" returned ${values === null ? 'null' : typeof values} for "${key}"; expected an array of strings`);
      return undefined;
    }
    return func === byNamespace ? (values as readonly string[]) : (values.slice() as readonly string[]);
  }

  /** Indexes a new object; returns the values it is under, for its entry. */
  private addToIndex(key: ObjectKey, object: T): (readonly string[] | undefined)[] {
    const all: (readonly string[] | undefined)[] = [];
    for (let i = 0; i < this.indexFuncs.length; i++) {
      const values = this.valuesOf(i, key, object);
      all.push(values);
      this.addTo(this.indexMaps[i] as Map<string, Set<ObjectKey>>, key, values ?? []);
    }
    return all;
  }

  /** The entry's object is replaced by `object`: it moves to the values it is under now. */
  private reindex(key: ObjectKey, entry: StoreEntry<T>, object: T): void {
    entry.object = object;
    for (let i = 0; i < this.indexFuncs.length; i++) {
      const before = entry.values[i];
      const now = this.valuesOf(i, key, object);
      entry.values[i] = now;
      const after = now ?? [];
      // Most updates leave index values as they were (a namespace never
      // changes): then there is nothing to move.
      if (before !== undefined && before.length === 1 && after.length === 1 && before[0] === after[0]) continue;
      const index = this.indexMaps[i] as Map<string, Set<ObjectKey>>;
      this.removeFrom(index, key, before);
      this.addTo(index, key, after);
    }
  }

  private addTo(index: Map<string, Set<ObjectKey>>, key: ObjectKey, values: readonly string[]): void {
    for (const value of values) {
      let keys = index.get(value);
      if (keys === undefined) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  /**
   * Takes `key` out from under `values`. Without them (the index function
   * failed for the object as stored, though it may have worked when the
   * object was added), every bucket is searched: O(index size), but only
   * on that error path, and no entry is left pointing at a gone object.
   */
  private removeFrom(index: Map<string, Set<ObjectKey>>, key: ObjectKey, values: readonly string[] | undefined): void {
    if (values === undefined) {
      for (const [value, keys] of index) if (keys.delete(key) && keys.size === 0) index.delete(value);
      return;
    }
    for (const value of values) {
      const keys = index.get(value);
      if (keys === undefined) continue;
      keys.delete(key);
      // Empty buckets go, so index memory follows live values, not values ever seen.
      if (keys.size === 0) index.delete(value);
    }
  }

  private unindex(key: ObjectKey, entry: StoreEntry<T>): void {
    for (let i = 0; i < this.indexMaps.length; i++) this.removeFrom(this.indexMaps[i] as Map<string, Set<ObjectKey>>, key, entry.values[i]);
  }
}

/** A stored object, with the values each index holds it under (in the store's index order; undefined where the function failed for it). */
interface StoreEntry<T> {
  object: T;
  values: (readonly string[] | undefined)[];
}

function readOnlyView<T extends KubeObject>(store: Store<T>): Lister<T> {
  return listerView(() => store);
}

/**
 * A read-only `Lister` that reads whatever store `current()` returns at the
 * moment of each call: for a handle that must outlive the store behind it
 * (an informer restarted with a fresh store, say).
 */
export function listerView<T extends KubeObject>(current: () => Lister<T>): Lister<T> {
  return Object.freeze({
    get: (key: ObjectKey) => current().get(key),
    has: (key: ObjectKey) => current().has(key),
    list: () => current().list(),
    keys: () => current().keys(),
    get size() {
      return current().size;
    },
    byIndex: (indexName: string, value: string) => current().byIndex(indexName, value),
    indexKeys: (indexName: string, value: string) => current().indexKeys(indexName, value),
    listIndexValues: (indexName: string) => current().listIndexValues(indexName),
    get synced() {
      return current().synced;
    },
    get resourceVersion() {
      return current().resourceVersion;
    },
  });
}
