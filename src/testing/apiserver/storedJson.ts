import type { KubeObject } from '../../types.js';

/**
 * Freezing and serializing what the store keeps, sparing the work done before on the parts a
 * version shares with earlier ones: a write shares, frozen, what it leaves unchanged (the
 * top-level fields it did not touch, the FieldsV1 of managers whose fields did not change),
 * which is most of an object.
 *
 * The parts it keeps track of ("units") are the top-level values of stored objects (metadata
 * aside, new with every write) and the FieldsV1 objects of their managedFields.
 * - {@link StoredJson.freeze} freezes an object all the way down, as deepFreeze does, but goes
 *   on into objects frozen elsewhere (so a stored object is frozen all the way down even when
 *   a caller froze only the top of a part it passed in) and skips the units it froze before.
 * - {@link StoredJson.line} is `prefix + JSON.stringify(object) + suffix`, with the JSON of each
 *   unit it wrote before taken from where it wrote it (a slice of that line), when the unit
 *   holds JSON data only: plain objects and arrays, strings, numbers, booleans, null (nothing
 *   with a toJSON, such as a Date, whose JSON could change while it stays frozen).
 */
export class StoredJson {
  /** Units frozen here all the way down: true for those holding JSON data only. */
  private readonly units = new WeakMap<object, boolean>();
  /** The JSON of units holding JSON data only, as written last. */
  private readonly written = new WeakMap<object, string>();

  /** Freezes a stored object all the way down; whether it holds JSON data only. */
  freeze(object: KubeObject): boolean {
    const metadata = object.metadata as unknown;
    const entries = isRecord(metadata) && Array.isArray(metadata.managedFields) ? (metadata.managedFields as unknown[]) : [];
    for (const entry of entries) if (isRecord(entry) && isRecord(entry.fieldsV1)) this.freezeValue(entry.fieldsV1, true);
    let data = isPlain(object);
    Object.freeze(object);
    for (const key of Object.keys(object)) {
      const value = (object as unknown as Record<string, unknown>)[key];
      if (!this.freezeValue(value, key !== 'metadata')) data = false;
    }
    return data;
  }

  private freezeValue(value: unknown, unit: boolean): boolean {
    if (value === null || typeof value !== 'object') return isJsonScalar(value);
    const known = this.units.get(value);
    if (known !== undefined) return known;
    Object.freeze(value);
    let data = isPlain(value);
    for (const key of Object.keys(value)) if (!this.freezeValue((value as Record<string, unknown>)[key], false)) data = false;
    if (unit) this.units.set(value, data);
    return data;
  }

  /**
   * `prefix + JSON.stringify(object) + suffix` for an object {@link freeze} found to hold JSON
   * data only (`data`); the units written fresh are remembered for the next versions.
   */
  line(prefix: string, object: KubeObject, suffix: string, data: boolean): string {
    if (!data) return `${prefix}${JSON.stringify(object)}${suffix}`;
    const fresh: [object, number, number][] = [];
    let out = prefix;
    const unit = (value: unknown): void => {
      if (value !== null && typeof value === 'object') {
        const known = this.written.get(value);
        if (known !== undefined) {
          out += known;
          return;
        }
        if (this.units.get(value) === true) {
          const start = out.length;
          out += JSON.stringify(value);
          fresh.push([value, start, out.length]);
          return;
        }
      }
      out += JSON.stringify(value);
    };
    const entry = (value: unknown): void => writeObject(value as Record<string, unknown>, (key, field) => (key === 'fieldsV1' ? unit(field) : plain(field)));
    const plain = (value: unknown): void => {
      out += JSON.stringify(value);
    };
    const writeObject = (value: Record<string, unknown>, field: (key: string, value: unknown) => void): void => {
      out += '{';
      let first = true;
      for (const key of Object.keys(value)) {
        const item = value[key];
        if (item === undefined) continue;
        out += `${first ? '' : ','}${JSON.stringify(key)}:`;
        first = false;
        field(key, item);
      }
      out += '}';
    };
    const list = (value: unknown[], item: (value: unknown) => void): void => {
      out += '[';
      for (let i = 0; i < value.length; i++) {
        if (i > 0) out += ',';
        const member = value[i];
        if (member === undefined) out += 'null';
        else item(member);
      }
      out += ']';
    };
    const metadata = (value: unknown): void => {
      if (!isRecord(value)) return unit(value);
      writeObject(value, (key, field) => {
        if (key === 'managedFields' && Array.isArray(field)) list(field, (member) => (isRecord(member) ? entry(member) : plain(member)));
        else plain(field);
      });
    };
    writeObject(object as unknown as Record<string, unknown>, (key, value) => (key === 'metadata' ? metadata(value) : unit(value)));
    out += suffix;
    for (const [value, start, end] of fresh) this.written.set(value, out.slice(start, end));
    return out;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isJsonScalar(value: unknown): boolean {
  return value === null || value === undefined || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** A plain object or array: JSON.stringify writes its own enumerable keys and calls no toJSON. */
function isPlain(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  if (Array.isArray(value)) return prototype === Array.prototype;
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}
