import { uniformBuffer } from './uniformBuffer.js';

/** One decoded line of a watch response. */
export interface WatchLine {
  type: string;
  object: unknown;
}

/**
 * A line that is not a watch event. It says what is wrong, where the line
 * starts in the response and how long it is, never what it holds: a line
 * of a watch of Secrets (or one that cannot be told apart) would carry
 * their data into logs.
 */
export class MalformedWatchLineError extends Error {
  /** Always `MalformedWatchLineError`. */
  override readonly name = 'MalformedWatchLineError';
  constructor(
    /** What is wrong with the line (not JSON, no type, ...), without its text. */
    readonly reason: string,
    /** Where the line starts: bytes of the response body before it. */
    readonly offset: number,
    /** The line's length in bytes. */
    readonly length: number,
  ) {
    super(`malformed watch line (${reason}) at byte ${offset} of the response, ${length} bytes`);
  }
}

const NEWLINE = 0x0a;

/**
 * Splits a watch response's bytes into newline-delimited JSON events and
 * parses each line once.
 *
 * Bytes are kept as Buffers until a line is whole, and each line is decoded
 * and parsed in one step: no string is built per chunk and no line is
 * parsed twice. A line cut across chunks is joined from the pieces that hold
 * it, only once its end has arrived. Blank lines are skipped (servers may
 * send them as keep-alives). A line that is not JSON, or not an object with
 * a string `type` and an object `object`, goes to `onMalformed`; the lines
 * after it are still read, and the caller decides whether the stream can be
 * trusted further.
 */
export class WatchLineReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of the response before the chunk being read. */
  private consumed = 0;
  /** The line being read has passed the cap: its bytes are counted, not kept. */
  private skipping = false;

  constructor(
    private readonly onEvent: (line: WatchLine) => void,
    private readonly onMalformed: (error: MalformedWatchLineError) => void,
    /** A line longer than this is not kept: `onOversized` is told its length once it ends. */
    private readonly maxLineBytes = Infinity,
    private readonly onOversized: (bytes: number) => void = () => {},
    /** Decodes a line in place of `JSON.parse` (the compact cache's codec); throws as `JSON.parse` does. */
    private readonly decode?: (buffer: Buffer, start: number, end: number) => unknown,
    /** The chunks pushed are overwritten once `push` returns (a socket's one read buffer): a line's start is copied to be kept. */
    private readonly volatile = false,
  ) {}

  /** Feeds one chunk of the response body. */
  push(received: Buffer): void {
    const chunk = uniformBuffer(received);
    let start = 0;
    let newline = chunk.indexOf(NEWLINE, start);
    if (newline !== -1 && (this.pendingBytes > 0 || this.skipping)) {
      const bytes = this.pendingBytes + newline;
      if (this.skipping || bytes > this.maxLineBytes) {
        this.pending = [];
        this.pendingBytes = 0;
        this.skipping = false;
        this.onOversized(bytes);
      } else {
        this.pending.push(chunk.subarray(0, newline));
        const line = Buffer.concat(this.pending, bytes);
        this.pending = [];
        this.pendingBytes = 0;
        this.line(line, 0, line.length, this.consumed - (bytes - newline));
      }
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    while (newline !== -1) {
      if (newline - start > this.maxLineBytes) this.onOversized(newline - start);
      else this.line(chunk, start, newline, this.consumed + start);
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) {
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > this.maxLineBytes) {
        // Counted from here on, not kept: memory stays bounded by the cap.
        this.skipping = true;
        this.pending = [];
      } else {
        this.pending.push(this.volatile ? Buffer.from(chunk.subarray(start)) : chunk.subarray(start));
      }
    }
    this.consumed += chunk.length;
  }

  /** The response ended: a last line without a newline still counts. */
  end(): void {
    if (this.skipping) {
      this.skipping = false;
      const bytes = this.pendingBytes;
      this.pendingBytes = 0;
      this.onOversized(bytes);
      return;
    }
    if (this.pendingBytes === 0) return;
    const line = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.line(line, 0, line.length, this.consumed - line.length);
  }

  /** Bytes held for a line whose end has not arrived yet. */
  get buffered(): number {
    return this.skipping ? 0 : this.pendingBytes;
  }

  /** Reads the line `buffer[start, end)`, which starts at byte `offset` of the response. */
  private line(buffer: Buffer, start: number, end: number, offset: number): void {
    // Trailing \r (CRLF lines) and whitespace-only keep-alive lines.
    while (end > start && (buffer[end - 1] === 0x0d || buffer[end - 1] === 0x20)) end--;
    if (end === start) return;
    // The text is made only when needed: the compact codec reads the bytes.
    const text = this.decode === undefined ? buffer.toString('utf8', start, end) : undefined;
    let parsed: unknown;
    try {
      parsed = text !== undefined ? JSON.parse(text) : this.decode?.(buffer, start, end);
    } catch (err) {
      this.onMalformed(new MalformedWatchLineError(notJson(err), offset, end - start));
      return;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      this.onMalformed(new MalformedWatchLineError('not a JSON object', offset, end - start));
      return;
    }
    const event = parsed as { type?: unknown; object?: unknown };
    if (typeof event.type !== 'string') {
      this.onMalformed(new MalformedWatchLineError('no "type"', offset, end - start));
      return;
    }
    if (event.object === null || typeof event.object !== 'object') {
      this.onMalformed(new MalformedWatchLineError('no "object"', offset, end - start));
      return;
    }
    this.onEvent(event as WatchLine);
  }
}

/**
 * Why a line is not JSON, without the text V8 quotes from it (`Unexpected
 * token 'x', "{"data":{"pa"... is not valid JSON`): what broke and where.
 */
function notJson(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cleaned = message.replace(/,? *(?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '');
  return `not JSON: ${cleaned === '' ? 'not valid JSON' : cleaned}`;
}
