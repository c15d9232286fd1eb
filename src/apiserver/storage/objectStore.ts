import type { KubeObject } from '../../types.js';
import { HistoryRing } from './historyRing.js';
import { cloneJson, deepFreeze } from '../../util/json.js';
import { StoredJson } from './storedJson.js';
import { expired, tooOldResourceVersion } from '../api/statusError.js';

/**
 * The server's storage, in the role etcd plays for kube-apiserver: one global
 * resourceVersion counter, the current objects per resource, and a bounded
 * window of past changes from which watches resume and paged lists read a
 * consistent snapshot. Objects are frozen when stored and serialized once.
 */

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * One version of an object. The current version and the one it replaced
 * are kept parsed (writes, selectors and watch transitions read them);
 * older versions in the history keep only their JSON, parsed again when a
 * paged list or a replay needs them, so the history costs about one
 * serialized copy per change.
 */
export class StoredObject {
  private parsed: KubeObject | undefined;
  /** The version this one replaced, kept parsed until the next change. */
  before: StoredObject | undefined;
  /** The object's `apiVersion` as stored. */
  readonly apiVersion: string | undefined;

  constructor(
    /** The object as JSON, computed once when stored. */
    readonly json: string,
    /** The resourceVersion it was stored at. */
    readonly rv: number,
    object: KubeObject,
  ) {
    this.parsed = object;
    this.apiVersion = object.apiVersion;
  }

  /** The object, frozen. */
  get object(): KubeObject {
    return this.parsed ?? (deepFreeze(JSON.parse(this.json)) as KubeObject);
  }

  /** Drops the parsed form (the JSON stays). */
  release(): void {
    this.parsed = undefined;
  }
}

/** One committed change of the store, as watches deliver it. */
export interface ChangeEvent {
  /** The resourceVersion the change was committed at. */
  readonly rv: number;
  /** The storage key of the resource (`group/resource`). */
  readonly storageKey: string;
  /** The object's key in its resource (`namespace/name` or `name`). */
  readonly key: string;
  /** The object's namespace; undefined for a cluster-scoped object. */
  readonly namespace: string | undefined;
  /** `ADDED`, `MODIFIED` or `DELETED`. */
  readonly type: WatchEventType;
  /** The new state; for DELETED the last state, carrying the resourceVersion of the deletion. */
  readonly current: StoredObject;
  /** The state before the change; undefined for an ADDED. */
  readonly prev: StoredObject | undefined;
  /** Watch lines built from this event, by event type, so each is serialized once for all watchers. */
  readonly lines: Partial<Record<WatchEventType, string>>;
}

interface Bucket {
  /** The current objects of the resource, by key. */
  readonly objects: Map<string, StoredObject>;
  lastRv: number;
  sorted: string[] | undefined;
}

/** A reference to a stored object from the indexes. */
export interface ObjectLocation {
  /** The storage key of the resource. */
  readonly storageKey: string;
  /** The object's key in it. */
  readonly key: string;
}

/** A consistent view of one resource at one resourceVersion. */
export interface Snapshot {
  /** The resourceVersion the snapshot was taken at. */
  readonly rv: number;
  /** The objects at that version, by key. */
  readonly objects: ReadonlyMap<string, StoredObject>;
  /** Keys in storage order (namespace/name, byte order), as etcd lists them. */
  readonly keys: readonly string[];
}

function ownerUids(object: KubeObject | undefined): string[] {
  const refs = object?.metadata.ownerReferences;
  if (!Array.isArray(refs)) return [];
  const uids: string[] = [];
  for (const ref of refs) if (ref !== null && typeof ref === 'object' && typeof ref.uid === 'string') uids.push(ref.uid);
  return uids;
}

function locationId(storageKey: string, key: string): string {
  return `${storageKey}\u0000${key}`;
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The embedded server's storage: every object of every resource, the global resourceVersion, and the history of changes that watches resume from.
 */
export class ObjectStore {
  private rv = 0;
  private readonly buckets = new Map<string, Bucket>();
  private readonly history: HistoryRing<ChangeEvent>;
  /** Per storage key: changes at or before this resourceVersion have left the history. */
  private readonly expiredUpTo = new Map<string, number>();
  private compactedUpTo = 0;
  private readonly byUid = new Map<string, ObjectLocation>();
  private readonly dependents = new Map<string, Set<string>>();
  private readonly listeners: ((event: ChangeEvent) => void)[] = [];
  /** Freezes and writes stored objects, reusing the work on parts shared with earlier versions. */
  private readonly json = new StoredJson();

  constructor(historyWindow: number) {
    this.history = new HistoryRing(historyWindow);
  }

  /** The current global resourceVersion. */
  get resourceVersion(): number {
    return this.rv;
  }

  /** Called after every change, in commit order; returns the function that stops it. */
  subscribe(listener: (event: ChangeEvent) => void): () => void {
    this.listeners.push(listener);
    return () => {
      const at = this.listeners.indexOf(listener);
      if (at !== -1) this.listeners.splice(at, 1);
    };
  }

  /** The stored version of one object, if any. */
  get(storageKey: string, key: string): StoredObject | undefined {
    return this.buckets.get(storageKey)?.objects.get(key);
  }

  /** How many objects a resource holds. */
  count(storageKey: string): number {
    return this.buckets.get(storageKey)?.objects.size ?? 0;
  }

  /** Current objects of a resource in storage order. */
  current(storageKey: string): Snapshot {
    const bucket = this.buckets.get(storageKey);
    if (bucket === undefined) return { rv: this.rv, objects: new Map(), keys: [] };
    bucket.sorted ??= [...bucket.objects.keys()].sort(compareKeys);
    return { rv: this.rv, objects: bucket.objects, keys: bucket.sorted };
  }

  /** The storage keys of every resource that holds objects. */
  storageKeys(): string[] {
    return [...this.buckets.keys()];
  }

  /** Keys of the objects of a resource in one namespace. */
  keysIn(storageKey: string, namespace: string): string[] {
    const prefix = `${namespace}/`;
    const out: string[] = [];
    for (const key of this.buckets.get(storageKey)?.objects.keys() ?? []) if (key.startsWith(prefix)) out.push(key);
    return out;
  }

  /** Where the object with this uid is stored, if it is. */
  byUidLookup(uid: string): ObjectLocation | undefined {
    return this.byUid.get(uid);
  }

  /** Objects whose ownerReferences name `uid`. */
  dependentsOf(uid: string): ObjectLocation[] {
    const ids = this.dependents.get(uid);
    if (ids === undefined) return [];
    return [...ids].map((id) => {
      const cut = id.indexOf('\u0000');
      return { storageKey: id.slice(0, cut), key: id.slice(cut + 1) };
    });
  }

  /** The lowest resourceVersion from which every later change of `storageKey` is still known. */
  oldestResumable(storageKey: string): number {
    return Math.max(this.compactedUpTo, this.expiredUpTo.get(storageKey) ?? 0);
  }

  /** Throws 410 Expired unless a watch of `storageKey` can resume from `rv`. */
  assertResumable(storageKey: string, rv: number): void {
    const oldest = this.oldestResumable(storageKey);
    if (rv < oldest) throw tooOldResourceVersion(rv, oldest + 1);
  }

  /** Changes of `storageKey` after `rv`, oldest first. Call `assertResumable` first. */
  *changesSince(storageKey: string, rv: number): Generator<ChangeEvent> {
    for (const event of this.history.after(rv)) if (event.storageKey === storageKey) yield event;
  }

  /**
   * The objects of a resource as they were at `rv`: the current state with
   * the later changes undone. A continue token or an Exact list older than
   * the history window gets 410 Expired, as from a compacted etcd.
   */
  at(storageKey: string, rv: number, expiredMessage: string, listContinue?: string): Snapshot {
    if (rv < this.oldestResumable(storageKey)) throw expired(expiredMessage, listContinue);
    const bucket = this.buckets.get(storageKey);
    if (bucket === undefined || bucket.lastRv <= rv) return { ...this.current(storageKey), rv };
    const objects = new Map(bucket.objects);
    for (const event of this.history.newestDownTo(rv)) {
      if (event.storageKey !== storageKey) continue;
      if (event.type === 'ADDED') objects.delete(event.key);
      else if (event.prev !== undefined) objects.set(event.key, event.prev);
    }
    return { rv, objects, keys: [...objects.keys()].sort(compareKeys) };
  }

  /**
   * Stores a new state of one object (or its deletion, `object` undefined),
   * assigning the next resourceVersion. `object` must be a fresh, unshared
   * value: it is stamped and frozen.
   */
  private bucket(storageKey: string): Bucket {
    let bucket = this.buckets.get(storageKey);
    if (bucket === undefined) {
      bucket = { objects: new Map(), lastRv: 0, sorted: undefined };
      this.buckets.set(storageKey, bucket);
    }
    return bucket;
  }

  /** Stores `object` under `key` (deletes it when undefined) at the next resourceVersion, and tells the listeners. */
  commit(storageKey: string, key: string, object: KubeObject | undefined): ChangeEvent {
    const bucket = this.bucket(storageKey);
    const prev = bucket.objects.get(key);
    if (object === undefined && prev === undefined) {
      throw new Error(`cannot delete ${storageKey} ${key}: not stored`);
    }
    this.rv += 1;
    const rv = this.rv;
    const type: WatchEventType = object === undefined ? 'DELETED' : prev === undefined ? 'ADDED' : 'MODIFIED';
    const next = object ?? { ...(prev as StoredObject).object, metadata: { ...(prev as StoredObject).object.metadata } };
    next.metadata.resourceVersion = String(rv);
    const frozen = this.json.freeze(next);
    // The watch line of this change is built once; the object's JSON is a slice of it, sharing its memory.
    const prefix = `{"type":"${type}","object":`;
    const line = this.json.line(prefix, next, '}\n', frozen);
    const stored = new StoredObject(line.slice(prefix.length, line.length - 2), rv, next);
    if (prev !== undefined) {
      prev.before?.release();
      prev.before = undefined;
      stored.before = prev;
    }

    if (type === 'DELETED') {
      bucket.objects.delete(key);
      bucket.sorted = undefined;
    } else {
      if (type === 'ADDED') bucket.sorted = undefined;
      bucket.objects.set(key, stored);
    }
    bucket.lastRv = rv;
    this.reindex(storageKey, key, prev?.object, type === 'DELETED' ? undefined : next);

    const event: ChangeEvent = {
      rv,
      storageKey,
      key,
      namespace: next.metadata.namespace || undefined,
      type,
      current: stored,
      prev,
      lines: { [type]: line },
    };
    const evicted = this.history.push(event);
    if (evicted !== undefined) this.expiredUpTo.set(evicted.storageKey, evicted.rv);
    for (const listener of this.listeners) listener(event);
    return event;
  }

  private reindex(storageKey: string, key: string, before: KubeObject | undefined, after: KubeObject | undefined): void {
    const id = locationId(storageKey, key);
    const oldUid = before?.metadata.uid;
    const newUid = after?.metadata.uid;
    if (oldUid !== undefined && oldUid !== newUid) {
      const at = this.byUid.get(oldUid);
      if (at !== undefined && at.storageKey === storageKey && at.key === key) this.byUid.delete(oldUid);
    }
    if (newUid !== undefined) this.byUid.set(newUid, { storageKey, key });
    const oldOwners = ownerUids(before);
    const newOwners = ownerUids(after);
    for (const uid of oldOwners) {
      if (newOwners.includes(uid)) continue;
      const set = this.dependents.get(uid);
      set?.delete(id);
      if (set?.size === 0) this.dependents.delete(uid);
    }
    for (const uid of newOwners) {
      let set = this.dependents.get(uid);
      if (set === undefined) {
        set = new Set();
        this.dependents.set(uid, set);
      }
      set.add(id);
    }
  }

  /**
   * Sets (or, `object` undefined, removes) an object exactly as given,
   * resourceVersion included, with no change event and no history: the
   * store then holds what a scripted watch in a test says the server holds.
   * The counter moves past a numeric resourceVersion it is given, so later
   * writes never reuse one.
   */
  restore(storageKey: string, key: string, object: KubeObject | undefined): void {
    const bucket = this.bucket(storageKey);
    const prev = bucket.objects.get(key);
    if (object === undefined) {
      if (prev === undefined) return;
      bucket.objects.delete(key);
      bucket.sorted = undefined;
      this.reindex(storageKey, key, prev.object, undefined);
      return;
    }
    const rv = Number(object.metadata.resourceVersion);
    if (Number.isSafeInteger(rv) && rv > this.rv) this.rv = rv;
    const copy = cloneJson(object);
    const stored = new StoredObject(JSON.stringify(copy), Number.isSafeInteger(rv) ? rv : this.rv, deepFreeze(copy));
    if (prev === undefined) bucket.sorted = undefined;
    bucket.objects.set(key, stored);
    this.reindex(storageKey, key, prev?.object, stored.object);
  }

  /** Forgets all history: every older resourceVersion becomes 410 Expired. */
  compact(): void {
    this.compactedUpTo = this.rv;
    this.history.clear();
  }
}
