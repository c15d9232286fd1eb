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
 *   unit it wrote before taken from where it wrote it last (a slice of the latest line that
 *   holds it), when the unit holds JSON data only: plain objects and arrays, strings, numbers,
 *   booleans, null (nothing with a toJSON, such as a Date, whose JSON could change while it
 *   stays frozen).
 */
export class StoredJson {
  /** Units frozen here all the way down: true for those holding JSON data only. */
  private readonly units = new WeakMap<object, boolean>();
  /** The JSON of units holding JSON data only, as written last. */
  private readonly written = new WeakMap<object, string>();

  /** Freezes a stored object all the way down; what {@link line} needs to know of it. */
  freeze(object: KubeObject): Frozen {
    const frozen = { data: true, sharesFields: false };
    frozen.data = this.freezeObject(object as unknown as Record<string, unknown>, (key, value) =>
      key === 'metadata' && isRecord(value) ? this.freezeMetadata(value, frozen) : this.freezeUnit(value),
    );
    return frozen;
  }

  private freezeMetadata(metadata: Record<string, unknown>, frozen: Frozen): boolean {
    return this.freezeObject(metadata, (key, value) => (key === 'managedFields' && Array.isArray(value) ? this.freezeEntries(value, frozen) : freezeValue(value)));
  }

  private freezeEntries(entries: unknown[], frozen: Frozen): boolean {
    const fields = (value: unknown): boolean => {
      if (value !== null && typeof value === 'object' && this.units.has(value)) frozen.sharesFields = true;
      return this.freezeUnit(value);
    };
    return this.freezeObject(entries as unknown as Record<string, unknown>, (_, entry) =>
      isRecord(entry) ? this.freezeObject(entry, (key, value) => (key === 'fieldsV1' ? fields(value) : freezeValue(value))) : freezeValue(entry),
    );
  }

  /** Freezes an object and, with `freezeChild`, its children; whether it holds JSON data only. */
  private freezeObject(object: Record<string, unknown>, freezeChild: (key: string, value: unknown) => boolean): boolean {
    let data = isPlain(object);
    Object.freeze(object);
    for (const key of Object.keys(object)) if (!freezeChild(key, object[key])) data = false;
    return data;
  }

  private freezeUnit(value: unknown): boolean {
    if (value === null || typeof value !== 'object') return freezeValue(value);
    const known = this.units.get(value);
    if (known !== undefined) return known;
    const data = freezeValue(value);
    this.units.set(value, data);
    return data;
  }

  /**
   * `prefix + JSON.stringify(object) + suffix` for an object {@link freeze} froze; where each
   * unit's JSON is in it is remembered for the next versions.
   */
  line(prefix: string, object: KubeObject, suffix: string, frozen: Frozen): string {
    if (!frozen.data) return `${prefix}${JSON.stringify(object)}${suffix}`;
    const writer = new LineWriter(prefix, this.units, this.written, frozen.sharesFields);
    writer.object(object as unknown as Record<string, unknown>, 'stored');
    const line = writer.out + suffix;
    // Every unit's JSON is now taken from this line (a slice shares its memory), so no older line
    // stays in memory for a part the current version still holds.
    for (const [value, start, end] of writer.placed) this.written.set(value, line.slice(start, end));
    return line;
  }
}

/** What freezing a stored object found: whether it holds JSON data only, whether it shares FieldsV1 with an earlier version. */
export interface Frozen {
  data: boolean;
  sharesFields: boolean;
}

/** Where a plain object sits in a stored object, which tells which of its values are units. */
type Place = 'stored' | 'metadata' | 'entry';

/** Writes the JSON of one stored object (JSON data only) piece by piece. */
class LineWriter {
  /** Where the JSON of each unit is in this line. */
  readonly placed: [object, number, number][] = [];

  constructor(
    public out: string,
    private readonly units: WeakMap<object, boolean>,
    private readonly written: WeakMap<object, string>,
    private readonly sharesFields: boolean,
  ) {}

  object(value: Record<string, unknown>, place: Place): void {
    this.out += '{';
    let first = true;
    for (const key of Object.keys(value)) {
      const item = value[key];
      if (item === undefined) continue;
      this.out += `${first ? '' : ','}${JSON.stringify(key)}:`;
      first = false;
      if (place === 'stored') {
        // Metadata are written piece by piece only to take FieldsV1 written before (none on a create).
        if (key === 'metadata' && isRecord(item) && this.sharesFields) this.object(item, 'metadata');
        else this.unit(item);
      } else if (place === 'metadata' && key === 'managedFields' && Array.isArray(item)) this.entries(item);
      else if (place === 'entry' && key === 'fieldsV1') this.unit(item);
      else this.out += JSON.stringify(item);
    }
    this.out += '}';
  }

  private entries(list: unknown[]): void {
    this.out += '[';
    for (let i = 0; i < list.length; i++) {
      if (i > 0) this.out += ',';
      const entry = list[i];
      if (entry === undefined) this.out += 'null';
      else if (isRecord(entry)) this.object(entry, 'entry');
      else this.out += JSON.stringify(entry);
    }
    this.out += ']';
  }

  private unit(value: unknown): void {
    if (value !== null && typeof value === 'object' && this.units.get(value) === true) {
      const start = this.out.length;
      this.out += this.written.get(value) ?? JSON.stringify(value);
      this.placed.push([value, start, this.out.length]);
      return;
    }
    this.out += JSON.stringify(value);
  }
}

/** Freezes a value all the way down, into parts frozen before; whether it holds JSON data only. */
function freezeValue(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return isJsonScalar(value);
  let data = isPlain(value);
  Object.freeze(value);
  for (const key of Object.keys(value)) if (!freezeValue((value as Record<string, unknown>)[key])) data = false;
  return data;
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
