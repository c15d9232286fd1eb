import { fnv1a64, formatShardBound, HASH_SPACE_END, inRange, type ShardRange } from './shardHash.js';
import type { KubeObject } from '../types.js';

/**
 * KEP-5866's `shardSelector` list option, parsed and written back:
 *
 *     selector := term ( "||" term )*
 *     term     := "shardRange" "(" path "," bound "," bound ")"
 *     path     := "object.metadata.uid" | "object.metadata.namespace"
 *     bound    := a quoted string literal (' or ") holding "0x" and hex digits, at most 2^64
 *
 * for example `shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')`. An
 * object matches when the FNV-1a hash of the named field lies in `[start, end)` of any term. Blanks
 * may surround every token. Choices where the KEP's text is silent: hex digits may be upper or
 * lower case (written back lower case, padded to 16 digits); a term with `start >= end` is an
 * error, not an empty range; terms of one selector may name different fields (each is tested on
 * its own field); the empty selector selects everything, as an empty label selector does.
 */

/** The fields a shard selector may hash: `metadata.uid` or `metadata.namespace`. */
export type ShardField = 'uid' | 'namespace';

/** One `shardRange(...)` term: a range of the hash of one field. */
export interface ShardTerm extends ShardRange {
  /** Which field of the object is hashed. */
  readonly field: ShardField;
}

/** A parsed shard selector: the terms it ORs; none means "everything". */
export interface ShardSelector {
  /** The `shardRange` terms, in the order written. */
  readonly terms: readonly ShardTerm[];
}

/**
 * A shard selector that cannot be parsed. `message` says what is wrong in kube's field-error
 * wording (`shardSelector: Invalid value: "<selector>": <detail>`), so the API server can answer it
 * as a 400 and a client can show it as is.
 */
export class ShardSelectorError extends Error {
  override readonly name = 'ShardSelectorError';

  constructor(
    /** The selector as given. */
    readonly selector: string,
    /** What is wrong with it, e.g. `unsupported field path "object.metadata.name": …`. */
    readonly detail: string,
    /** Offset (0-based, UTF-16 code units) where the problem starts. */
    readonly position: number,
  ) {
    super(`shardSelector: Invalid value: ${JSON.stringify(selector)}: ${detail} (at position ${position})`);
  }
}

const FIELD_PATHS: Readonly<Record<ShardField, string>> = { uid: 'object.metadata.uid', namespace: 'object.metadata.namespace' };
const SUPPORTED = `supported paths are "${FIELD_PATHS.uid}" and "${FIELD_PATHS.namespace}"`;

/** The field path the grammar writes for `field`. */
export function shardFieldPath(field: ShardField): string {
  return FIELD_PATHS[field];
}

/** The value of `field` that is hashed; a cluster-scoped object's namespace is the empty string. */
export function shardFieldValue(object: KubeObject, field: ShardField): string {
  return (field === 'uid' ? object.metadata.uid : object.metadata.namespace) ?? '';
}

/** Whether `object` falls in `selector` (every object does when it has no terms). */
export function matchesShardSelector(selector: ShardSelector, object: KubeObject): boolean {
  if (selector.terms.length === 0) return true;
  let uidHash: bigint | undefined;
  let namespaceHash: bigint | undefined;
  for (const term of selector.terms) {
    const hash =
      term.field === 'uid'
        ? (uidHash ??= fnv1a64(shardFieldValue(object, 'uid')))
        : (namespaceHash ??= fnv1a64(shardFieldValue(object, 'namespace')));
    if (inRange(term, hash)) return true;
  }
  return false;
}

/** A selector of `ranges` over one field, as a replica that owns those ranges would send it. */
export function shardSelectorOf(field: ShardField, ranges: readonly ShardRange[]): ShardSelector {
  return { terms: ranges.map((r) => ({ field, start: r.start, end: r.end })) };
}

/** Writes `selector` in the grammar, terms joined by ` || `; parsing the result gives it back. */
export function formatShardSelector(selector: ShardSelector): string {
  return selector.terms
    .map((t) => `shardRange(${FIELD_PATHS[t.field]}, '${formatShardBound(t.start)}', '${formatShardBound(t.end)}')`)
    .join(' || ');
}

/** Parses `text` (see the module comment); throws a {@link ShardSelectorError} naming what is wrong. */
export function parseShardSelector(text: string): ShardSelector {
  const p = new Cursor(text);
  p.blanks();
  if (p.atEnd()) return { terms: [] };
  const terms: ShardTerm[] = [];
  for (;;) {
    terms.push(parseTerm(p));
    p.blanks();
    if (p.atEnd()) return { terms };
    if (!p.take('||')) p.fail(`found ${p.shown()}, expected "||" or the end of the selector`);
    p.blanks();
  }
}

function parseTerm(p: Cursor): ShardTerm {
  const at = p.pos;
  const name = p.word();
  if (name !== 'shardRange') {
    p.fail(name === '' ? `found ${p.shown()}, expected "shardRange("` : `unknown function "${name}": only shardRange is supported`, at);
  }
  p.expect('(');
  const field = parseField(p);
  p.expect(',');
  const start = parseBound(p, 'start');
  p.expect(',');
  const end = parseBound(p, 'end');
  p.expect(')');
  if (start >= end) p.fail(`start ${formatShardBound(start)} must be less than end ${formatShardBound(end)}`, at);
  return { field, start, end };
}

function parseField(p: Cursor): ShardField {
  p.blanks();
  const at = p.pos;
  const path = p.word();
  if (path === FIELD_PATHS.uid) return 'uid';
  if (path === FIELD_PATHS.namespace) return 'namespace';
  if (path === 'metadata.uid' || path === 'metadata.namespace') {
    p.fail(`field path "${path}" must be rooted at object, as in "object.${path}"`, at);
  }
  return p.fail(path === '' ? `found ${p.shown()}, expected a field path (${SUPPORTED})` : `unsupported field path "${path}": ${SUPPORTED}`, at);
}

function parseBound(p: Cursor, which: 'start' | 'end'): bigint {
  p.blanks();
  const at = p.pos;
  const quote = p.peek();
  if (quote !== "'" && quote !== '"') {
    p.fail(`found ${p.shown()}, expected the ${which} as a quoted hex string such as '0x8000000000000000'`);
  }
  p.pos++;
  const close = p.text.indexOf(quote, p.pos);
  if (close < 0) p.fail(`unterminated string literal for the ${which}`, at);
  const literal = p.text.slice(p.pos, close);
  p.pos = close + 1;
  if (!literal.startsWith('0x')) p.fail(`${which} ${JSON.stringify(literal)} must be a hex number starting with "0x"`, at);
  const digits = literal.slice(2);
  if (!/^[0-9a-fA-F]+$/.test(digits)) p.fail(`${which} ${JSON.stringify(literal)} is not a hex number`, at);
  const value = BigInt(literal.toLowerCase());
  if (value > HASH_SPACE_END) p.fail(`${which} ${JSON.stringify(literal)} is beyond the hash space [0x0, 0x10000000000000000]`, at);
  return value;
}

/** A position in the selector text, and the small steps the parser takes over it. */
class Cursor {
  pos = 0;

  constructor(readonly text: string) {}

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  peek(): string {
    return this.text.charAt(this.pos);
  }

  blanks(): void {
    while (this.pos < this.text.length && /\s/.test(this.text.charAt(this.pos))) this.pos++;
  }

  /** An identifier or dotted path at the cursor (possibly empty). */
  word(): string {
    const m = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/.exec(this.text.slice(this.pos));
    const w = m?.[0] ?? '';
    this.pos += w.length;
    return w;
  }

  take(token: string): boolean {
    if (!this.text.startsWith(token, this.pos)) return false;
    this.pos += token.length;
    return true;
  }

  expect(token: string): void {
    this.blanks();
    if (!this.take(token)) this.fail(`found ${this.shown()}, expected "${token}"`);
  }

  /** What is at the cursor, quoted for an error message. */
  shown(): string {
    return this.atEnd() ? 'the end of the selector' : JSON.stringify(this.text.slice(this.pos, this.pos + 12));
  }

  fail(detail: string, at: number = this.pos): never {
    throw new ShardSelectorError(this.text, detail, at);
  }
}
