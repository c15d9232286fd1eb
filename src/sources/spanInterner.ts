import { deepFreeze } from '../util/json.js';
import { keyIs, type JsonSpans } from '../util/jsonSpans.js';

/** Lookups per field between decisions on whether interning it pays. */
const WINDOW = 1024;
/** With interning off, one lookup in this many still goes through the table, to notice when sharing returns. */
const SAMPLE = 64;

interface FieldStats {
  interning: boolean;
  lookups: number;
  hits: number;
  /** The bytes of the field's last value, and the value: objects in a row often share it, and bytes compare faster than a string is made and hashed. */
  lastBytes: Buffer | undefined;
  last: unknown;
  /** Where `knownEnd` last found the last value's bytes again, in which scan, and the value they were then: `value` need not compare them twice. */
  steppedAt: number;
  steppedScan: number;
  stepped: unknown;
}

/**
 * Decodes the object and array values of metadata fields (labels,
 * annotations, ownerReferences, finalizers, managedFields) so that equal
 * texts give one shared frozen value: the pods of one ReplicaSet share
 * their labels, owner reference and managedFields, and each copy would
 * cost more than the JSON it came from. The table holds its values weakly
 * (a value no object uses any more is collected, and its entry goes), and a
 * field whose values turn out not to repeat (fewer than one lookup in eight
 * finds its text) is decoded without the table, checked again now and then.
 * One per source: nothing is shared between sources.
 */
export class SpanInterner {
  private readonly table = new Map<string, WeakRef<object>>();
  private readonly stats = new Map<string, FieldStats>();
  /** The fields' stats, in an array to search by key bytes (a handful of fields). */
  private readonly fields: [string, FieldStats][] = [];
  /** Counts the scans `knownEnd` serves (`beginScan`): what it found in an earlier one says nothing of this one's bytes. */
  private scan = 0;
  private readonly registry = new FinalizationRegistry<string>((text) => {
    const ref = this.table.get(text);
    if (ref !== undefined && ref.deref() === undefined) this.table.delete(text);
  });

  /** The decoded, frozen value of the JSON in `buf[start, end)`, the value of field `field`, shared with earlier equal ones where that pays. */
  value(field: string, buf: Buffer, start: number, end: number): unknown {
    const stats = this.statsOf(field, true);
    const lookups = ++stats.lookups;
    if (!stats.interning && lookups % SAMPLE !== 0) return this.decode(field, buf.toString('utf8', start, end));
    if (stats.steppedScan === this.scan && stats.steppedAt === start) {
      stats.hits++;
      return stats.stepped;
    }
    if (sameBytes(stats.lastBytes, buf, start, end)) {
      stats.hits++;
      return stats.last;
    }
    const text = buf.toString('utf8', start, end);
    let value: unknown = this.table.get(text)?.deref();
    if (value !== undefined) {
      stats.hits++;
    } else {
      value = this.decode(field, text);
      if (value !== null && typeof value === 'object') {
        this.table.set(text, new WeakRef(value));
        this.registry.register(value, text);
      }
    }
    if (stats.interning) {
      // A copy: a view would keep the whole chunk it came in alive.
      stats.lastBytes = Buffer.from(buf.subarray(start, end));
      stats.last = value;
    }
    this.decide(stats, lookups);
    return value;
  }

  /**
   * The value of field `field` in `buf[start, end)` is left out, not
   * decoded (`dropManagedFields` on the bytes). Its bytes are kept while
   * its values repeat, as `value` keeps them, so that the scanner steps
   * over the next equal one (`knownEnd`) instead of reading it. A codec
   * either drops a field or decodes it, never both, so `value` never meets
   * these bytes without their value.
   */
  skipped(field: string, buf: Buffer, start: number, end: number): void {
    const stats = this.statsOf(field, true);
    const lookups = ++stats.lookups;
    if (!stats.interning && lookups % SAMPLE !== 0) return;
    // Stepped over in this scan (`knownEnd`): the bytes are the last value's, compared once already.
    if ((stats.steppedScan === this.scan && stats.steppedAt === start) || sameBytes(stats.lastBytes, buf, start, end)) stats.hits++;
    // Kept on a sampled lookup too: the next sample's comparison is how a field that repeats again is noticed.
    else stats.lastBytes = Buffer.from(buf.subarray(start, end));
    this.decide(stats, lookups);
  }

  /** The stats of `key`, made at its first lookup; a metadata field's (`stepped`) are also searched by `knownEnd`. */
  private statsOf(key: string, stepped: boolean): FieldStats {
    let stats = this.stats.get(key);
    if (stats === undefined) {
      this.stats.set(key, (stats = { interning: true, lookups: 0, hits: 0, lastBytes: undefined, last: undefined, steppedAt: -1, steppedScan: -1, stepped: undefined }));
      if (stepped) this.fields.push([key, stats]);
    }
    return stats;
  }

  /** After a window of lookups: whether the field's values repeat enough to go on looking them up. */
  private decide(stats: FieldStats, lookups: number): void {
    const counted = stats.interning ? lookups : lookups / SAMPLE;
    if (counted < WINDOW) return;
    stats.interning = stats.hits * 8 >= counted;
    stats.lookups = 0;
    stats.hits = 0;
    if (!stats.interning) {
      stats.lastBytes = undefined;
      stats.last = undefined;
    }
  }

  /**
   * A value decoded and frozen. In an array of objects (managedFields,
   * ownerReferences), the objects' own object members are shared too: the
   * managedFields entries of one owner's objects differ by their `time`
   * alone, and their `fieldsV1`, the bulk of them, is the same.
   */
  private decode(field: string, text: string): unknown {
    const value = JSON.parse(text) as unknown;
    if (Array.isArray(value)) {
      for (const entry of value as unknown[]) {
        if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) continue;
        const members = entry as Record<string, unknown>;
        for (const key of Object.keys(members)) {
          const member = members[key];
          if (member !== null && typeof member === 'object') members[key] = this.nested(`${field}[].${key}`, member);
        }
      }
    }
    return deepFreeze(value);
  }

  /** One shared frozen copy of `value`, the member found at `path`, while its values repeat. */
  private nested(path: string, value: object): unknown {
    const stats = this.statsOf(path, false);
    const lookups = ++stats.lookups;
    if (!stats.interning && lookups % SAMPLE !== 0) return value;
    const text = JSON.stringify(value);
    let shared: unknown = this.table.get(text)?.deref();
    if (shared !== undefined) stats.hits++;
    else {
      shared = deepFreeze(value);
      this.table.set(text, new WeakRef(value));
      this.registry.register(value, text);
    }
    this.decide(stats, lookups);
    return shared;
  }

  /**
   * Where the value of the field whose key is member `m`'s, starting at
   * `start`, ends, if its bytes (before `limit`) are those of the field's
   * last value; else -1. The scanner steps over such a value unread
   * (`KnownValue`).
   */
  knownEnd(buf: Buffer, spans: JsonSpans, m: number, start: number, limit: number): number {
    for (const [field, stats] of this.fields) {
      const last = stats.lastBytes;
      if (last === undefined || !keyIs(buf, spans, m, field)) continue;
      const end = start + last.length;
      if (end > limit || !sameBytes(last, buf, start, end)) return -1;
      // Kept with the value of that moment: a repeated key's earlier member may change `last` before this one is decoded.
      stats.steppedAt = start;
      stats.steppedScan = this.scan;
      stats.stepped = stats.last;
      return end;
    }
    return -1;
  }

  /**
   * A new scan of one object's bytes begins, whose `knownEnd` findings its
   * `value` calls may use. Called before each scan that steps over known
   * values, so that none is taken for a finding in other bytes.
   */
  beginScan(): void {
    this.scan++;
  }

  /** Distinct texts held (for tests and benchmarks). */
  get size(): number {
    return this.table.size;
  }
}

/** Whether `buf[start, end)` holds the bytes of `last` (a field's last value). */
function sameBytes(last: Buffer | undefined, buf: Buffer, start: number, end: number): boolean {
  return last !== undefined && last.length === end - start && end <= buf.length && buf.compare(last, 0, last.length, start, end) === 0;
}
