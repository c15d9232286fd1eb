import type { ServerResponse } from 'node:http';

/**
 * One open watch response: newline-delimited JSON over a chunked 200
 * response. Lines written in the same tick go out in one socket write
 * (corked until the next tick), so a burst costs one syscall and nothing
 * waits longer than the current tick. The stream says when it cannot take
 * more (the socket buffer is full, or the watch is silenced by a fault) and
 * calls back when it can again; what to send then is the watcher's
 * business (it reads on from the history), so a slow client costs no
 * per-watch queue. Bookmarks, `timeoutSeconds` and the fault switches
 * (silence, drop, clean close) live here too.
 */
export interface WatchStreamOptions {
  /** `kind` and `apiVersion` of bookmark objects. */
  kind: string;
  /** The `apiVersion` of bookmark objects. */
  apiVersion: string;
  /** Whether the client asked for bookmarks (`allowWatchBookmarks`). */
  bookmarks: boolean;
  /** The period of bookmarks, in ms. */
  bookmarkIntervalMs: number;
  /** The client's `timeoutSeconds`: the watch ends cleanly after it. */
  timeoutSeconds: number | undefined;
  /** The resourceVersion a bookmark reports: every change up to it has been written. */
  bookmarkResourceVersion: () => number | undefined;
  /** Called once when the stream has closed, for whatever reason. */
  onClosed: () => void;
  /** How long each line is held back before it is written, in ms (the watch-delay fault); read at each line. */
  lineDelay?: () => number;
}

/** One open watch response: writes event lines, bookmarks and fault effects to the HTTP response, with backpressure. */
export class WatchStream {
  private closed = false;
  private corked = false;
  private silenced = false;
  private waitingForDrain = false;
  private whenWritable: (() => void) | undefined;
  private bookmarkTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  /** Lines held back by the watch-delay fault, oldest first, with when each is due (ms since the epoch). */
  private held: { line: string; due: number }[] = [];
  private heldTimer: NodeJS.Timeout | undefined;
  /** Lines written. */
  sent = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: WatchStreamOptions,
  ) {
    res.on('close', () => this.cleanUp());
    res.on('error', () => this.cleanUp());
  }

  /** Whether the response has ended. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether a line sent now goes out now. */
  get writable(): boolean {
    return !this.closed && !this.silenced && !this.waitingForDrain;
  }

  /** Sends the 200 head at once, so the client sees the watch open before any event. */
  open(silenced: boolean): void {
    this.silenced = silenced;
    this.res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    this.res.flushHeaders();
    if (this.options.bookmarks && this.options.bookmarkIntervalMs > 0) {
      this.bookmarkTimer = setInterval(() => this.bookmark(), this.options.bookmarkIntervalMs);
    }
    if (this.options.timeoutSeconds !== undefined) {
      this.timeoutTimer = setTimeout(() => this.end(), this.options.timeoutSeconds * 1000);
    }
  }

  /**
   * Writes a line; returns false when the stream cannot take more for now
   * (call `onWritable` to hear when it can). Only call while `writable`.
   */
  send(line: string): boolean {
    const delay = this.options.lineDelay?.() ?? 0;
    if (delay <= 0 && this.held.length === 0) return this.write(line);
    // In order: a line never overtakes one held before it, even when the delay shrinks.
    const last = this.held.at(-1)?.due ?? 0;
    this.held.push({ line, due: Math.max(Date.now() + delay, last) });
    if (this.heldTimer === undefined) this.releaseHeld();
    return true;
  }

  /** Writes the held lines that are due, and waits for the next one. */
  private readonly releaseHeld = (): void => {
    this.heldTimer = undefined;
    while (!this.closed && this.held.length > 0 && (this.held[0] as { due: number }).due <= Date.now()) this.write((this.held.shift() as { line: string }).line);
    const next = this.held[0];
    if (!this.closed && next !== undefined) this.heldTimer = setTimeout(this.releaseHeld, next.due - Date.now());
  };

  private write(line: string): boolean {
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      process.nextTick(this.uncork);
    }
    this.sent += 1;
    if (this.res.write(line)) return true;
    if (!this.waitingForDrain) {
      this.waitingForDrain = true;
      this.res.once('drain', this.drained);
    }
    return false;
  }

  /** Calls `callback` once, the next time the stream becomes writable. */
  onWritable(callback: () => void): void {
    this.whenWritable = callback;
  }

  private readonly drained = (): void => {
    this.waitingForDrain = false;
    this.notifyWritable();
  };

  private notifyWritable(): void {
    if (!this.writable) return;
    const callback = this.whenWritable;
    this.whenWritable = undefined;
    callback?.();
  }

  private readonly uncork = (): void => {
    this.corked = false;
    if (!this.closed) this.res.uncork();
  };

  /**
   * A BOOKMARK at the resourceVersion the watcher has reached (or `at`);
   * `annotations` mark the end of initial events. Skipped while the stream
   * cannot write or the watcher is not caught up.
   */
  bookmark(annotations?: Record<string, string>, at?: number): void {
    const rv = at ?? this.options.bookmarkResourceVersion();
    if (!this.writable || rv === undefined) return;
    const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
    if (annotations !== undefined) metadata.annotations = annotations;
    const object = { kind: this.options.kind, apiVersion: this.options.apiVersion, metadata };
    this.send(`${JSON.stringify({ type: 'BOOKMARK', object })}\n`);
  }

  /** Silenced streams stay open and send nothing, not even bookmarks; the watcher catches up when unsilenced. */
  setSilenced(on: boolean): void {
    this.silenced = on;
    if (!on) this.notifyWritable();
  }

  /** Writes raw text, bypassing silence and backpressure: for malformed-line faults and ERROR events. */
  writeRaw(text: string): void {
    if (this.closed) return;
    this.res.write(text);
  }

  /** Ends the response cleanly (the terminating chunk), as a server-side watch timeout does. */
  end(): void {
    if (this.closed) return;
    if (this.corked) this.uncork();
    this.cleanUp();
    this.res.end();
  }

  /** Cuts the connection mid-stream, as a network failure or a crashed server would. */
  destroy(): void {
    if (this.closed) return;
    this.cleanUp();
    this.res.socket?.destroy();
    this.res.destroy();
  }

  private cleanUp(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.bookmarkTimer);
    clearTimeout(this.timeoutTimer);
    clearTimeout(this.heldTimer);
    this.held = [];
    this.whenWritable = undefined;
    this.res.off('drain', this.drained);
    this.options.onClosed();
  }
}
