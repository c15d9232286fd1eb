import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, isJsonSpace, OPEN_BRACE, OPEN_BRACKET, QUOTE } from '../util/jsonBytes.js';
import { uniformBuffer } from './uniformBuffer.js';

/** What a list answer says besides its items: read once the whole answer has arrived. */
export interface ListEnvelope {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { continue?: unknown; resourceVersion?: unknown; shardInfo?: unknown };
}

/** The list's `kind`, `apiVersion` and `metadata`, as far as they are known when an item arrives. */
export interface ListHead {
  apiVersion?: unknown;
  kind?: unknown;
  /** Read for `shardInfo` (KEP-5866): kube sends it before the items. */
  metadata?: unknown;
}

/** An item too large to keep: skipped, the list goes on. `head` is its first bytes, for the report. */
export interface OversizedItem {
  bytes: number;
  head: string;
}

/** Where the parser hands what it reads; `item` returns true to stop reading. */
export interface ListBodyHandler {
  item(entry: unknown, head: ListHead): boolean;
  oversized(item: OversizedItem): void;
}

/** The default largest item kept: anything bigger is no Kubernetes object anyone meant to store. */
export const MAX_OBJECT_BYTES = 128 * 1024 * 1024;

/** The envelope (everything but the items) may hold this much; more is not a list. */
const MAX_ENVELOPE_BYTES = 16 * 1024 * 1024;

const HEAD_SHOWN = 200;

/**
 * Parses a list answer (`{"kind":…,"metadata":…,"items":[…]}`) as its bytes
 * arrive: each element of the top-level `items` array is cut out of the
 * stream and handed over, `JSON.parse`d, as soon as its last byte is in;
 * nothing holds the whole answer. Memory while listing is one item plus the
 * envelope (the answer without its items), whatever the page size.
 *
 * It tracks only what it must to find item boundaries: nesting depth,
 * whether it is inside a string, and an escape. The envelope is kept with
 * `"items":[]` in place of the items and parsed at the end (`end()`), so
 * `metadata.continue` and `resourceVersion` may come before or after the
 * items. Items are handed over with the list's `kind` and `apiVersion` as
 * far as the envelope read so far has them; kube sends those first, and if
 * a server sends them after the items, the items wait for the end.
 *
 * An item larger than `maxItemBytes` is not kept: its bytes are dropped as
 * they pass, it is reported through `oversized` once it ends, and the items
 * after it are read as usual. Malformed JSON anywhere is reported by `end()`
 * (or `error`, for an item that does not parse) rather than thrown.
 */
export class ListBodyParser {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Inside the top-level `items` array (depth 2 there). */
  private inItems = false;
  private itemsSeen = false;
  /** Depth at which the current item began, or -1 between items. */
  private itemStart = -1;
  /** The current item is a bare scalar (number, true, null): it ends at a comma, `]` or space. */
  private scalarItem = false;
  private itemPieces: Buffer[] = [];
  private itemBytes = 0;
  private itemHead = '';
  private envelopePieces: Buffer[] = [];
  private envelopeBytes = 0;
  /** The last string at depth 1 and whether a colon followed it: the key being read. */
  private keyStart = -1;
  private keyPieces: Buffer[] = [];
  private lastKey: string | undefined;
  private key: string | undefined;
  private head: ListHead | undefined;
  private held: unknown[] = [];
  private stopped = false;
  private started = false;
  /** Why the answer cannot be a list, once known. */
  error: string | undefined;

  constructor(
    private readonly handler: ListBodyHandler,
    private readonly maxItemBytes: number = MAX_OBJECT_BYTES,
    /** Decodes an item's bytes in place of `JSON.parse` (the compact cache's codec); throws as `JSON.parse` does. */
    private readonly decode?: (bytes: Buffer) => unknown,
  ) {}

  /** True once the handler asked to stop, or the answer was found not to be a list. */
  get done(): boolean {
    return this.stopped || this.error !== undefined;
  }

  push(received: Buffer): void {
    if (this.done) return;
    const chunk = uniformBuffer(received);
    const n = chunk.length;
    let i = 0;
    // Where the bytes of this chunk that belong to the envelope (or to the current item) began.
    let envelopeFrom = this.itemStart === -1 ? 0 : -1;
    let itemFrom = this.itemStart === -1 ? -1 : 0;
    let keyFrom = this.keyStart === -1 ? -1 : 0;
    while (i < n) {
      if (this.itemStart !== -1 && this.depth > this.itemStart) {
        // Inside an object or array item: almost every byte of a list is here.
        const itemEnd = this.scanItem(chunk, i, n);
        if (itemEnd === -1) break;
        this.takeItem(chunk, itemFrom, itemEnd);
        itemFrom = -1;
        envelopeFrom = itemEnd;
        if (this.done) return;
        i = itemEnd;
        continue;
      }
      const c = chunk[i] as number;
      if (this.inString || this.itemStart !== -1) {
        // Where the current item ended (exclusive), if this byte ended it.
        let itemEnd = -1;
        if (this.inString) {
          if (this.escaped) this.escaped = false;
          else if (c === BACKSLASH) this.escaped = true;
          else if (c === QUOTE) {
            this.inString = false;
            if (keyFrom !== -1) {
              this.keyPieces.push(chunk.subarray(keyFrom, i));
              this.lastKey = Buffer.concat(this.keyPieces).toString('utf8');
              this.keyPieces = [];
              this.keyStart = -1;
              keyFrom = -1;
            }
            // A string item ends with its closing quote.
            if (this.itemStart !== -1 && this.depth === this.itemStart) itemEnd = i + 1;
          }
        } else if (this.scalarItem) {
          // The separator after a scalar is read again, between items.
          if (c === COMMA || c === CLOSE_BRACKET || isJsonSpace(c)) itemEnd = i;
        } else if (c === QUOTE) this.inString = true;
        else if (c === OPEN_BRACE || c === OPEN_BRACKET) this.depth++;
        else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
          this.depth--;
          if (this.depth === this.itemStart) itemEnd = i + 1;
        }
        if (itemEnd !== -1) {
          this.takeItem(chunk, itemFrom, itemEnd);
          itemFrom = -1;
          envelopeFrom = itemEnd;
          if (this.done) return;
          i = itemEnd;
        } else {
          i++;
        }
        continue;
      }
      if (isJsonSpace(c)) {
        i++;
        continue;
      }
      if (!this.started) {
        this.started = true;
        if (c !== OPEN_BRACE) {
          this.error = 'the answer is not a JSON object';
          return;
        }
      }
      if (this.inItems && this.depth === 2) {
        if (c === COMMA) {
          // Separators between items stay out of the envelope, which keeps "items":[].
          this.addEnvelope(chunk, envelopeFrom, i);
          envelopeFrom = i + 1;
          i++;
          continue;
        }
        if (c === CLOSE_BRACKET) {
          this.inItems = false;
          this.depth--;
          i++;
          continue;
        }
        // An item begins.
        this.addEnvelope(chunk, envelopeFrom, i);
        envelopeFrom = -1;
        itemFrom = i;
        this.itemStart = this.depth;
        this.itemPieces = [];
        this.itemBytes = 0;
        this.itemHead = '';
        if (c === QUOTE) this.inString = true;
        else if (c === OPEN_BRACE || c === OPEN_BRACKET) this.depth++;
        else this.scalarItem = true;
        i++;
        continue;
      }
      if (c === QUOTE) {
        this.inString = true;
        if (this.depth === 1) {
          this.keyStart = i + 1;
          keyFrom = i + 1;
          this.keyPieces = [];
        }
      } else if (c === COLON) {
        if (this.depth === 1) this.key = this.lastKey;
      } else if (c === COMMA) {
        if (this.depth === 1) this.key = undefined;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        this.depth++;
        if (c === OPEN_BRACKET && this.depth === 2 && this.key === 'items' && !this.itemsSeen) {
          this.inItems = true;
          this.itemsSeen = true;
          this.addEnvelope(chunk, envelopeFrom, i + 1);
          envelopeFrom = i + 1;
          this.readHead();
          if (this.done) return;
        }
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        this.depth--;
      }
      i++;
    }
    if (keyFrom !== -1) this.keyPieces.push(chunk.subarray(keyFrom));
    if (itemFrom !== -1) this.addItemPiece(chunk.subarray(itemFrom));
    if (envelopeFrom !== -1) this.addEnvelope(chunk, envelopeFrom, n);
  }

  /**
   * Reads on from `from` inside an object or array item until the item
   * closes: returns the index after its last byte, or -1 if the chunk ended
   * first. The state lives in locals while it runs (a loop over fields
   * costs several times as much per byte), and only quotes, backslashes
   * and brackets are looked at: nothing else can end an item.
   */
  private scanItem(chunk: Buffer, from: number, n: number): number {
    const stop = this.itemStart;
    let depth = this.depth;
    let inString = this.inString;
    let escaped = this.escaped;
    let end = -1;
    let i = from;
    while (i < n) {
      if (escaped) {
        escaped = false;
        i++;
        continue;
      }
      let c = chunk[i] as number;
      if (inString) {
        while (c !== QUOTE && c !== BACKSLASH && ++i < n) c = chunk[i] as number;
        if (i === n) break;
        if (c === BACKSLASH) escaped = true;
        else inString = false;
        i++;
        continue;
      }
      i++;
      if (c === QUOTE) inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === stop) {
        end = i;
        break;
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return end;
  }

  /**
   * The answer ended: returns its envelope, or why it is no list (not JSON,
   * cut short, no object). Items held for a late `kind` are handed over first.
   */
  end(): { envelope: ListEnvelope } | { error: string } {
    if (this.error !== undefined) return { error: this.error };
    if (this.itemStart !== -1 && this.scalarItem) {
      this.takeItem(Buffer.alloc(0), -1, 0);
      if (this.error !== undefined) return { error: this.error };
    }
    if (this.itemStart !== -1 || this.depth !== 0 || this.inString || !this.started) return { error: 'the answer ended before the list did' };
    let envelope: unknown;
    try {
      envelope = JSON.parse(Buffer.concat(this.envelopePieces, this.envelopeBytes).toString('utf8'));
    } catch (err) {
      return { error: `the answer is not JSON: ${(err as Error).message}` };
    }
    if (envelope === null || typeof envelope !== 'object' || Array.isArray(envelope)) return { error: 'the answer is not a JSON object' };
    const items = (envelope as { items?: unknown }).items;
    if (items !== undefined && items !== null && !Array.isArray(items)) return { error: 'its "items" is not an array' };
    const { items: _items, ...rest } = envelope as ListEnvelope & { items?: unknown };
    for (const entry of this.held.splice(0)) {
      if (this.handler.item(entry, rest)) {
        this.stopped = true;
        break;
      }
    }
    return { envelope: rest };
  }

  /** The envelope as read so far, closed off: the `kind` and `apiVersion` items are stamped with. */
  private readHead(): void {
    try {
      const sofar = JSON.parse(`${Buffer.concat(this.envelopePieces, this.envelopeBytes).toString('utf8')}]}`) as ListHead;
      if (sofar.kind !== undefined && sofar.apiVersion !== undefined) this.head = { kind: sofar.kind, apiVersion: sofar.apiVersion, metadata: sofar.metadata };
    } catch {
      // Not parseable yet (a key after items would close it otherwise): items wait for the end.
    }
  }

  private addEnvelope(chunk: Buffer, from: number, to: number): void {
    if (from === -1 || to <= from) return;
    this.envelopeBytes += to - from;
    if (this.envelopeBytes > MAX_ENVELOPE_BYTES) {
      this.error = `the answer holds more than ${MAX_ENVELOPE_BYTES} bytes outside its "items" array`;
      return;
    }
    this.envelopePieces.push(chunk.subarray(from, to));
  }

  private addItemPiece(piece: Buffer): void {
    const before = this.itemBytes;
    this.itemBytes += piece.length;
    if (this.itemBytes <= this.maxItemBytes) {
      this.itemPieces.push(piece);
      return;
    }
    // Past the cap the bytes are only counted: the item will be skipped, and its first bytes are all the report needs.
    if (before <= this.maxItemBytes) {
      this.itemPieces.push(piece);
      this.itemHead = headOf(this.itemPieces);
    }
    this.itemPieces = [];
  }

  private takeItem(chunk: Buffer, from: number, to: number): void {
    this.itemStart = -1;
    this.scalarItem = false;
    if (from !== -1 && this.itemBytes === 0 && to - from <= this.maxItemBytes) {
      // The whole item is in this chunk (most are): decoded straight from it, no piece kept.
      this.parseItem(chunk, from, to);
      return;
    }
    if (from !== -1) this.addItemPiece(chunk.subarray(from, to));
    const bytes = this.itemBytes;
    const pieces = this.itemPieces;
    this.itemPieces = [];
    this.itemBytes = 0;
    if (bytes > this.maxItemBytes) {
      this.handler.oversized({ bytes, head: this.itemHead });
      return;
    }
    const whole = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces, bytes);
    this.parseItem(whole, 0, whole.length);
  }

  private parseItem(buffer: Buffer, from: number, to: number): void {
    let entry: unknown;
    try {
      if (this.decode !== undefined) entry = this.decode(from === 0 && to === buffer.length ? buffer : buffer.subarray(from, to));
      else entry = JSON.parse(buffer.toString('utf8', from, to));
    } catch (err) {
      this.error = `an item is not JSON: ${(err as Error).message}`;
      return;
    }
    if (this.head === undefined) {
      this.held.push(entry);
      return;
    }
    if (this.handler.item(entry, this.head)) this.stopped = true;
  }
}

/** The first bytes of an item, decoded, for the report of one too large to keep. */
function headOf(pieces: Buffer[]): string {
  const head: Buffer[] = [];
  let bytes = 0;
  for (const piece of pieces) {
    if (bytes >= HEAD_SHOWN) break;
    const part = piece.subarray(0, HEAD_SHOWN - bytes);
    head.push(part);
    bytes += part.length;
  }
  return Buffer.concat(head, bytes).toString('utf8');
}
