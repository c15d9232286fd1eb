/**
 * The compact cache: how a source keeps the objects it lists and watches
 * (`listWatch`'s default, `compact`). This folder is all of it: the codec
 * here, which reads an object from its bytes; the object form and its
 * read-only view (`compactObject.ts`); the slabs outside the heap its
 * bodies live in (`bodySlabs.ts`); the scanner that finds the members of a
 * JSON object without decoding it (`jsonSpans.ts`); and what shares
 * repeated values between objects (`spanInterner.ts`, `internPool.ts`,
 * `objectShapes.ts`, and `metadataInterner.ts` for metadata-only sources,
 * which stay parsed). Sources build records, `deltas()` and the store hold
 * them; nothing here does I/O or reads a clock (the layering test keeps it
 * so). docs/ARCHITECTURE.md ("The compact cache") says why it is the
 * default.
 *
 * The memory bound. What a source keeps grows with the objects it
 * currently holds, not with the objects or values it ever saw:
 * - per object, `apiVersion`, `kind` and `metadata` decoded and the rest
 *   as its JSON bytes. Once `deltas()` keeps count of which records are
 *   current, the bodies are in 64 KiB slabs outside the JavaScript heap
 *   (one larger than a quarter slab gets a buffer of its own); when the
 *   slabs that hold current bodies hold more than 4/3 of those bodies'
 *   bytes and more than 1 MiB past them, the current bodies of the
 *   sparsest slab are moved out of it (`bodySlabs.ts`);
 * - the tables that share values are bounded whatever they see: the
 *   metadata interner's pools, two generations each, at most 8,192
 *   strings of 512K characters and 4,096 records of 4M characters per
 *   source (`defaultInternerBounds`); the codec's own pool of shared
 *   metadata strings under the bounds of the interner's strings, and at
 *   most 64 metadata keys, 4,096 distinct `apiVersion`s and `kind`s,
 *   4,096 key lists and 256 key sequences (`objectShapes.ts`); the span
 *   interner's table holds its values weakly (an entry goes with its
 *   value), with 16 recent values per field;
 * - the decoded objects readers were handed: 256 per source, the least
 *   recently read let go of first (`DecodedCache`).
 * What that comes to for 2 KB pods (about three quarters of their JSON
 * when they share metadata values, more than it when they share none) is
 * measured in docs/benchmarks.md, "Memory of the read path" and
 * "bench:watch".
 *
 * The invariants:
 * - readers get ordinary objects: `Store.get`, `list` and `byIndex` hand
 *   out the decoded object, frozen, equal to what `JSON.parse` makes of the
 *   bytes (own properties in their order, the last of a repeated key
 *   winning, `__proto__` as data); what flows through `deltas()` and to
 *   predicates and mappers is a read-only view that reads like it;
 * - reading `metadata` never decodes the body: predicates and index
 *   functions on metadata cost what they cost on a parsed object (DESIGN
 *   invariant 22); reading another field decodes the body once;
 * - a shared value is deep-frozen, since other objects hold it too, and a
 *   transform may change `metadata` only;
 * - a slab is written once and never reused, so a record stays readable
 *   for as long as anything holds it, released or not; bodies go to slabs
 *   only once something keeps count of the records still current
 *   (`deltas()`'s `trackCompact`/`releaseCompact`), else they stay strings;
 * - one codec per source, with its interners, slabs and decoded cache:
 *   nothing is shared between sources, and all of it goes with the source.
 */
import { CompactRecord, DecodedCache, compactRecordOf, compactView, type RecordsShared } from './compactObject.js';
import { BodySlabs } from './bodySlabs.js';
import { deepFreeze } from '../util/json.js';
import { DEPTH, FIELDS, PARENT, KEY_START, VALUE_END, VALUE_START, jsonSpans, keyIs, memberKey, scanObject, type JsonSpans, type KnownValue } from './jsonSpans.js';
import { SpanInterner } from './spanInterner.js';
import { ObjectShapes, type ObjectShape } from './objectShapes.js';
import { InternPool } from './internPool.js';
import { defaultInternerBounds, sharedMetadataStrings } from './metadataInterner.js';
import { BACKSLASH, CLOSE_BRACE, COMMA, isJsonSpace, OPEN_BRACE, OPEN_BRACKET, QUOTE } from '../util/jsonBytes.js';

/** Distinct metadata keys kept as shared strings; past this, keys are decoded each time. */
const SHARED_KEYS = 64;
/** Distinct small strings (apiVersion, kind) and key lists kept for sharing; past this, new ones are not kept. */
const SHARED_SMALL = 4096;

/** Metadata's string fields that many objects share (a namespace, the pods of one ReplicaSet): one string is held for each value. */
const SHARED_SCALARS: ReadonlySet<string> = new Set(sharedMetadataStrings);

/** The members a list stamps on its items, which a body kept unread must not hold; with their quotes, as the tail is searched for them. */
const STAMPED_KEYS = ['apiVersion', 'kind'] as const;
const QUOTED_STAMPED_KEYS = STAMPED_KEYS.map((key) => `"${key}"`);

/** How the codec's objects are shaped. */
export interface CompactCodecOptions {
  /** Leave `metadata.managedFields` out at the byte level (the source's transform is `dropManagedFields`). */
  dropManagedFields: boolean;
  /** A transform will run on each object: its metadata is frozen after it (`sealCompact`), not when built. */
  transformed: boolean;
}

/**
 * Reads objects from their bytes into the compact cache's form
 * (`CompactRecord`, see `compactObject.ts`) without `JSON.parse`ing
 * them whole: `jsonSpans` finds the members, only `metadata` is decoded
 * (its nested values shared across objects through `SpanInterner`), and
 * the rest is kept as text. One per source.
 */
export class CompactCodec {
  private readonly spans: JsonSpans = jsonSpans();
  private readonly interner = new SpanInterner();
  /** The decoded objects' cache and the body slabs, shared by the codec's records. */
  readonly shared: RecordsShared = { cache: new DecodedCache(), slabs: new BodySlabs() };
  private readonly small = new Map<string, string>();
  /** The last `apiVersion` and `kind` (in that order) when plain: nearly every object of a source has the same two. */
  private readonly lastSmall: (string | undefined)[] = [undefined, undefined];
  private readonly keyLists = new Map<string, readonly string[]>();
  /** Metadata's key sequences, each made with one literal. */
  private readonly shapes = new ObjectShapes();
  /** Per key number: where its recent strings begin in `recentShared` if its field is one of `SHARED_SCALARS`, else -1. */
  private readonly sharedKeys: number[] = [];
  /** `RECENT` slots per shared field: strings of it seen lately, each in the slot its bytes choose (`recentSlot`). */
  private readonly recentShared: (string | undefined)[] = [];
  /** Bounded as a metadata interner's strings: a source holds twice its bounds at most. */
  private readonly sharedStrings = new InternPool<string>(defaultInternerBounds.strings.entries, defaultInternerBounds.strings.chars);
  /** Scratch: where the body being built is in its bytes (`bodyRuns`). */
  private readonly runs: number[] = [];
  /** Scratch: the keys and values of the metadata being read. */
  private readonly memberKeys: string[] = [];
  private readonly memberValues: unknown[] = [];
  /** Metadata's keys seen so far (`keyNumber`), and where the next one is likely found among them. */
  private readonly keys: string[] = [];
  private keyHint = 0;

  /** Metadata's nested values the interner has just seen are stepped over by the scanner, not scanned. */
  private readonly known: KnownValue = (buf, spans, m, start, end) => {
    const parent = spans.data[m * FIELDS + PARENT] as number;
    return parent !== -1 && keyIs(buf, spans, parent, 'metadata') ? this.interner.knownEnd(buf, spans, m, start, end) : -1;
  };

  constructor(private readonly options: CompactCodecOptions) {}

  /**
   * A list item's bytes: its compact view, or (not an object) what
   * `JSON.parse` gives. Throws a SyntaxError for what is not JSON up to the
   * end of its metadata; the rest is checked when it is read.
   */
  item(buf: Buffer): unknown {
    if (!startsObject(buf, 0, buf.length)) return JSON.parse(buf.toString('utf8')) as unknown;
    let end = buf.length;
    while (end > 0 && isJsonSpace(buf[end - 1] as number)) end--;
    // The list parser found the item's end, balancing brackets and strings: past metadata it can stay unread.
    const lazy = buf[end - 1] === CLOSE_BRACE ? this.unreadTail(buf, 0, end) : undefined;
    if (lazy !== undefined) return lazy;
    this.interner.beginScan();
    const error = scanObject(buf, 0, buf.length, 2, this.spans);
    if (error !== undefined) throw new SyntaxError(error);
    return this.build(buf, -1, 0, this.spans.count, -1, -1);
  }

  /**
   * One watch line (`{"type":…,"object":{…}}`): the event with its object
   * in compact form for ADDED, MODIFIED and DELETED; decoded as usual for
   * anything else (bookmarks, errors, what is not an event, for the reader
   * to judge). Throws a SyntaxError for what is not JSON.
   */
  line(buf: Buffer, start: number, end: number): unknown {
    // Read in place in its chunk, not cut out (a view per line costs more than
    // its search): the scanner's searches past `end` are bounded, and those for
    // a backslash are remembered from one line of the chunk to the next.
    const fast = this.eventOfKube(buf, start, end);
    if (fast !== undefined) return fast;
    if (!startsObject(buf, start, end)) return JSON.parse(buf.toString('utf8', start, end)) as unknown;
    const spans = this.spans;
    this.interner.beginScan();
    const error = scanObject(buf, start, end, 3, spans);
    if (error !== undefined) throw new SyntaxError(error);
    let type: string | undefined;
    let object = -1;
    const d = spans.data;
    for (let m = 0; m < spans.count; m++) {
      if (d[m * FIELDS + DEPTH] !== 1) continue;
      if (keyIs(buf, spans, m, 'type')) {
        const value = this.memberScalar(buf, m);
        type = typeof value === 'string' ? value : undefined;
      } else if (keyIs(buf, spans, m, 'object')) object = m;
    }
    if (object === -1 || (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') || buf[d[object * FIELDS + VALUE_START] as number] !== OPEN_BRACE) {
      return JSON.parse(buf.toString('utf8', start, end)) as unknown;
    }
    // The object's members follow it, up to the next member of depth 1.
    let last = object + 1;
    while (last < spans.count && (d[last * FIELDS + DEPTH] as number) > 1) last++;
    return { type, object: this.build(buf, object, object + 1, last, -1, -1) };
  }

  /**
   * A watch event as kube writes one (`{"type":"MODIFIED","object":{…}}`, the
   * two fields of `metav1.WatchEvent`, in that order): its object is read as
   * `unreadTail` reads it. Undefined for any other line, which is read whole.
   */
  private eventOfKube(buf: Buffer, start: number, end: number): unknown {
    if (end - start < 30 || !bytesAre(buf, start, '{"type":"')) return undefined;
    const q = buf.indexOf(QUOTE, start + 9);
    // The type is one of three words: its closing quote is near, or the line is not of this form.
    if (q === -1 || q > start + 17 || !bytesAre(buf, q, '","object":{')) return undefined;
    // Told by its bytes: no string is made for it.
    const at = q - start;
    const type = at === 17 && bytesAre(buf, start + 9, 'MODIFIED') ? 'MODIFIED' : at === 14 && bytesAre(buf, start + 9, 'ADDED') ? 'ADDED' : at === 16 && bytesAre(buf, start + 9, 'DELETED') ? 'DELETED' : undefined;
    if (type === undefined) return undefined;
    // The line ends with the object's brace and the event's.
    let e = end - 1;
    while (e > q && isJsonSpace(buf[e] as number)) e--;
    if (buf[e] !== CLOSE_BRACE) return undefined;
    e--;
    while (e > q && isJsonSpace(buf[e] as number)) e--;
    if (buf[e] !== CLOSE_BRACE) return undefined;
    const object = this.unreadTail(buf, q + 11, e + 1);
    return object === undefined ? undefined : { type, object };
  }

  /**
   * The object in `buf[start, end)` (its closing brace at `end - 1`), read
   * up to the end of its `metadata`: what follows (`spec`, `status`) is kept
   * unread, to be checked and decoded when it is read. Undefined when that
   * cannot be trusted to hold only body members (an `apiVersion` or `kind`
   * neither before metadata nor surely absent after it): the caller reads
   * it whole.
   */
  private unreadTail(buf: Buffer, start: number, end: number): unknown {
    const spans = this.spans;
    this.interner.beginScan();
    const error = scanObject(buf, start, end, 2, spans, 'metadata', this.known);
    if (error !== undefined) throw new SyntaxError(error);
    const stopped = spans.stopped;
    if (stopped === -1) return this.build(buf, -1, 0, spans.count, -1, -1);
    let tail = stopped;
    const close = end - 1;
    while (tail < close && isJsonSpace(buf[tail] as number)) tail++;
    if (tail === close) return this.build(buf, -1, 0, spans.count, -1, -1);
    if (buf[tail] !== COMMA) throw new SyntaxError(`expected "," after metadata at byte ${tail - start}`);
    // A list item has neither (the list's are stamped on it): a search of the tail is cheaper than scanning it.
    for (let k = 0; k < STAMPED_KEYS.length; k++) {
      if (this.headHas(buf, STAMPED_KEYS[k] as string)) continue;
      const at = buf.indexOf(QUOTED_STAMPED_KEYS[k] as string, tail);
      if (at !== -1 && at < close) return undefined;
    }
    return this.build(buf, -1, 0, spans.count, tail + 1, end);
  }

  private headHas(buf: Buffer, key: string): boolean {
    const spans = this.spans;
    for (let m = 0; m < spans.count; m++) if (spans.data[m * FIELDS + DEPTH] === 1 && keyIs(buf, spans, m, key)) return true;
    return false;
  }

  /**
   * The compact view of the object whose members are `first..last` with
   * parent `parent`, and (`tailStart` not -1) whose body goes on, unread,
   * with the members in `buf[tailStart, tailEnd)` (its closing brace included).
   */
  private build(buf: Buffer, parent: number, first: number, last: number, tailStart: number, tailEnd: number): unknown {
    const spans = this.spans;
    const d = spans.data;
    let apiVersion: unknown;
    let kind: unknown;
    let metadata: unknown;
    const body: number[] = [];
    /** The body's members are one run of bytes (nothing else between them). */
    let contiguous = true;
    for (let m = first; m < last; m++) {
      if (d[m * FIELDS + PARENT] !== parent) continue;
      if (keyIs(buf, spans, m, 'metadata')) {
        metadata = this.metadata(buf, m, last);
        if (body.length > 0) contiguous = false;
      } else if (keyIs(buf, spans, m, 'apiVersion')) {
        apiVersion = this.smallValue(buf, m, 0);
        if (body.length > 0) contiguous = false;
      } else if (keyIs(buf, spans, m, 'kind')) {
        kind = this.smallValue(buf, m, 1);
        if (body.length > 0) contiguous = false;
      } else {
        body.push(m);
      }
    }
    let keys: readonly string[] | undefined = [];
    if (tailStart !== -1) keys = undefined;
    else if (body.length > 0) keys = this.keyList(buf, body);
    // Metadata's nested values come frozen from the interner and the rest are scalars: freezing it is one step, not a walk.
    if (!this.options.transformed && metadata !== null && typeof metadata === 'object') Object.freeze(metadata);
    const record = new CompactRecord(apiVersion, kind, metadata, keys, this.shared);
    if (tailStart === -1 && body.length === 0) return compactView(record);
    const runs = this.runs;
    bodyRuns(d, body, contiguous, tailStart, tailEnd, runs);
    // In a slab once the cache says which records are current, and not under a transform (which may keep the record as it was).
    if (this.shared.slabs.active && !this.options.transformed) writeBody(record, this.shared.slabs, buf, runs);
    else record.body = bodyText(buf, runs);
    return compactView(record);
  }

  /**
   * Metadata decoded member by member, in its order: scalars from their
   * bytes (a short string without escapes is sliced, not parsed), objects
   * and arrays through the interner; the object made at once, as its key
   * sequence's literal (`ObjectShapes`). Keys are the codec's shared strings
   * (`keyNumber`), so the interner's lookups by key hash nothing new.
   */
  private metadata(buf: Buffer, member: number, last: number): unknown {
    const spans = this.spans;
    const d = spans.data;
    const start = d[member * FIELDS + VALUE_START] as number;
    const end = d[member * FIELDS + VALUE_END] as number;
    // Not an object (the object cannot be keyed, `deltas()` reports it): frozen through, whatever it is.
    if (buf[start] !== OPEN_BRACE) return deepFreeze(JSON.parse(buf.toString('utf8', start, end)) as unknown);
    const drop = this.options.dropManagedFields;
    const depth = d[member * FIELDS + DEPTH] as number;
    const keys = this.memberKeys;
    const values = this.memberValues;
    let count = 0;
    let shape: ObjectShape | undefined = this.shapes.root;
    for (let m = member + 1; m < last && (d[m * FIELDS + DEPTH] as number) > depth; m++) {
      if (d[m * FIELDS + PARENT] !== member) continue;
      const k = this.keyNumber(buf, m);
      const key = k === -1 ? memberKey(buf, spans, m) : (this.keys[k] as string);
      const from = d[m * FIELDS + VALUE_START] as number;
      const to = d[m * FIELDS + VALUE_END] as number;
      const first = buf[from];
      const nested = first === OPEN_BRACE || first === OPEN_BRACKET;
      if (drop && key === 'managedFields') {
        // A managedFields that is not an array or object (null, say) is dropped all the same.
        if (nested) this.interner.skipped(key, buf, from, to);
        continue;
      }
      keys[count] = key;
      values[count] = nested ? this.interner.value(key, buf, from, to) : k !== -1 && (this.sharedKeys[k] as number) !== -1 ? this.sharedScalar(k, buf, from, to) : scalarValue(buf, from, to);
      count++;
      shape = k === -1 ? undefined : this.shapes.step(shape, k);
    }
    return this.shapes.make(shape, keys, values, count);
  }

  /**
   * The number of member `m`'s key among the codec's key strings (`keys`),
   * which it joins if it is new and there is room, else -1. Metadata's keys
   * are a handful, met in the same order object after object, so no string
   * is made per object.
   */
  private keyNumber(buf: Buffer, m: number): number {
    const keys = this.keys;
    const n = keys.length;
    for (let k = 0, at = this.keyHint; k < n; k++, at = at + 1 === n ? 0 : at + 1) {
      if (keyIs(buf, this.spans, m, keys[at] as string)) {
        this.keyHint = at + 1 === n ? 0 : at + 1;
        return at;
      }
    }
    if (n >= SHARED_KEYS) return -1;
    const key = memberKey(buf, this.spans, m);
    if (!isPlainAscii(key)) return -1;
    keys.push(key);
    if (SHARED_SCALARS.has(key)) {
      this.sharedKeys[n] = this.recentShared.length;
      for (let i = 0; i < RECENT; i++) this.recentShared.push(undefined);
    } else {
      this.sharedKeys[n] = -1;
    }
    return n;
  }

  /**
   * The scalar of a field many objects share (key number `k`: a namespace,
   * the pods of one ReplicaSet's `generateName`), as one string held for
   * all: a recent one when the bytes are its characters (no string is
   * made), else the pool's. Objects of a few namespaces come interleaved,
   * so each field keeps a few recent strings, one per slot its bytes choose,
   * not only the last. Only a plain string (printable ASCII, nothing
   * escaped) is kept as a recent one: bytes equal to its characters then
   * decode to it.
   */
  private sharedScalar(k: number, buf: Buffer, from: number, to: number): unknown {
    return recentOrShared(this.recentShared, (this.sharedKeys[k] as number) + recentSlot(buf, from, to), buf, from, to, this.pooled);
  }

  /** One string for each value of metadata's shared fields, from a bounded pool. */
  private readonly pooled = (value: string): string => {
    const shared = this.sharedStrings.get(value);
    if (shared !== undefined) return shared;
    this.sharedStrings.add(value, value);
    return value;
  };

  /** Member `m`'s value as `scalarValue` reads it: a plain string sliced, anything else parsed. */
  private memberScalar(buf: Buffer, m: number): unknown {
    const d = this.spans.data;
    return scalarValue(buf, d[m * FIELDS + VALUE_START] as number, d[m * FIELDS + VALUE_END] as number);
  }

  /** `apiVersion` (`slot` 0) or `kind` (1): decoded, and one string for each distinct value; the last one, when its bytes say it is, without decoding. */
  private smallValue(buf: Buffer, m: number, slot: 0 | 1): unknown {
    const d = this.spans.data;
    return recentOrShared(this.lastSmall, slot, buf, d[m * FIELDS + VALUE_START] as number, d[m * FIELDS + VALUE_END] as number, this.smallShared);
  }

  /** One string for each distinct `apiVersion` and `kind`, up to `SHARED_SMALL` of them. */
  private readonly smallShared = (value: string): string => {
    const shared = this.small.get(value);
    if (shared !== undefined) return shared;
    if (this.small.size < SHARED_SMALL) this.small.set(value, value);
    return value;
  };

  /** One frozen array per distinct list of body keys (duplicates removed: the last of a key wins, as in `JSON.parse`). */
  private keyList(buf: Buffer, members: number[]): readonly string[] {
    const keys: string[] = [];
    for (const m of members) keys.push(memberKey(buf, this.spans, m));
    const joined = keys.join('\u0000');
    const shared = this.keyLists.get(joined);
    if (shared !== undefined) return shared;
    const list = Object.freeze([...new Set(keys)]);
    if (this.keyLists.size < SHARED_SMALL) this.keyLists.set(joined, list);
    return list;
  }
}

/** Where member `m` begins: its key's opening quote. */
function memberStart(d: Int32Array, m: number): number {
  return (d[m * FIELDS + KEY_START] as number) - 1;
}

function memberEnd(d: Int32Array, m: number): number {
  return d[m * FIELDS + VALUE_END] as number;
}

/**
 * Where the body of `build` is in its bytes, as [start, end) pairs written
 * to `runs`: the members `body` (one run if `contiguous`), then (`tailStart`
 * not -1) the members left unread, up to the object's closing brace. The
 * body is these runs joined by commas, without the object's braces.
 */
function bodyRuns(d: Int32Array, body: number[], contiguous: boolean, tailStart: number, tailEnd: number, runs: number[]): void {
  runs.length = 0;
  if (body.length > 0 && contiguous) runs.push(memberStart(d, body[0] as number), memberEnd(d, body[body.length - 1] as number));
  else for (const m of body) runs.push(memberStart(d, m), memberEnd(d, m));
  if (tailStart !== -1) runs.push(tailStart, tailEnd - 1);
}

/** The body in `runs` as a string of one char per byte (see `CompactRecord.body`). */
function bodyText(buf: Buffer, runs: number[]): string {
  if (runs.length === 2) return buf.toString('latin1', runs[0] as number, runs[1] as number);
  const parts: string[] = [];
  for (let i = 0; i < runs.length; i += 2) parts.push(buf.toString('latin1', runs[i] as number, runs[i + 1] as number));
  return parts.join(',');
}

/** The body in `runs`, the same bytes as `bodyText`'s, written to a slab for `record`. */
function writeBody(record: CompactRecord, slabs: BodySlabs, buf: Buffer, runs: number[]): void {
  let length = runs.length / 2 - 1;
  for (let i = 0; i < runs.length; i += 2) length += (runs[i + 1] as number) - (runs[i] as number);
  slabs.place(record, length);
  const out = record.body as Buffer;
  let at = record.at;
  for (let i = 0; i < runs.length; i += 2) {
    if (i > 0) out[at++] = COMMA;
    at += buf.copy(out, at, runs[i] as number, runs[i + 1] as number);
  }
}

/**
 * The scalar JSON value in `buf[start, end)`, which the scanner has found
 * well formed: a string of printable ASCII without escapes is sliced
 * straight from the bytes (most of metadata's), anything else is parsed.
 */
function scalarValue(buf: Buffer, start: number, end: number): unknown {
  if (buf[start] === QUOTE && end - start >= 2) {
    let plain = true;
    for (let i = start + 1; i < end - 1; i++) {
      const c = buf[i] as number;
      if (c === BACKSLASH || c < 0x20 || c >= 0x7f) {
        plain = false;
        break;
      }
    }
    if (plain) return buf.toString('latin1', start + 1, end - 1);
  }
  return JSON.parse(buf.toString('utf8', start, end)) as unknown;
}

/** A key `keyIs` can compare byte for byte. */
function isPlainAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** Recent strings kept per shared field (a power of two). */
const RECENT = 32;

/**
 * Which of a field's `RECENT` slots the JSON value in `buf[from, to)` takes:
 * chosen by its length and last characters, so that the namespaces `team-1`
 * and `team-2`, or two ReplicaSets' `generateName`s, take different ones.
 * Any slot is correct, since a hit is checked byte for byte; a good choice
 * only makes more hits. The strings held are bounded: `RECENT` a field.
 */
function recentSlot(buf: Buffer, from: number, to: number): number {
  const length = to - from;
  if (length < 4) return length & (RECENT - 1);
  // The last three characters inside the quotes (a generateName ends in "-": the two before it tell them apart).
  const a = buf[to - 2] as number;
  const b = buf[to - 3] as number;
  const c = buf[to - 4] as number;
  return (length * 7 + a * 5 + b * 3 + c) & (RECENT - 1);
}

/**
 * The scalar JSON value in `buf[from, to)`: the string in `recent[slot]`
 * when the bytes are its characters (no string is made), else the value
 * decoded, a string through `share`, and kept in that slot if plain.
 */
function recentOrShared(recent: (string | undefined)[], slot: number, buf: Buffer, from: number, to: number, share: (value: string) => string): unknown {
  const hit = recent[slot];
  if (isStringOf(hit, buf, from, to)) return hit;
  const value = scalarValue(buf, from, to);
  if (typeof value !== 'string') return value;
  const shared = share(value);
  if (isPlainAscii(shared)) recent[slot] = shared;
  return shared;
}

/**
 * Whether the JSON value in `buf[from, to)` is the string `plain` (printable
 * ASCII, nothing to escape: `isPlainAscii`), told from its bytes: bytes equal
 * to its chars between quotes hold no escape, so they decode to it.
 */
function isStringOf(plain: string | undefined, buf: Buffer, from: number, to: number): plain is string {
  return plain !== undefined && buf[from] === QUOTE && to - from - 2 === plain.length && bytesAre(buf, from + 1, plain);
}

function bytesAre(buf: Buffer, at: number, ascii: string): boolean {
  if (at + ascii.length > buf.length) return false;
  for (let k = 0; k < ascii.length; k++) if (buf[at + k] !== ascii.charCodeAt(k)) return false;
  return true;
}

function startsObject(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    if (isJsonSpace(buf[i] as number)) continue;
    return buf[i] === OPEN_BRACE;
  }
  return false;
}

/**
 * After a transform of `input`: a compact object's metadata (and what is
 * in it) is frozen, as it is at once without one. The transform may have
 * returned a new object that carries the view's metadata (`{ ...view,
 * spec }`): the record's metadata it read is frozen then.
 */
export function sealCompact<T>(object: T, input: unknown): T {
  const record = compactRecordOf(object) ?? compactRecordOf(input);
  if (record !== undefined) deepFreeze(record.metadata);
  return object;
}
