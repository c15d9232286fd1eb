/**
 * The one set of helpers for JSON data (Kubernetes objects as `JSON.parse`
 * gives them, and what callers build to send): a deep copy and an equality
 * that both mean "as JSON": a property whose value is `undefined` is absent,
 * as `JSON.stringify` leaves it out, and a value with `toJSON` (a `Date`)
 * stands for what `toJSON` returns. Plain loops rather than `structuredClone`
 * or a JSON round trip: they run on every write of the embedded API server
 * and are several times faster on this shape of data.
 *
 * Every member is data, `__proto__` too: `JSON.parse` makes `"__proto__"` an
 * own member, and so must every copy, merge and patch of user objects (kube
 * and controller-runtime treat it as an ordinary key; a CRD subtree with
 * `x-kubernetes-preserve-unknown-fields` may hold one). Assignment
 * (`out[key] = value`) would instead set the copy's prototype and lose the
 * member, and a read of a member the object lacks (`obj[key]`) would find
 * `Object.prototype`: {@link setMember} and {@link ownMember} are the two
 * ways to write and read a member whose name comes from data.
 */

type WithToJson = { toJSON(): unknown };

/**
 * Sets `key` of `target` to `value` as an own data member, whatever the key:
 * for `__proto__`, assignment would replace the prototype instead.
 */
export function setMember<T>(target: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** The own member `key` of `source`, or undefined: never a value its prototype chain holds (`obj.__proto__`, `obj.constructor`). */
export function ownMember<T>(source: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(source, key) ? source[key] : undefined;
}

function hasToJson(value: object): value is WithToJson {
  return typeof (value as Partial<WithToJson>).toJSON === 'function';
}

/**
 * Freezes a value all the way down, so that no reader (a test holding a
 * snapshot, a handler building a response, a reconcile reading the cache)
 * can change what it shares with others.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** A mutable deep copy of JSON data: what a server would receive (see the module comment for `undefined` and `toJSON`). */
export function cloneJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneJson(value[i]);
    return out as T;
  }
  if (hasToJson(value)) return cloneJson(value.toJSON()) as T;
  const out: Record<string, unknown> = {};
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) setMember(out, key, cloneJson(v));
  }
  return out as T;
}

/** Whether two values are equal as JSON: the same data, whatever the order of object keys; array order counts. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') {
    if (a !== null && typeof a === 'object' && hasToJson(a)) return jsonEqual(a.toJSON(), b);
    if (b !== null && typeof b === 'object' && hasToJson(b)) return jsonEqual(a, b.toJSON());
    return false;
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (hasToJson(a)) return jsonEqual(a.toJSON(), b);
  if (hasToJson(b)) return jsonEqual(a, b.toJSON());
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let count = 0;
  for (const key in ra) {
    if (ra[key] === undefined) continue;
    count += 1;
    if (!jsonEqual(ra[key], ownMember(rb, key))) return false;
  }
  for (const key in rb) if (rb[key] !== undefined) count -= 1;
  return count === 0;
}

/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
