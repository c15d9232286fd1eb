/**
 * An HTTP/1.1 response read from its bytes, as they arrive in pieces of any
 * size: its head (status and headers), then its body, framed as the head
 * says (chunked, a Content-Length, or up to the close of the connection).
 * No sockets here: `directGet` feeds it what a socket reads.
 *
 * The body is handed on as views of the bytes fed in, never copied: a
 * chunk of a chunked body that a read cuts in two arrives as two pieces.
 * Only the head is copied (it is kept across reads).
 */

/** What the head said. Header names are lower case; repeated headers are joined with ", ". */
export interface ResponseHead {
  statusCode: number;
  headers: ReadonlyMap<string, string>;
}

export interface FramingHandlers {
  /** The head of the final response (any 1xx before it is skipped). */
  head(head: ResponseHead): void;
  /** Bytes of the body: `buf[start, end)`, valid only during the call. */
  body(buf: Buffer, start: number, end: number): void;
  /** The body is complete (the last chunk, or the Content-Length reached). */
  end(): void;
}

/** The server broke HTTP/1.1: the message says how. */
export class ResponseFramingError extends Error {
  override readonly name = 'ResponseFramingError';
  constructor(
    message: string,
    /** The bytes were fine so far, but the connection ended before the response did. */
    readonly cutShort = false,
  ) {
    super(message);
  }
}

/** A head larger than this is refused: kube's heads are a few hundred bytes. */
const MAX_HEAD_BYTES = 64 * 1024;
/** A chunk-size line (with its extensions) longer than this is refused. */
const MAX_SIZE_LINE = 1024;
/** The largest chunk size believed: larger is a corrupt stream, not a chunk. */
const MAX_CHUNK = 2 ** 40;

const CR = 0x0d;
const LF = 0x0a;

const enum State {
  Head,
  /** Reading a chunk's size line. */
  Size,
  /** Inside a chunk's data; `left` bytes to go. */
  Data,
  /** The CRLF after a chunk's data. */
  DataEnd,
  /** Trailer lines after the last chunk, up to an empty one. */
  Trailers,
  /** A Content-Length body; `left` bytes to go. */
  Length,
  /** A body that ends with the connection. */
  UntilClose,
  Done,
}

/**
 * Feed it the response's bytes with `push`, and `close` once the
 * connection has ended. Throws `ResponseFramingError` from either when the
 * bytes are not an HTTP/1.1 response, or the connection ended mid-message.
 */
export class ResponseFraming {
  private state = State.Head;
  private headText = '';
  /** The size line (or trailer line) read so far. */
  private line = '';
  private left = 0;
  /** The CR of the CRLF after a chunk's data has been read. */
  private cr = false;

  constructor(private readonly handlers: FramingHandlers) {}

  /** Whether the whole response has been read. */
  get done(): boolean {
    return this.state === State.Done;
  }

  /** Whether the head has been read (the body may still be coming). */
  get headRead(): boolean {
    return this.state !== State.Head;
  }

  push(buf: Buffer, start = 0, end = buf.length): void {
    let i = start;
    while (i < end) {
      switch (this.state) {
        case State.Head:
          i = this.readHead(buf, i, end);
          break;
        case State.Size:
          i = this.readSize(buf, i, end);
          break;
        case State.Data:
          i = this.body(buf, i, end);
          if (this.left === 0) this.state = State.DataEnd;
          break;
        case State.DataEnd: {
          // CRLF, or (leniently, as node:http reads it) a bare LF.
          const c = buf[i++];
          if (c === CR && !this.cr) this.cr = true;
          else if (c === LF) {
            this.cr = false;
            this.state = State.Size;
          } else throw new ResponseFramingError('a chunk of the body is not followed by CRLF');
          break;
        }
        case State.Trailers:
          i = this.readTrailer(buf, i, end);
          break;
        case State.Length:
          i = this.body(buf, i, end);
          if (this.left === 0) this.finish();
          break;
        case State.UntilClose:
          this.handlers.body(buf, i, end);
          i = end;
          break;
        case State.Done:
          // Bytes after the response: nothing asked for them (no pipelining).
          return;
      }
    }
  }

  /** The connection ended: the end of a body read until close, or a response cut short. */
  close(): void {
    if (this.state === State.UntilClose) {
      this.finish();
      return;
    }
    if (this.state === State.Done) return;
    throw new ResponseFramingError(this.state === State.Head ? 'the connection closed before the response head was complete' : 'the connection closed in the middle of the response body', true);
  }

  private finish(): void {
    this.state = State.Done;
    this.handlers.end();
  }

  private readHead(buf: Buffer, i: number, end: number): number {
    // Kept as text (a copy): these bytes may be overwritten by the next read.
    const lf = buf.indexOf(LF, i);
    const to = lf === -1 || lf >= end ? end : lf + 1;
    this.headText += buf.toString('latin1', i, to);
    if (this.headText.length > MAX_HEAD_BYTES) throw new ResponseFramingError(`the response head is larger than ${MAX_HEAD_BYTES} bytes`);
    if (to !== lf + 1) return to;
    const text = this.headText;
    // A stray empty line before the status line is allowed (RFC 9112, 2.2).
    if (text === '\r\n' || text === '\n') this.headText = '';
    else if (text.endsWith('\n\n') || text.endsWith('\n\r\n')) this.parseHead(text);
    return to;
  }

  private parseHead(text: string): void {
    this.headText = '';
    const lines = text.split(/\r?\n/);
    const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0] ?? '');
    if (status === null) throw new ResponseFramingError(`not an HTTP/1.1 status line: ${JSON.stringify((lines[0] ?? '').slice(0, 100))}`);
    const statusCode = Number(status[1]);
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      if (line === '') continue;
      const colon = line.indexOf(':');
      if (colon <= 0) throw new ResponseFramingError(`not a header line: ${JSON.stringify(line.slice(0, 100))}`);
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      const had = headers.get(name);
      headers.set(name, had === undefined ? value : `${had}, ${value}`);
    }
    // An interim response (100 Continue, 103 Early Hints): the real one follows.
    if (statusCode >= 100 && statusCode < 200 && statusCode !== 101) return;
    this.handlers.head({ statusCode, headers });
    const encoding = headers.get('transfer-encoding');
    const length = headers.get('content-length');
    if (statusCode === 204 || statusCode === 304 || statusCode === 101) {
      this.finish();
    } else if (encoding !== undefined) {
      // RFC 9112, 6.3: chunked must be the last coding; anything else ends with the connection.
      if (/(?:^|,)\s*chunked\s*$/i.test(encoding)) this.state = State.Size;
      else this.state = State.UntilClose;
    } else if (length !== undefined) {
      if (!/^\d+$/.test(length)) throw new ResponseFramingError(`a Content-Length that is not a number: ${JSON.stringify(length.slice(0, 100))}`);
      this.left = Number(length);
      this.state = State.Length;
      if (this.left === 0) this.finish();
    } else {
      this.state = State.UntilClose;
    }
  }

  /** Hands on the body's bytes from `i`, up to the `left` still due; returns where it stopped. */
  private body(buf: Buffer, i: number, end: number): number {
    const to = Math.min(end, i + this.left);
    this.left -= to - i;
    this.handlers.body(buf, i, to);
    return to;
  }

  /**
   * Adds the bytes from `i` up to the next LF to `line` (at most `limit`
   * chars, else `tooLong` is thrown); returns just past the LF, or -1 when
   * the line goes on past `end`.
   */
  private readLine(buf: Buffer, i: number, end: number, limit: number, tooLong: string): number {
    const lf = buf.indexOf(LF, i);
    const to = lf === -1 || lf >= end ? end : lf;
    this.line += buf.toString('latin1', i, to);
    if (this.line.length > limit) throw new ResponseFramingError(tooLong);
    return to === end ? -1 : to + 1;
  }

  private readSize(buf: Buffer, i: number, end: number): number {
    const next = this.readLine(buf, i, end, MAX_SIZE_LINE, `a chunk-size line longer than ${MAX_SIZE_LINE} bytes`);
    if (next === -1) return end;
    const text = this.line.endsWith('\r') ? this.line.slice(0, -1) : this.line;
    this.line = '';
    // Extensions after ';' are allowed, and ignored.
    const size = /^([0-9a-fA-F]+)[ \t]*(?:;.*)?$/.exec(text);
    if (size === null) throw new ResponseFramingError(`not a chunk size: ${JSON.stringify(text.slice(0, 100))}`);
    const n = parseInt(size[1] as string, 16);
    if (!(n <= MAX_CHUNK)) throw new ResponseFramingError(`a chunk size of ${size[1]} bytes`);
    if (n === 0) {
      this.state = State.Trailers;
    } else {
      this.left = n;
      this.state = State.Data;
    }
    return next;
  }

  private readTrailer(buf: Buffer, i: number, end: number): number {
    const next = this.readLine(buf, i, end, MAX_HEAD_BYTES, `a trailer line longer than ${MAX_HEAD_BYTES} bytes`);
    if (next === -1) return end;
    const text = this.line;
    this.line = '';
    if (text === '' || text === '\r') this.finish();
    return next;
  }
}
