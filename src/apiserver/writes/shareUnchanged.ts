/**
 * Sharing what a write left unchanged: when a new version of an object holds
 * a top-level field identical to the stored (frozen) one, the stored value is
 * reused, so it is not frozen, compared or serialized again.
 */

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
