import type { KubeObject } from '../types.js';
import { InternPool } from './internPool.js';
import { deepFreeze, isPlainObject } from '../util/json.js';
import { jsonHash } from '../util/jsonHash.js';

/** Metadata strings that many objects of a resource share (a namespace, the pods of one ReplicaSet): the compact codec shares them too. */
export const sharedMetadataStrings = ['namespace', 'generateName', 'creationTimestamp', 'deletionTimestamp'] as const;
type SharedString = (typeof sharedMetadataStrings)[number];
/** Metadata values that many objects share whole: the labels, annotations and owners of one template. */
type SharedRecord = 'labels' | 'annotations' | 'ownerReferences' | 'finalizers' | 'managedFields';

/** Bounds of a generation of each pool (see `InternPool`): one source's interner holds twice them at most. */
export interface InternerBounds {
  strings: { entries: number; chars: number };
  records: { entries: number; chars: number };
}

/** Per source at most 8,192 strings of 512K characters and 4,096 records of 4M characters in all. */
export const defaultInternerBounds: InternerBounds = {
  strings: { entries: 4096, chars: 256 * 1024 },
  records: { entries: 2048, chars: 2 * 1024 * 1024 },
};

/**
 * Shares repeated metadata values between the objects a metadata-only
 * source hands on, so that a cache of 100,000 pods holds one copy of their
 * owner references, labels, annotations, managedFields entries, namespaces
 * and timestamps instead of one each (a metadata-only pod is mostly such values: see docs/benchmarks.md,
 * "Memory of the read path").
 *
 * Strings are replaced by an equal string already held; labels,
 * annotations, ownerReferences, finalizers and each managedFields entry by
 * an equal value already held, deep-frozen, since it is shared. Names,
 * uids and resourceVersions are unique per object and left alone. What readers get is equal to what
 * it was (same keys in the same order, same values), changed in place: it
 * runs where the source still owns the object, after the user's transform.
 *
 * Memory is bounded by the pools' bounds (`InternPool`), not by the values
 * or names ever seen: one interner per source, let go of with it.
 */
export class MetadataInterner {
  readonly strings: InternPool<string>;
  /** Shared records by the hash of their JSON data (`jsonHash`). */
  readonly records: InternPool<unknown, number>;

  constructor(bounds: InternerBounds = defaultInternerBounds) {
    this.strings = new InternPool(bounds.strings.entries, bounds.strings.chars);
    this.records = new InternPool(bounds.records.entries, bounds.records.chars);
  }

  /** `object`, its repeated metadata values replaced by the shared ones. A frozen object is returned as it is. */
  intern<T extends KubeObject>(object: T): T {
    if (Object.isFrozen(object)) return object;
    if (typeof object.kind === 'string') object.kind = this.string(object.kind);
    if (typeof object.apiVersion === 'string') object.apiVersion = this.string(object.apiVersion);
    const meta: unknown = object.metadata;
    if (!isPlainObject(meta) || Object.isFrozen(meta)) return object;
    // Field by field, not in a loop over names: a computed key makes each
    // access a generic lookup, which cost more than the rest of the work.
    const m = meta as Partial<Record<SharedString, unknown> & Record<SharedRecord, unknown>>;
    if (typeof m.namespace === 'string') m.namespace = this.string(m.namespace);
    if (typeof m.generateName === 'string') m.generateName = this.string(m.generateName);
    if (typeof m.creationTimestamp === 'string') m.creationTimestamp = this.string(m.creationTimestamp);
    if (typeof m.deletionTimestamp === 'string') m.deletionTimestamp = this.string(m.deletionTimestamp);
    if (typeof m.labels === 'object' && m.labels !== null) m.labels = this.record(m.labels);
    if (typeof m.annotations === 'object' && m.annotations !== null) m.annotations = this.record(m.annotations);
    if (typeof m.ownerReferences === 'object' && m.ownerReferences !== null) m.ownerReferences = this.record(m.ownerReferences);
    if (typeof m.finalizers === 'object' && m.finalizers !== null) m.finalizers = this.record(m.finalizers);
    // Entry by entry: pods of one template share their controller's entry, and each has its own kubelet one.
    const managed: unknown = m.managedFields;
    if (Array.isArray(managed) && !Object.isFrozen(managed)) {
      for (let i = 0; i < managed.length; i++) {
        const entry: unknown = managed[i];
        if (typeof entry === 'object' && entry !== null) managed[i] = this.record(entry);
      }
    }
    return object;
  }

  private string(value: string): string {
    const held = this.strings.get(value);
    if (held !== undefined) return held;
    this.strings.add(value, value);
    return value;
  }

  /**
   * The held value equal to `value` (the same values, in the same key
   * order as far as a 32-bit hash of them tells); else `value`, frozen, now
   * held in its place, so a collision only costs the sharing of one of two.
   */
  private record(value: object): unknown {
    let key: { hash: number; chars: number };
    try {
      key = jsonHash(value);
    } catch {
      return value; // a transform's cycle: not JSON, not shared
    }
    const held = this.records.get(key.hash, key.chars);
    if (held !== undefined && sameJson(held, value)) return held;
    this.records.add(key.hash, deepFreeze(value), key.chars);
    return value;
  }
}

/**
 * Whether two values are the same JSON data, strictly: a key whose value is
 * undefined, a `toJSON` or a prototype other than Object's never makes two
 * values equal. Key order is not compared here: `record` only compares
 * values whose hashes, which follow key order, are equal.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || Object.getPrototypeOf(a) !== Object.prototype || Object.getPrototypeOf(b) !== Object.prototype) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let count = 0;
  for (const key in ra) {
    const va = ra[key];
    if (va === undefined || !sameJson(va, rb[key])) return false;
    count += 1;
  }
  for (const _key in rb) count -= 1;
  return count === 0;
}
