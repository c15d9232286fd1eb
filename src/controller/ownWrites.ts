import type { SchedulerLike } from 'rxjs';
import type { Lister } from '../store/store.js';
import type { StoreEvent } from '../store/indexer.js';
import { isDelta, type KubeObject, type ObjectKey } from '../types.js';
import { reachedResourceVersion } from '../util/resourceVersion.js';

/** A store of the controller, as far as its own writes go: which objects it caches, and its read view. */
export interface OwnWriteStore {
  /** The API group of its objects (`''` for the core group). */
  readonly group: string;
  /** Their kind (`ConfigMap`). */
  readonly kind: string;
  /** The one namespace it caches, if it caches only one. */
  readonly namespace?: string;
  readonly lister: Lister;
}

/** Deletes remembered per store, for writes whose answer comes after the watch's delete (see `OwnWrites.deleted`). */
const RECENT_DELETES = 1024;

/** One write a run made, as its answer said. */
export interface OwnWrite {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly name: string;
  /** The resourceVersion the write produced; for a delete, the one of the delete, when the server said. */
  readonly resourceVersion: string | undefined;
  readonly uid: string | undefined;
  /** The object is gone (a delete that removed it), rather than at `resourceVersion`. */
  readonly gone: boolean;
}

/**
 * Told when a key's writes are all in the caches (`seen`), or when its
 * wait is over without that (`timeout`, with the objects still unseen).
 */
export type OwnWritesListener = (key: ObjectKey, how: 'seen' | 'timeout', unseen: readonly string[]) => void;

/** What one store must show before a write of one key counts as seen. */
interface Expectation {
  readonly key: ObjectKey;
  readonly store: number;
  readonly object: ObjectKey;
  readonly resourceVersion: string | undefined;
  readonly uid: string | undefined;
  readonly gone: boolean;
  /** The kind written, for the log line (`ConfigMap ns/name`). */
  readonly kind: string;
  done: boolean;
}

/** The writes of one key not seen yet, and when its wait ends. */
interface KeyWrites {
  readonly expectations: Expectation[];
  open: number;
  deadline: number;
}

/**
 * The controller's own writes that its caches have not shown yet
 * (read-your-own-writes). Each write a run makes through `ctx.client` is
 * `record`ed with the resourceVersion its answer carried, once per store
 * that caches that kind of object (a write no store caches is not waited
 * for); `observe` hears every event of every store, after the store
 * applied it. A write counts as seen once its store showed the object at
 * that resourceVersion or after it:
 * - an event of the object at that resourceVersion, or at a later one when
 *   both compare (KEP-5504: kube-apiserver's are decimal integers, and a
 *   watch delivers one object's versions in order);
 * - a `Deleted` of the very object written (same uid): the cache is past
 *   the write; for a delete that removed the object, the object gone from
 *   the store, or there under another uid;
 * - a `Bookmark` or `Synced` at that resourceVersion or after it: the watch
 *   has delivered everything up to there, so an object it did not bring
 *   (one the store's selectors leave out) is rightly not in the cache;
 * - or, at record time, the store already showing it (the watch often
 *   brings the write back before the answer arrives).
 * A key's writes that stay unseen for `timeout` ms after its last write
 * are given up (`timeout`). Memory follows the keys with unseen writes.
 */
export class OwnWrites {
  /** Per store: the unseen writes of each object (an array: rarely more than one). */
  private readonly byObject: Map<ObjectKey, Expectation[]>[];
  /** Per store: the last resourceVersion a Bookmark or Synced reached. */
  private readonly watermark: (string | undefined)[];
  /**
   * Per store: the uids of the objects its last deletes removed, by key (at
   * most `RECENT_DELETES`): the watch may bring the delete of an object
   * before the answer of the write that led to it (removing the last
   * finalizer), and the write is then seen although the store lacks it.
   */
  private readonly deleted: Map<ObjectKey, string>[];
  /** Keys with unseen writes, in the order their waits end (re-inserted at each write). */
  private readonly keys = new Map<ObjectKey, KeyWrites>();
  /** The stores of each kind, by kind then group. */
  private readonly storesByKind = new Map<string, Map<string, readonly number[]>>();
  private readonly anyOneNamespace: boolean;
  private listeners: OwnWritesListener[] = [];

  constructor(
    private readonly stores: readonly OwnWriteStore[],
    private readonly scheduler: SchedulerLike,
    /** How long a key waits for its writes at most, in ms after its last write. */
    readonly timeout: number,
  ) {
    if (typeof timeout !== 'number' || !(timeout > 0) || Number.isNaN(timeout)) {
      throw new RangeError(`readYourWrites.timeout must be a number of ms > 0 (or Infinity), got ${String(timeout)}`);
    }
    this.byObject = stores.map(() => new Map());
    this.watermark = stores.map(() => undefined);
    this.deleted = stores.map(() => new Map());
    this.anyOneNamespace = stores.some((s) => s.namespace !== undefined);
  }

  /** Hears of keys whose writes were seen or given up; returns how to stop. */
  listen(listener: OwnWritesListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** Whether `key` has writes its caches have not shown yet (and its wait is not over). */
  pending(key: ObjectKey): boolean {
    if (this.keys.size === 0) return false;
    this.expire();
    return this.keys.has(key);
  }

  /** When the wait of `key` ends, on the scheduler's clock; undefined when it has nothing unseen. */
  deadline(key: ObjectKey): number | undefined {
    return this.keys.get(key)?.deadline;
  }

  /** Records a write of the run of `key`: the key waits until each store that caches the object shows it. */
  record(key: ObjectKey, write: OwnWrite): void {
    const stores = this.storesOf(write);
    if (stores.length === 0) return;
    const now = this.scheduler.now();
    if (this.keys.size > 0) this.expire(now);
    const object = objectKeyOf(write);
    for (const store of stores) {
      const e: Expectation = { key, store, object, resourceVersion: write.resourceVersion, uid: write.uid, gone: write.gone, kind: write.kind, done: false };
      // Neither a version to wait for nor an object to see go: nothing the cache could show.
      if ((e.resourceVersion === undefined && !e.gone) || this.seenInStore(e)) continue;
      const byObject = this.byObject[store] as Map<ObjectKey, Expectation[]>;
      const unseen = byObject.get(object);
      if (unseen === undefined) byObject.set(object, [e]);
      else unseen.push(e);
      let writes = this.keys.get(key);
      if (writes === undefined) writes = { expectations: [], open: 0, deadline: 0 };
      else this.keys.delete(key); // re-inserted below: the order of the map is the order of the deadlines
      writes.expectations.push(e);
      writes.open += 1;
      writes.deadline = now + this.timeout;
      this.keys.set(key, writes);
    }
  }

  /** An event of store `store`, after the store applied it. */
  observe(store: number, event: StoreEvent): void {
    if (!isDelta(event)) {
      this.watermark[store] = event.resourceVersion;
      if (this.keys.size > 0) this.passedWatermark(store, event.resourceVersion);
      return;
    }
    if (event.type === 'Deleted' && event.finalStateUnknown !== true) this.noteDeleted(store, event.key, event.object.metadata.uid);
    if (this.keys.size === 0) return;
    const unseen = this.byObject[store]?.get(event.key);
    if (unseen === undefined) return;
    if (unseen.length === 1) {
      const e = unseen[0] as Expectation;
      if (seenBy(e, event.type, event.object)) this.settle(e);
      return;
    }
    for (const e of [...unseen]) if (seenBy(e, event.type, event.object)) this.settle(e);
  }

  /** Gives up the wait of `key` now (its deadline has come): its listeners hear `timeout`. */
  giveUp(key: ObjectKey): void {
    const writes = this.keys.get(key);
    if (writes === undefined) return;
    this.keys.delete(key);
    const unseen: string[] = [];
    for (const e of writes.expectations) {
      if (e.done) continue;
      e.done = true;
      this.forget(e);
      unseen.push(`${e.kind} ${e.object}`);
    }
    this.tell(key, 'timeout', unseen);
  }

  private noteDeleted(store: number, key: ObjectKey, uid: string | undefined): void {
    const deleted = this.deleted[store];
    if (deleted === undefined || uid === undefined) return;
    deleted.delete(key);
    deleted.set(key, uid);
    if (deleted.size > RECENT_DELETES) deleted.delete(deleted.keys().next().value as ObjectKey);
  }

  /** Gives up every wait whose deadline has passed. */
  private expire(now = this.scheduler.now()): void {
    for (const [key, writes] of this.keys) {
      if (writes.deadline > now) return;
      this.giveUp(key);
    }
  }

  private settle(e: Expectation): void {
    if (e.done) return;
    e.done = true;
    this.forget(e);
    const writes = this.keys.get(e.key);
    if (writes === undefined) return;
    writes.open -= 1;
    if (writes.open > 0) return;
    this.keys.delete(e.key);
    this.tell(e.key, 'seen', []);
  }

  private forget(e: Expectation): void {
    const byObject = this.byObject[e.store];
    const unseen = byObject?.get(e.object);
    if (unseen === undefined) return;
    if (unseen.length === 1) {
      if (unseen[0] === e) byObject?.delete(e.object);
      return;
    }
    const at = unseen.indexOf(e);
    if (at !== -1) unseen.splice(at, 1);
  }

  private tell(key: ObjectKey, how: 'seen' | 'timeout', unseen: readonly string[]): void {
    for (const listener of this.listeners) listener(key, how, unseen);
  }

  /** Every write of `store` at or before `resourceVersion` is seen: the watch has passed it. */
  private passedWatermark(store: number, resourceVersion: string): void {
    for (const unseen of [...(this.byObject[store]?.values() ?? [])]) {
      for (const e of [...unseen]) {
        if (e.resourceVersion !== undefined && reachedResourceVersion(resourceVersion, e.resourceVersion)) this.settle(e);
      }
    }
  }

  /** Whether the store shows the write already. */
  private seenInStore(e: Expectation): boolean {
    const store = this.stores[e.store];
    if (store === undefined) return true;
    if (e.resourceVersion !== undefined && reachedResourceVersion(this.watermark[e.store], e.resourceVersion)) return true;
    const cached = store.lister.get(e.object);
    // Deleted after the write, the watch's delete come before the write's answer.
    if (cached === undefined && e.uid !== undefined && this.deleted[e.store]?.get(e.object) === e.uid) return true;
    if (e.gone) return cached === undefined || (e.uid !== undefined && cached.metadata.uid !== e.uid);
    if (cached === undefined || e.resourceVersion === undefined) return false;
    return reachedResourceVersion(cached.metadata.resourceVersion, e.resourceVersion);
  }

  /** The stores that cache objects like the one written. */
  private storesOf(write: OwnWrite): readonly number[] {
    const slash = write.apiVersion.indexOf('/');
    const group = slash === -1 ? '' : write.apiVersion.slice(0, slash);
    let byGroup = this.storesByKind.get(write.kind);
    if (byGroup === undefined) this.storesByKind.set(write.kind, (byGroup = new Map()));
    let found = byGroup.get(group);
    if (found === undefined) {
      found = this.stores.flatMap((store, i) => (store.group === group && store.kind === write.kind ? [i] : []));
      byGroup.set(group, found);
    }
    if (!this.anyOneNamespace || found.length === 0) return found;
    return found.filter((i) => {
      const ns = this.stores[i]?.namespace;
      return ns === undefined || ns === write.namespace;
    });
  }
}

/** Whether an event of the object an expectation waits for shows the write. */
function seenBy(e: Expectation, type: string, object: KubeObject): boolean {
  const meta = object.metadata;
  const sameObject = e.uid !== undefined && meta.uid === e.uid;
  if (type === 'Deleted') {
    // The object written was deleted after the write; or, for a delete, it is gone.
    if (sameObject || e.gone) return true;
  } else if (e.gone) {
    // There again under another uid: the store replaced what was deleted.
    return e.uid !== undefined && meta.uid !== undefined && meta.uid !== e.uid;
  }
  return e.resourceVersion !== undefined && reachedResourceVersion(meta.resourceVersion, e.resourceVersion);
}

function objectKeyOf(write: OwnWrite): ObjectKey {
  return write.namespace === undefined || write.namespace === '' ? write.name : `${write.namespace}/${write.name}`;
}
