/**
 * Stored objects are frozen all the way down, so no reader (a test holding a
 * snapshot, a handler building a response) can change what the server holds.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * A mutable deep copy of JSON data (stored objects are plain JSON). A plain
 * recursive copy: several times faster than structuredClone for this shape
 * of data, and it is on every write path.
 */
export function cloneJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneJson(value[i]);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = cloneJson(v);
  }
  return out as T;
}

/** Structural equality of JSON values; key order does not matter. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let count = 0;
  for (const key in ra) {
    if (ra[key] === undefined) continue;
    count += 1;
    if (!jsonEqual(ra[key], rb[key])) return false;
  }
  for (const key in rb) if (rb[key] !== undefined) count -= 1;
  return count === 0;
}

function hasPlainPrototype(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Whether two JSON values are the same to the last detail JSON keeps and the server reads: the
 * same keys in the same order (undefined-valued ones included), arrays with holes in the same
 * places, plain objects only. Either can then stand for the other.
 */
export function identicalJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (i in a !== i in b || !identicalJson(a[i], b[i])) return false;
    }
    return true;
  }
  if (Array.isArray(b) || !hasPlainPrototype(a) || !hasPlainPrototype(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const key = ka[i] as string;
    if (key !== kb[i] || !identicalJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/**
 * Puts in `next` the frozen values of `live` for the top-level fields (metadata aside, which a
 * write always changes) a write left identical: the stored object then shares them, so they are
 * not frozen, compared or copied again.
 */
export function shareUnchanged(next: Record<string, unknown>, live: Record<string, unknown>): void {
  for (const key of Object.keys(next)) {
    if (key === 'metadata' || !Object.hasOwn(live, key)) continue;
    const value = next[key];
    const kept = live[key];
    if (value !== kept && value !== null && typeof value === 'object' && Object.isFrozen(kept) && identicalJson(value, kept)) next[key] = kept;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
