import { deepFreeze } from '../util/json.js';
import { keyIs, type JsonSpans } from './jsonSpans.js';

/** Lookups per field between decisions on whether interning it pays. */
const WINDOW = 1024;
/** With interning off, one lookup in this many still goes through the table, to notice when sharing returns. */
const SAMPLE = 64;
/** Recent values kept per field: the objects of several owners (pods of several ReplicaSets) come interleaved, each with its owner's. */
const RECENT = 16;
/** Byte positions learned per field where its values differ (see `remember`), and the new values it learns from at most. */
const PROBES = 4;
const LEARNING = 64;
/** A field whose values the recent ones do not find often (fewer than one look-up in eight, over a window) looks only at the newest for this many windows, then at all again. */
const NARROW_WINDOWS = 7;

/** A value of a field with the bytes it came as (a copy: a view would keep the whole chunk it came in alive). */
interface Recent {
  bytes: Buffer;
  value: unknown;
}

interface FieldStats {
  interning: boolean;
  lookups: number;
  hits: number;
  /** The field's recent values (up to `RECENT`): objects in a row, or of a few owners in turn, often share one, and bytes compare faster than a string is made and hashed. */
  recent: Recent[];
  /** Which of `recent` was found last (looked at first), and which the next new value replaces (the oldest). */
  found: number;
  next: number;
  /** Where (from a value's start) two of its values of one length were found to differ first: bytes there rule out most others cheaply. */
  probes: number[];
  /** New values left to learn probes from. */
  learning: number;
  /** How many of `recent` a look-up searches (`RECENT`, or 1: the newest, when searching them all rarely pays), and the windows left so. */
  searched: number;
  narrowWindows: number;
  /** Look-ups of `recent` and their hits in the current window. */
  recentLookups: number;
  recentHits: number;
  /** Where `knownEnd` last found a recent value's bytes again, in which scan, and the value they were then: `value` need not compare them twice. */
  steppedAt: number;
  steppedScan: number;
  stepped: unknown;
  /** Where `knownEnd` last found none of the recent values, and in which scan: `value` need not look for them again. */
  missedAt: number;
  missedScan: number;
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
    const known = this.missed(stats, start) ? -1 : recentIndex(stats, buf, start, end);
    if (known !== -1) {
      stats.hits++;
      return (stats.recent[known] as Recent).value;
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
    if (stats.interning) remember(stats, buf, start, end, value);
    this.decide(stats, lookups);
    return value;
  }

  /**
   * The value of field `field` in `buf[start, end)` is left out, not
   * decoded (`dropManagedFields` on the bytes). Its recent bytes are kept
   * while its values repeat, as `value` keeps them, so that the scanner steps
   * over the next equal one (`knownEnd`) instead of reading it. A codec
   * either drops a field or decodes it, never both, so `value` never meets
   * these bytes without their value.
   */
  skipped(field: string, buf: Buffer, start: number, end: number): void {
    const stats = this.statsOf(field, true);
    const lookups = ++stats.lookups;
    if (!stats.interning && lookups % SAMPLE !== 0) return;
    // Stepped over in this scan (`knownEnd`): the bytes are a recent value's, compared once already.
    if ((stats.steppedScan === this.scan && stats.steppedAt === start) || (!this.missed(stats, start) && recentIndex(stats, buf, start, end) !== -1)) stats.hits++;
    // Kept on a sampled lookup too: the next sample's comparison is how a field that repeats again is noticed.
    else remember(stats, buf, start, end, undefined);
    this.decide(stats, lookups);
  }

  /** The stats of `key`, made at its first lookup; a metadata field's (`stepped`) are also searched by `knownEnd`. */
  private statsOf(key: string, stepped: boolean): FieldStats {
    let stats = this.stats.get(key);
    if (stats === undefined) {
      this.stats.set(key, (stats = { interning: true, lookups: 0, hits: 0, recent: [], found: 0, next: 0, probes: [], learning: LEARNING, searched: RECENT, narrowWindows: 0, recentLookups: 0, recentHits: 0, steppedAt: -1, steppedScan: -1, stepped: undefined, missedAt: -1, missedScan: -1 }));
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
      stats.recent = [];
      stats.found = 0;
      stats.next = 0;
      stats.probes = [];
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
   * `start`, ends, if its bytes (before `limit`) begin with those of one
   * of the field's recent values; else -1. A JSON object or array ends
   * where its bytes do, so those bytes are the whole value: the scanner
   * steps over it unread (`KnownValue`).
   */
  knownEnd(buf: Buffer, spans: JsonSpans, m: number, start: number, limit: number): number {
    for (const [field, stats] of this.fields) {
      if (stats.recent.length === 0 || !keyIs(buf, spans, m, field)) continue;
      const known = recentIndex(stats, buf, start, -1, limit);
      if (known === -1) {
        stats.missedAt = start;
        stats.missedScan = this.scan;
        return -1;
      }
      const recent = stats.recent[known] as Recent;
      // Kept with the value of that moment: a repeated key's earlier member may change `recent` before this one is decoded.
      stats.steppedAt = start;
      stats.steppedScan = this.scan;
      stats.stepped = recent.value;
      return start + recent.bytes.length;
    }
    return -1;
  }

  /** Whether `knownEnd` has just looked for the value at `start` among the field's recent ones, in this scan, and found none. */
  private missed(stats: FieldStats, start: number): boolean {
    return stats.missedScan === this.scan && stats.missedAt === start;
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

/**
 * Which of the field's recent values has the bytes `buf[start, end)`, or,
 * `end` -1, whose bytes begin at `start` and end by `limit`; -1 for none.
 * The one found last is looked at first.
 */
function recentIndex(stats: FieldStats, buf: Buffer, start: number, end: number, limit = end): number {
  const recent = stats.recent;
  const n = recent.length;
  if (++stats.recentLookups === WINDOW) narrowOrWiden(stats);
  for (let k = 0, i = stats.found, searched = Math.min(n, stats.searched); k < searched; k++, i = i + 1 === n ? 0 : i + 1) {
    const bytes = (recent[i] as Recent).bytes;
    const length = bytes.length;
    const to = start + length;
    if ((end === -1 ? to > limit : to !== end) || to > buf.length || !probesMatch(stats.probes, bytes, buf, start)) continue;
    // Three more bytes read here rule out most other values before the comparison, a call that costs more than they do.
    const a = length >> 2;
    const b = length >> 1;
    const c = length - a;
    if (buf[start + a] !== bytes[a] || buf[start + b] !== bytes[b] || buf[start + c] !== bytes[c] || buf.compare(bytes, 0, length, start, to) !== 0) continue;
    stats.found = i;
    stats.recentHits++;
    return i;
  }
  return -1;
}

/**
 * At the end of a window of look-ups: a field whose values come from more
 * owners than are kept (pods of a hundred ReplicaSets in turn) misses
 * nearly always, and searching all of `recent` would cost more than it
 * finds; it searches the newest alone, as when one value was kept, and
 * tries them all again now and then, for the owners may become fewer.
 */
function narrowOrWiden(stats: FieldStats): void {
  if (stats.searched === RECENT) {
    if (stats.recentHits * 8 < stats.recentLookups) {
      stats.searched = 1;
      stats.narrowWindows = NARROW_WINDOWS;
    }
  } else if (--stats.narrowWindows === 0) {
    stats.searched = RECENT;
  }
  stats.recentLookups = 0;
  stats.recentHits = 0;
}

/** Whether `bytes` (a recent value) has, at each of the field's probes it is long enough for, the byte `buf` has there from `start`. */
function probesMatch(probes: number[], bytes: Buffer, buf: Buffer, start: number): boolean {
  for (let k = 0; k < probes.length; k++) {
    const p = probes[k] as number;
    if (p < bytes.length && buf[start + p] !== bytes[p]) return false;
  }
  return true;
}

/**
 * Keeps `value` (what `buf[start, end)` decodes to) among the field's
 * recent values, in place of the oldest once there are `RECENT`. Values of
 * one field and one length (labels of ReplicaSets whose hashes differ)
 * mostly differ in the same few places: the first place where the new one
 * differs from a kept one of its length becomes a probe, until there are
 * `PROBES`.
 */
function remember(stats: FieldStats, buf: Buffer, start: number, end: number, value: unknown): void {
  if (stats.probes.length < PROBES && stats.learning > 0 && stats.searched === RECENT) {
    stats.learning--;
    const length = end - start;
    const same = stats.recent.find((r) => r.bytes.length === length);
    if (same !== undefined) {
      let d = 0;
      while (d < length && same.bytes[d] === buf[start + d]) d++;
      if (d < length && !stats.probes.includes(d)) stats.probes.push(d);
    }
  }
  const entry: Recent = { bytes: Buffer.from(buf.subarray(start, end)), value };
  if (stats.recent.length < RECENT) stats.recent.push(entry);
  else stats.recent[stats.next] = entry;
  // The newest is looked at first: searching it alone is keeping the last value.
  stats.found = stats.next;
  stats.next = (stats.next + 1) % RECENT;
}
