import { isDelta, type DeltaEvent, type KubeObject, type ObjectKey } from '../types.js';
import { NAMESPACE_INDEX, byNamespace, type IndexFunc, type Indexers } from './indexFunctions.js';
import { readable } from '../compact/compactObject.js';

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
 * object before and after; nothing is copied per event.
 */
export class Store<T extends KubeObject = KubeObject> implements Lister<T> {
  private readonly objects = new Map<ObjectKey, T>();
  private readonly indexFuncs: [string, IndexFunc<T>][];
  private readonly indices = new Map<string, Map<string, Set<ObjectKey>>>();
  /** The first index function failure of the delta being applied, thrown once it is applied. */
  private failure: IndexFunctionError | undefined;
  private isSynced = false;
  private lastResourceVersion: string | undefined;

  /** The same store, without the means to change it. */
  readonly lister: Lister<T>;

  constructor(options: StoreOptions<T> = {}) {
    const funcs: Indexers<T> = { [NAMESPACE_INDEX]: byNamespace, ...options.indexers };
    this.indexFuncs = Object.entries(funcs);
    for (const [name] of this.indexFuncs) this.indices.set(name, new Map());
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
    const object = this.objects.get(key);
    return object === undefined ? undefined : readable(object);
  }

  /** Whether an object is stored under `key`. */
  has(key: ObjectKey): boolean {
    return this.objects.has(key);
  }

  /** Every stored object, in no particular order. O(n): a fresh array each call. */
  list(): T[] {
    return Array.from(this.objects.values(), readable);
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
    for (const key of keys) out.push(readable(this.objects.get(key) as T));
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
    const old = this.objects.get(event.key);
    if (event.type === 'Deleted') {
      if (old === undefined) return;
      this.objects.delete(event.key);
      this.unindex(event.key, old);
      return;
    }
    this.objects.set(event.key, event.object);
    if (old === undefined) this.addToIndex(event.key, event.object);
    else this.reindex(event.key, old, event.object);
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

  /** The values of an object under one index; undefined when the index function failed for it. */
  private valuesOf(name: string, func: IndexFunc<T>, key: ObjectKey, object: T): readonly string[] | undefined {
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
    return values as readonly string[];
  }

  private addToIndex(key: ObjectKey, object: T): void {
    for (const [name, func] of this.indexFuncs) {
      this.addTo(this.indices.get(name) as Map<string, Set<ObjectKey>>, key, this.valuesOf(name, func, key, object) ?? []);
    }
  }

  private reindex(key: ObjectKey, old: T, object: T): void {
    for (const [name, func] of this.indexFuncs) {
      const before = this.valuesOf(name, func, key, old);
      const after = this.valuesOf(name, func, key, object) ?? [];
      // Most updates leave index values as they were (a namespace never
      // changes): then there is nothing to move.
      if (before !== undefined && before.length === 1 && after.length === 1 && before[0] === after[0]) continue;
      const index = this.indices.get(name) as Map<string, Set<ObjectKey>>;
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

  private unindex(key: ObjectKey, object: T): void {
    for (const [name, func] of this.indexFuncs) {
      this.removeFrom(this.indices.get(name) as Map<string, Set<ObjectKey>>, key, this.valuesOf(name, func, key, object));
    }
  }
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
