import type { ServerResponse } from 'node:http';

/**
 * One open watch response: newline-delimited JSON over a chunked 200
 * response. Events written in the same tick go out in one socket write
 * (corked until the next tick), so a burst costs one syscall, and nothing
 * waits longer than the current tick. When the client reads slower than
 * events come, lines wait in a backlog of references to the shared,
 * already-serialized lines (no copy per watcher) and go out as the socket
 * drains; a watcher that falls more than `backlogLimit` behind is ended
 * cleanly, as kube-apiserver ends watchers too slow to keep up, and resumes
 * from its last resourceVersion. Bookmarks, `timeoutSeconds` and the fault
 * switches (silence, drop, clean close) live here too.
 */

/** Default of how far (in characters of pending lines) a watcher may fall behind before it is ended. */
export const defaultBacklogLimit = 256 * 1024 * 1024;
export interface WatchStreamOptions {
  /** `kind` and `apiVersion` of bookmark objects. */
  kind: string;
  apiVersion: string;
  bookmarks: boolean;
  bookmarkIntervalMs: number;
  timeoutSeconds: number | undefined;
  /** How far (in characters of pending lines) the client may fall behind before the watch is ended. */
  backlogLimit: number;
  /** The resourceVersion a bookmark reports: every change up to it has been written. */
  currentResourceVersion: () => number;
  onClosed: () => void;
}

export class WatchStream {
  private closed = false;
  private corked = false;
  private silenced = false;
  private held: string[] = [];
  private backlog: string[] = [];
  private backlogStart = 0;
  private backlogBytes = 0;
  private waitingForDrain = false;
  private bookmarkTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  /** Events written, for tests and the request log. */
  sent = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: WatchStreamOptions,
  ) {
    res.on('close', () => this.cleanUp());
  }

  get isClosed(): boolean {
    return this.closed;
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
      this.bookmarkTimer = setInterval(() => {
        if (!this.silenced) this.bookmark();
      }, this.options.bookmarkIntervalMs);
    }
    if (this.options.timeoutSeconds !== undefined) {
      this.timeoutTimer = setTimeout(() => this.end(), this.options.timeoutSeconds * 1000);
    }
  }

  send(line: string): void {
    if (this.closed) return;
    if (this.silenced) {
      this.held.push(line);
      return;
    }
    if (this.waitingForDrain) {
      this.backlog.push(line);
      this.backlogBytes += line.length;
      if (this.backlogBytes > this.options.backlogLimit) this.end();
      return;
    }
    if (!this.write(line)) this.waitForDrain();
  }

  private write(line: string): boolean {
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      process.nextTick(this.uncork);
    }
    this.sent += 1;
    return this.res.write(line);
  }

  private waitForDrain(): void {
    this.waitingForDrain = true;
    this.res.once('drain', this.flush);
  }

  private readonly flush = (): void => {
    this.waitingForDrain = false;
    while (this.backlogStart < this.backlog.length && !this.closed) {
      const line = this.backlog[this.backlogStart++];
      this.backlogBytes -= line.length;
      if (!this.write(line)) {
        this.waitForDrain();
        break;
      }
    }
    if (this.backlogStart === this.backlog.length || this.backlogStart > 65_536) {
      this.backlog = this.backlog.slice(this.backlogStart);
      this.backlogStart = 0;
    }
  };

  private readonly uncork = (): void => {
    this.corked = false;
    if (!this.closed) this.res.uncork();
  };

  /** A BOOKMARK at the current resourceVersion; `annotations` mark the end of initial events. */
  bookmark(annotations?: Record<string, string>): void {
    const metadata: Record<string, unknown> = { resourceVersion: String(this.options.currentResourceVersion()) };
    if (annotations !== undefined) metadata.annotations = annotations;
    const object = { kind: this.options.kind, apiVersion: this.options.apiVersion, metadata };
    this.send(`${JSON.stringify({ type: 'BOOKMARK', object })}\n`);
  }

  /** Silenced streams stay open and send nothing (not even bookmarks); what they held is sent when unsilenced. */
  setSilenced(on: boolean): void {
    this.silenced = on;
    if (on || this.closed) return;
    const held = this.held;
    this.held = [];
    for (const line of held) this.send(line);
  }

  /** Writes raw text, bypassing silence: for malformed-line faults and ERROR events. */
  writeRaw(text: string): void {
    if (this.closed) return;
    this.res.write(text);
  }

  /** Ends the response cleanly (the terminating chunk), as a server-side watch timeout does; lines still waiting are dropped. */
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
    this.held = [];
    this.backlog = [];
    this.backlogBytes = 0;
    this.res.off('drain', this.flush);
    this.options.onClosed();
  }
}
