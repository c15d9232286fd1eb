import { decodeFieldsV1, fieldsV1ToSet, setToFieldsV1, type FieldSet } from './fieldPath.js';
import { deepFreeze } from '../../util/json.js';
import type { JsonObject } from './jsonValue.js';

/**
 * The FieldsV1 of stored objects, decoded and encoded once. Every write reads the managers' field
 * sets of the live object and writes them back, most of them unchanged; decoding and encoding
 * them each time was most of the cost of a write. One cache lives as long as its server.
 *
 * It is exact because what it keys on never changes: a decoded set is remembered only for a
 * FieldsV1 object frozen all the way down (as stored objects are), and an encoding only for a
 * set, which no code changes once built (fieldPath.ts). An encoding is frozen and may be shared
 * by several stored objects. The two are linked (the encoding of a decoded set is the object it
 * came from, the decoding of an encoding is its set) only when that is exactly what encoding or
 * decoding would give: a decoded object that is not in setToFieldsV1's form, or a set that
 * does not survive the round trip (the empty path alone, or path elements FieldsV1 cannot
 * spell), is not linked.
 */
export class FieldsV1Cache {
  private readonly decoded = new WeakMap<object, FieldSet>();
  private readonly encoded = new WeakMap<FieldSet, JsonObject>();

  /** {@link fieldsV1ToSet}, remembered for frozen objects. Throws as it does. */
  decode(fields: unknown): FieldSet {
    if (fields === null || typeof fields !== 'object' || !Object.isFrozen(fields)) return fieldsV1ToSet(fields);
    const known = this.decoded.get(fields);
    if (known !== undefined) return known;
    const { set, frozen, canonical } = decodeFieldsV1(fields);
    if (frozen) {
      this.decoded.set(fields, set);
      if (canonical) this.encoded.set(set, fields as JsonObject);
    }
    return set;
  }

  /** {@link setToFieldsV1}, frozen and remembered per set. */
  encode(set: FieldSet): JsonObject {
    let fields = this.encoded.get(set);
    if (fields === undefined) {
      fields = deepFreeze(setToFieldsV1(set));
      this.encoded.set(set, fields);
      if (survivesRoundTrip(set)) this.decoded.set(fields, set);
    }
    return fields;
  }
}

/**
 * Whether decoding setToFieldsV1's object for `set` gives `set` back. It does unless the set is
 * the empty path alone (encoded as `{}`, the empty set) or a path has an element decoding refuses
 * (not `f:`, `k:`, `v:` or `i:` followed by something: a name holding a NUL splits into such
 * elements). Every node setToFieldsV1 writes is then read back: `.` for a member with children,
 * `{}` for a member without, an object for a node with children.
 */
function survivesRoundTrip(set: FieldSet): boolean {
  if (set.size === 1 && set.has('')) return false;
  for (const key of set) {
    for (let start = 0; key !== ''; ) {
      const tag = key[start];
      if (key[start + 1] !== ':' || (tag !== 'f' && tag !== 'k' && tag !== 'v' && tag !== 'i')) return false;
      const end = key.indexOf('\u0000', start);
      if (end === -1) break;
      start = end + 1;
    }
  }
  return true;
}
