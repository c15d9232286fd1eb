import { fieldsV1ToSet, sameMembers, setToFieldsV1, type FieldSet } from './fieldPath.js';
import { deepFreeze } from './immutable.js';
import type { JsonObject } from './jsonValue.js';

/**
 * The FieldsV1 of stored objects, decoded and encoded once. Every write reads the managers' field
 * sets of the live object and writes them back, most of them unchanged; decoding and encoding
 * them each time was most of the cost of a write. One cache lives as long as its server.
 *
 * It is exact because what it keys on never changes: a decoded set is remembered only for a
 * frozen FieldsV1 object (stored objects are frozen all the way down), and an encoding only for
 * a set, which no code changes once built (fieldPath.ts). An encoding is frozen and may be
 * shared by several stored objects. An encoding is also remembered as the encoding of its set
 * only when decoding it gives that set back (a set holding the empty path, or path elements
 * FieldsV1 cannot spell, does not survive the round trip).
 */
export class FieldsV1Cache {
  private readonly decoded = new WeakMap<object, FieldSet>();
  private readonly encoded = new WeakMap<FieldSet, JsonObject>();

  /** {@link fieldsV1ToSet}, remembered for frozen objects. Throws as it does. */
  decode(fields: unknown): FieldSet {
    if (fields === null || typeof fields !== 'object' || !Object.isFrozen(fields)) return fieldsV1ToSet(fields);
    let set = this.decoded.get(fields);
    if (set === undefined) {
      set = fieldsV1ToSet(fields);
      this.decoded.set(fields, set);
    }
    return set;
  }

  /** {@link setToFieldsV1}, frozen and remembered per set. */
  encode(set: FieldSet): JsonObject {
    let fields = this.encoded.get(set);
    if (fields === undefined) {
      fields = deepFreeze(setToFieldsV1(set));
      this.encoded.set(set, fields);
      if (decodesTo(fields, set)) this.decoded.set(fields, set);
    }
    return fields;
  }
}

function decodesTo(fields: JsonObject, set: FieldSet): boolean {
  try {
    return sameMembers(fieldsV1ToSet(fields), set);
  } catch {
    return false;
  }
}
