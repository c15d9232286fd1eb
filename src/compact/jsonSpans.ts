/**
 * Where the members of a JSON object are in its bytes, down to a depth,
 * found without decoding it: what the compact cache (`compactCodec.ts`)
 * cuts objects up with, so that only the parts it keeps decoded are ever
 * `JSON.parse`d.
 *
 * It checks the grammar as it goes (tokens in the right order, the
 * literals `true`, `false`, `null` and numbers spelled right, brackets
 * balanced, nothing after the end), so text it accepts is JSON except for
 * what it does not look into: the inside of strings (an escape such as
 * `\x`, or a raw control character, is found only when that string is
 * decoded).
 */
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, isJsonSpace, OPEN_BRACE, OPEN_BRACKET, QUOTE } from '../util/jsonBytes.js';


/** What the scanner expects next. */
const enum Want {
  /** A value (after a colon, or as the whole text). */
  Value,
  /** A value or `]` (after `[`). */
  ValueOrClose,
  /** A key or `}` (after `{`). */
  KeyOrClose,
  /** A key (after a comma in an object). */
  Key,
  Colon,
  /** A comma or the container's closing bracket. */
  CommaOrClose,
  /** Nothing but spaces (the top-level value ended). */
  End,
}

/**
 * The members found, in the order they appear (a member's children follow
 * it). Member `m`'s fields are at `m * FIELDS` in `data`: depth (1 for the
 * top object's own members), parent member (-1 at depth 1), key start and
 * end (inside the quotes), value start and end (end exclusive).
 */
export interface JsonSpans {
  data: Int32Array;
  count: number;
  /**
   * The next backslash at or after `slashFrom` in `slashIn` (scratch): a
   * scan of the same bytes from there on (the next line of a chunk) need
   * not search for it again.
   */
  slash: number;
  slashFrom: number;
  slashIn: Uint8Array | undefined;
  /** With `stopAfter`: where the scan stopped (just after that member's value), or -1 if it read to the end. */
  stopped: number;
  /**
   * The open containers (scratch), innermost last: 1 for an object, 0 for an
   * array; and the member whose value each is, if recorded, else -1 (-2 for
   * the top object). Kept between scans, so that a scan allocates nothing.
   */
  kinds: Int32Array;
  owners: Int32Array;
}

export const FIELDS = 6;
export const DEPTH = 0;
export const PARENT = 1;
export const KEY_START = 2;
export const KEY_END = 3;
export const VALUE_START = 4;
export const VALUE_END = 5;

/** Spans with room for `members`, to be reused across scans (it grows as needed). */
export function jsonSpans(members = 64): JsonSpans {
  return { data: new Int32Array(members * FIELDS), count: 0, slash: -1, slashFrom: 0, slashIn: undefined, stopped: -1, kinds: new Int32Array(16), owners: new Int32Array(16) };
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The end of the number that starts at `i`, or -1 if it is not one (JSON's grammar: no leading zeros, no bare dot). */
function numberEnd(buf: Uint8Array, i: number, end: number): number {
  if (buf[i] === 0x2d) i++;
  if (i >= end || !isDigit(buf[i] as number)) return -1;
  if (buf[i] === 0x30) i++;
  else while (i < end && isDigit(buf[i] as number)) i++;
  if (i < end && buf[i] === 0x2e) {
    i++;
    if (i >= end || !isDigit(buf[i] as number)) return -1;
    while (i < end && isDigit(buf[i] as number)) i++;
  }
  if (i < end && (buf[i] === 0x65 || buf[i] === 0x45)) {
    i++;
    if (i < end && (buf[i] === 0x2b || buf[i] === 0x2d)) i++;
    if (i >= end || !isDigit(buf[i] as number)) return -1;
    while (i < end && isDigit(buf[i] as number)) i++;
  }
  return i;
}

/** The end of `word` at `i`, or -1. */
function wordEnd(buf: Uint8Array, i: number, end: number, word: string): number {
  if (i + word.length > end) return -1;
  for (let k = 0; k < word.length; k++) if (buf[i + k] !== word.charCodeAt(k)) return -1;
  return i + word.length;
}

/** No backslash after this point (`JsonSpans.slash`). */
const NONE = 0x7fffffff;

/**
 * The index of the quote that closes the string whose opening quote is at
 * `open`, or -1. `indexOf` finds quotes and backslashes at memchr speed (a
 * byte loop in JavaScript is several times slower); `spans.slash`, the next
 * backslash found, saves searching for one per string (most objects have
 * none, or a few).
 */
function stringEnd(buf: Buffer, open: number, end: number, spans: JsonSpans): number {
  let from = open + 1;
  for (;;) {
    const q = buf.indexOf(QUOTE, from);
    if (q === -1 || q >= end) return -1;
    let slash = spans.slash;
    if (slash < from) {
      slash = buf.indexOf(BACKSLASH, from);
      spans.slash = slash = slash === -1 ? NONE : slash;
      spans.slashFrom = from;
    }
    if (slash > q) return q;
    // An escape before the quote: the character after the backslash is not looked at.
    from = slash + 2;
  }
}

/**
 * Where the object or array value of member `member`, starting at `start`,
 * ends, when the caller knows it without a scan (its bytes are those of a
 * value it read before: an object's or array's text is complete at its
 * closing bracket, so equal bytes are the same value), else -1.
 */
export type KnownValue = (buf: Buffer, spans: JsonSpans, member: number, start: number, end: number) => number;

/**
 * Scans `buf[start, end)`, which must hold one JSON object, into `spans`:
 * every member down to `maxDepth` (1: the object's own members; 2: theirs
 * too, for members whose value is an object; and so on). Returns undefined,
 * or why the text is not a JSON object. With `stopAfter`, the scan stops
 * once the value of the top object's member of that key has ended
 * (`spans.stopped`): what follows is not looked at. With `skip`, a member's
 * value it recognizes (before `end`) is stepped over unread. Searches may
 * read past `end`: a backslash found there is remembered for the next scan
 * of the same buffer, which must not have been written to in between.
 */
export function scanObject(
  buf: Buffer,
  start: number,
  end: number,
  maxDepth: number,
  spans: JsonSpans,
  stopAfter?: string,
  skip?: KnownValue,
): string | undefined {
  spans.count = 0;
  // What a scan of these bytes found from an earlier point holds from here too.
  if (spans.slashIn !== buf || start < spans.slashFrom) {
    spans.slash = -1;
    spans.slashIn = buf;
  }
  spans.stopped = -1;
  /** The member of depth 1 whose key is `stopAfter`, once read. */
  let stopMember = -1;
  // An object's members are recorded only under a recorded member (`spans.owners`).
  let kinds = spans.kinds;
  let owners = spans.owners;
  /** How many containers are open. */
  let depth = 0;
  let want = Want.Value;
  /** The member whose value comes next (after its colon), or -1. */
  let pending = -1;
  let i = start;
  while (i < end) {
    const c = buf[i] as number;
    if (isJsonSpace(c)) {
      i++;
      continue;
    }
    switch (want) {
      case Want.Key:
      case Want.KeyOrClose: {
        if (c === CLOSE_BRACE && want === Want.KeyOrClose) {
          want = close(spans, owners, depth--, i);
          i++;
          if (stopsAt(spans, depth, stopMember, i)) return undefined;
          continue;
        }
        if (c !== QUOTE) return `expected a key at byte ${i - start}`;
        const q = stringEnd(buf, i, end, spans);
        if (q === -1) return `unterminated string at byte ${i - start}`;
        const owner = owners[depth - 1] as number;
        if (depth <= maxDepth && (depth === 1 || owner !== -1)) {
          pending = add(spans, depth, depth === 1 ? -1 : owner, i + 1, q);
          if (depth === 1 && stopAfter !== undefined && keyIs(buf, spans, pending, stopAfter)) stopMember = pending;
        } else {
          pending = -1;
        }
        want = Want.Colon;
        i = q + 1;
        continue;
      }
      case Want.Colon:
        if (c !== COLON) return `expected ":" at byte ${i - start}`;
        want = Want.Value;
        i++;
        continue;
      case Want.CommaOrClose:
        if (c === COMMA) {
          want = kinds[depth - 1] === 1 ? Want.Key : Want.Value;
          i++;
          continue;
        }
        if ((c === CLOSE_BRACE && kinds[depth - 1] === 1) || (c === CLOSE_BRACKET && kinds[depth - 1] === 0)) {
          want = close(spans, owners, depth--, i);
          i++;
          if (stopsAt(spans, depth, stopMember, i)) return undefined;
          continue;
        }
        return `expected "," or the end of ${kinds[depth - 1] === 1 ? 'an object' : 'an array'} at byte ${i - start}`;
      case Want.End:
        return `unexpected text after the object at byte ${i - start}`;
      case Want.Value:
      case Want.ValueOrClose: {
        if (c === CLOSE_BRACKET && want === Want.ValueOrClose) {
          want = close(spans, owners, depth--, i);
          i++;
          if (stopsAt(spans, depth, stopMember, i)) return undefined;
          continue;
        }
        if (depth === 0 && c !== OPEN_BRACE) return 'not a JSON object';
        // The member this value belongs to (only right after its colon).
        const member = want === Want.Value && depth > 0 && kinds[depth - 1] === 1 ? pending : -1;
        pending = -1;
        if (member !== -1) spans.data[member * FIELDS + VALUE_START] = i;
        if (c === OPEN_BRACE || c === OPEN_BRACKET) {
          const known = member !== -1 && skip !== undefined ? skip(buf, spans, member, i, end) : -1;
          if (known !== -1) {
            spans.data[member * FIELDS + VALUE_END] = known;
            want = Want.CommaOrClose;
            i = known;
            continue;
          }
          if (depth === kinds.length) {
            kinds = spans.kinds = grown(kinds);
            owners = spans.owners = grown(owners);
          }
          kinds[depth] = c === OPEN_BRACE ? 1 : 0;
          // The top object is no member's value (-2); one in an array is no recorded member's (-1).
          owners[depth] = depth === 0 ? -2 : member;
          depth++;
          want = c === OPEN_BRACE ? Want.KeyOrClose : Want.ValueOrClose;
          i++;
          continue;
        }
        let after: number;
        if (c === QUOTE) {
          const q = stringEnd(buf, i, end, spans);
          if (q === -1) return `unterminated string at byte ${i - start}`;
          after = q + 1;
        } else if (c === 0x74) after = wordEnd(buf, i, end, 'true');
        else if (c === 0x66) after = wordEnd(buf, i, end, 'false');
        else if (c === 0x6e) after = wordEnd(buf, i, end, 'null');
        else after = numberEnd(buf, i, end);
        if (after === -1) return `not a JSON value at byte ${i - start}`;
        if (member !== -1) spans.data[member * FIELDS + VALUE_END] = after;
        want = Want.CommaOrClose;
        i = after;
        if (member !== -1 && member === stopMember) {
          spans.stopped = after;
          return undefined;
        }
        continue;
      }
    }
  }
  if (want === Want.Value && depth === 0) return 'no JSON object';
  if (want !== Want.End) return 'the text ended before the object did';
  return undefined;
}

/** The innermost of `depth` open containers closing at `at`: its member's value ends here. Returns what is wanted next. */
function close(spans: JsonSpans, owners: Int32Array, depth: number, at: number): Want {
  const owner = owners[depth - 1] as number;
  if (owner >= 0) spans.data[owner * FIELDS + VALUE_END] = at + 1;
  return depth === 1 ? Want.End : Want.CommaOrClose;
}

/** `array`'s contents in one twice its length. */
function grown(array: Int32Array): Int32Array {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}

function add(spans: JsonSpans, depth: number, parent: number, keyStart: number, keyEnd: number): number {
  const m = spans.count++;
  if ((m + 1) * FIELDS > spans.data.length) spans.data = grown(spans.data);
  const at = m * FIELDS;
  const d = spans.data;
  d[at + DEPTH] = depth;
  d[at + PARENT] = parent;
  d[at + KEY_START] = keyStart;
  d[at + KEY_END] = keyEnd;
  d[at + VALUE_START] = -1;
  d[at + VALUE_END] = -1;
  return m;
}

/** The key of member `m`, decoded (escapes included). */
export function memberKey(buf: Buffer, spans: JsonSpans, m: number): string {
  const at = m * FIELDS;
  const from = spans.data[at + KEY_START] as number;
  const to = spans.data[at + KEY_END] as number;
  for (let i = from; i < to; i++) if (buf[i] === BACKSLASH) return JSON.parse(buf.toString('utf8', from - 1, to + 1)) as string;
  return buf.toString('utf8', from, to);
}

/** Whether member `m`'s key is exactly `key` (ASCII, unescaped), without making a string. */
export function keyIs(buf: Buffer, spans: JsonSpans, m: number, key: string): boolean {
  const at = m * FIELDS;
  const from = spans.data[at + KEY_START] as number;
  if ((spans.data[at + KEY_END] as number) - from !== key.length) return false;
  for (let k = 0; k < key.length; k++) if (buf[from + k] !== key.charCodeAt(k)) return false;
  return true;
}

/** Whether the member the scan stops after (`stopMember`, -1 for none) has just closed at `i`, at the top level: if so, marks `spans` stopped there. */
function stopsAt(spans: JsonSpans, depth: number, stopMember: number, i: number): boolean {
  if (stopMember === -1 || depth !== 1 || spans.data[stopMember * FIELDS + VALUE_END] !== i) return false;
  spans.stopped = i;
  return true;
}
