import type { ServerResponse } from 'node:http';
import type { SchedulerLike, Subscription } from 'rxjs';

/** Options of `eventStream()`. */
export interface EventStreamOptions {
  /** Where the flush ticks run. */
  scheduler: SchedulerLike;
  /** Ms between flushes: changes are batched for this long. */
  interval: number;
  /** Bytes a client may leave unread before it is dropped (it reconnects and gets a fresh snapshot). */
  maxBuffered: number;
  /** What a new client gets first (`event: snapshot`). */
  snapshot: () => unknown;
  /** What changed since the last flush (`event: delta`), or undefined for nothing. */
  delta: () => unknown;
  /** Told when a client is dropped for reading too slowly. */
  onDrop?: (buffered: number) => void;
}

/** Server-sent events to any number of pages: a snapshot on connect, then batched deltas. */
export interface EventStream {
  /** Takes over `res` as an event stream until the client leaves or `close()`. */
  attach(res: ServerResponse): void;
  /** Connected clients. */
  readonly clients: number;
  /** Ends every stream and stops the ticks. */
  close(): void;
}

function frame(event: string, data: unknown): string {
  // JSON.stringify never emits a raw newline, so one data: line carries the whole message.
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Server-sent events with batching: every client gets a snapshot when it
 * connects; then, at most once per `interval`, one delta message built
 * once and written to all. The tick runs only while a client is connected,
 * so an unwatched view costs nothing but its fold. A client that leaves
 * more than `maxBuffered` bytes unread is dropped instead of growing the
 * process's memory; its `EventSource` reconnects and starts from a
 * snapshot, so nothing it shows is lost, only skipped.
 */
export function eventStream(options: EventStreamOptions): EventStream {
  const clients = new Set<ServerResponse>();
  let tick: Subscription | undefined;
  let closed = false;

  const drop = (res: ServerResponse): void => {
    clients.delete(res);
    if (clients.size === 0) {
      tick?.unsubscribe();
      tick = undefined;
    }
    if (!res.writableEnded) res.end();
  };

  const write = (res: ServerResponse, text: string): void => {
    if (res.writableLength > options.maxBuffered) {
      options.onDrop?.(res.writableLength);
      drop(res);
      res.destroy();
      return;
    }
    res.write(text);
  };

  const flush = (): void => {
    const delta = options.delta();
    if (delta === undefined) return;
    const text = frame('delta', delta);
    for (const res of [...clients]) write(res, text);
  };

  return {
    attach(res) {
      if (closed) {
        res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' }).end('the live view has stopped\n');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', Connection: 'keep-alive' });
      // Unwatched, changes pile up as dirty marks: the snapshot covers them. (With others watching, the next delta is built
      // from the state at its own time, never older than this snapshot, so it may carry them again harmlessly.)
      if (clients.size === 0) options.delta();
      res.write(`retry: 1000\n${frame('snapshot', options.snapshot())}`);
      clients.add(res);
      res.on('close', () => drop(res));
      tick ??= options.scheduler.schedule(function () {
        flush();
        this.schedule(undefined, options.interval);
      }, options.interval);
    },
    get clients() {
      return clients.size;
    },
    close() {
      closed = true;
      for (const res of [...clients]) drop(res);
    },
  };
}
