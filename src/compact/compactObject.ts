import type { KubeObject } from '../types.js';
import { deepFreeze, setMember } from '../util/json.js';
import type { BodySlabs, Slab, SlabBody } from './bodySlabs.js';

/**
 * An object as the compact cache keeps it (`listWatch`'s default, `compact`):
 * `apiVersion`, `kind` and `metadata` decoded, everything else as the JSON
 * text it came in, decoded when it is read. What flows through `deltas()`
 * and the store is a read-only view of it (`compactView`): reading
 * `metadata` costs nothing more than on a parsed object, reading any other
 * field decodes the body once (a small cache of decoded objects, shared by
 * the records of one source, makes a second read of the same object free).
 * The store hands readers the decoded object (`readable`): an ordinary
 * frozen object, equal to what the server sent.
 */
export class CompactRecord implements SlabBody {
  /** Where the body starts in `body` and its length in bytes, when `body` is a Buffer (a slab: `BodySlabs`). */
  at = 0;
  length = 0;
  /** The slab that counts this record's body as current (see `BodySlabs.release`). */
  slab: Slab | undefined = undefined;
  slot = 0;
  /**
   * The other members' JSON, without the braces around them (adding them
   * would make a second copy per object, held as long as the object: the
   * text is only ever parsed, and rarely), or undefined when there are
   * none. Either UTF-8 bytes at `at` in a slab (`BodySlabs`: outside the
   * JavaScript heap, where the garbage collector never copies them), or a
   * string of one char per byte of the UTF-8 it came as (latin1): for
   * ASCII, nearly every object, that is the JSON text itself; anything
   * else is decoded as UTF-8 when it is read. Made so, a string costs a
   * copy of its bytes, not a UTF-8 decoding on every event. Set by the
   * codec once the record is made, as one or the other.
   */
  body: string | Buffer | undefined = undefined;

  constructor(
    /** Undefined when the object has none (a list item the list's kind has not been stamped on yet). */
    public apiVersion: unknown,
    public kind: unknown,
    public metadata: unknown,
    /** The body's keys in order (shared by the records that have the same ones), or undefined until it is decoded: the body was kept unread. */
    private bodyKeys: readonly string[] | undefined,
    private readonly shared: RecordsShared,
  ) {}

  /** The cache no longer holds this record as its key's current object (replaced, deleted): see `BodySlabs.release`. */
  release(): void {
    this.shared.slabs.release(this);
  }

  /** A cache holds this record as its key's current object, and will say when it stops (`release`): see `BodySlabs.active`. */
  track(): void {
    this.shared.slabs.active = true;
  }

  /** The whole object, decoded and frozen; cached, so a reconcile that reads it twice pays once. */
  decoded(): KubeObject {
    const cache = this.shared.cache;
    const hit = cache.get(this);
    if (hit !== undefined) return hit;
    const out: Record<string, unknown> = {};
    if (this.apiVersion !== undefined) out.apiVersion = this.apiVersion;
    if (this.kind !== undefined) out.kind = this.kind;
    // Frozen already (the source seals it once its transform ran).
    if (this.metadata !== undefined) out.metadata = this.metadata;
    if (this.body !== undefined) {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(`{${this.bodyText(this.body)}}`) as Record<string, unknown>;
      } catch (err) {
        const { namespace, name } = (this.metadata ?? {}) as { namespace?: unknown; name?: unknown };
        throw new SyntaxError(`the cached object ${String(namespace ?? '')}/${String(name)} cannot be decoded: the server sent a body that is not JSON (${(err as Error).message})`);
      }
      this.bodyKeys ??= Object.keys(body);
      for (const key of this.bodyKeys) setMember(out, key, deepFreeze(body[key]));
    }
    const object = Object.freeze(out) as unknown as KubeObject;
    cache.set(this, object);
    return object;
  }

  private bodyText(body: string | Buffer): string {
    return typeof body === 'string' ? utf8Text(body) : body.toString('utf8', this.at, this.at + this.length);
  }

  /** Whether `key` is one of the object's own members. */
  owns(key: string): boolean {
    if (key === 'apiVersion') return this.apiVersion !== undefined;
    if (key === 'kind') return this.kind !== undefined;
    if (key === 'metadata') return this.metadata !== undefined;
    return this.body !== undefined && this.keysOfBody().includes(key);
  }

  private keysOfBody(): readonly string[] {
    if (this.bodyKeys === undefined) this.decoded();
    return this.bodyKeys ?? [];
  }

  /** The object's own keys, in the order `decoded()` has them. */
  keys(): string[] {
    const keys: string[] = [];
    if (this.apiVersion !== undefined) keys.push('apiVersion');
    if (this.kind !== undefined) keys.push('kind');
    if (this.metadata !== undefined) keys.push('metadata');
    if (this.body !== undefined) for (const key of this.keysOfBody()) keys.push(key);
    return keys;
  }

  /**
   * How Node's `util.inspect` (`console.log`, a failing `assert`'s message)
   * shows a view: as the object it stands for. Node looks this up on the
   * record behind a proxy, not through the proxy, and would otherwise
   * show the record's own fields: the body as text, the shared cache.
   */
  [Symbol.for('nodejs.util.inspect.custom')](depth: number | null, options: object, inspect: (value: unknown, options: object) => string): string {
    // Called on the view (the proxy), whose own fields are the object's.
    const record = compactRecordOf(this) ?? this;
    let object: unknown;
    try {
      object = record.decoded();
    } catch (err) {
      return `[compact object, not decodable: ${(err as Error).message}]`;
    }
    return inspect(object, { ...options, depth });
  }

  /** One member's value; the body is decoded for any but the three kept decoded. */
  member(key: string): unknown {
    if (key === 'metadata') return this.metadata;
    if (key === 'apiVersion') return this.apiVersion;
    if (key === 'kind') return this.kind;
    if (!this.owns(key)) return undefined;
    return (this.decoded() as unknown as Record<string, unknown>)[key];
  }
}

/**
 * The most recently decoded objects of one source, by record: a reconcile
 * reads its object a few times (the lister, then a predicate or a status
 * update), and each read after the first is free. Least recently used goes.
 */
export class DecodedCache {
  private readonly entries = new Map<CompactRecord, KubeObject>();

  constructor(private readonly capacity = 256) {}

  get(record: CompactRecord): KubeObject | undefined {
    const hit = this.entries.get(record);
    if (hit !== undefined && this.entries.size > 1) {
      this.entries.delete(record);
      this.entries.set(record, hit);
    }
    return hit;
  }

  set(record: CompactRecord, object: KubeObject): void {
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value as CompactRecord);
    this.entries.set(record, object);
  }
}

/** What the records of one source share: the cache of decoded objects, and the slabs their bodies are kept in. */
export interface RecordsShared {
  readonly cache: DecodedCache;
  readonly slabs: BodySlabs;
}

const RECORD = Symbol('rxkube.compactRecord');

const NOT_ASCII = /[^\x00-\x7f]/;

/** The text whose UTF-8 bytes `latin1` holds one char per byte (see `CompactRecord.body`). */
function utf8Text(latin1: string): string {
  return NOT_ASCII.test(latin1) ? Buffer.from(latin1, 'latin1').toString('utf8') : latin1;
}

function refuse(): boolean {
  // Strict-mode code that writes to it gets a TypeError, as it would from a frozen object.
  return false;
}

/**
 * The view handed downstream: looks like the ordinary object to every read
 * (property access, `in`, `Object.keys`, spread, `JSON.stringify`), refuses
 * every write, and decodes the body only when a field of it is read.
 */
const VIEW: ProxyHandler<CompactRecord> = Object.freeze({
  get(record: CompactRecord, key: string | symbol): unknown {
    // The read of nearly every event, at every stage: first.
    if (key === 'metadata' && record.metadata !== undefined) return record.metadata;
    if (key === RECORD) return record;
    if (typeof key === 'string' && record.owns(key)) return record.member(key);
    return Reflect.get(Object.prototype, key) as unknown;
  },
  has(record: CompactRecord, key: string | symbol): boolean {
    return (typeof key === 'string' && record.owns(key)) || key in Object.prototype;
  },
  ownKeys(record: CompactRecord): string[] {
    return record.keys();
  },
  getOwnPropertyDescriptor(record: CompactRecord, key: string | symbol): PropertyDescriptor | undefined {
    if (typeof key !== 'string' || !record.owns(key)) return undefined;
    return { value: record.member(key), writable: false, enumerable: true, configurable: true };
  },
  getPrototypeOf(): object {
    return Object.prototype;
  },
  set: refuse,
  defineProperty: refuse,
  deleteProperty: refuse,
  setPrototypeOf: refuse,
  preventExtensions: refuse,
});

/** The read-only view of a record that flows through `deltas()` and the store. */
export function compactView<T extends KubeObject>(record: CompactRecord): T {
  return new Proxy(record, VIEW) as unknown as T;
}

/** The record behind a compact view, or undefined for an ordinary object. */
export function compactRecordOf(object: unknown): CompactRecord | undefined {
  if (object === null || typeof object !== 'object') return undefined;
  return (object as { [RECORD]?: CompactRecord })[RECORD];
}

/**
 * `object` is no longer its key's current object in the cache (replaced by
 * a newer one, or deleted): if it is a compact view, its body stops
 * counting towards keeping its slab (`BodySlabs.release`). It stays
 * readable. Nothing happens for an ordinary object.
 */
export function releaseCompact(object: unknown): void {
  if (object === null || typeof object !== 'object') return;
  // Looked up here, not through `compactRecordOf`: this site sees only what `deltas()` holds (often
  // plain objects of one shape), where a lookup shared with every caller is megamorphic and slow to miss.
  (object as { [RECORD]?: CompactRecord })[RECORD]?.release();
}

/**
 * `object` is now its key's current object in a cache that will call
 * `releaseCompact` when it stops being: if it is a compact view, its
 * source keeps the bodies of the objects after it in slabs
 * (`BodySlabs.active`). Nothing happens for an ordinary object.
 */
export function trackCompact(object: unknown): void {
  if (object === null || typeof object !== 'object') return;
  // As in `releaseCompact`.
  (object as { [RECORD]?: CompactRecord })[RECORD]?.track();
}

/** What a reader gets for a stored object: the object itself, or, for a compact view, the decoded object. */
export function readable<T extends KubeObject>(object: T): T {
  const record = (object as { [RECORD]?: CompactRecord })[RECORD];
  return record === undefined ? object : (record.decoded() as T);
}
