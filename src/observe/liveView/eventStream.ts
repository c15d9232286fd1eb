import type { ServerResponse } from 'node:http';
import type { SchedulerLike, Subscription } from 'rxjs';

/** Options of `eventStream()`. */
export interface EventStreamOptions {
  /** Where the flush ticks run. */
  scheduler: SchedulerLike;
  /** Ms between flushes: changes are batched for this long. */
  interval: number;
  /** Bytes a client may have unsent, every write counted (its snapshot too), before it is dropped (it reconnects and gets a fresh snapshot). */
  maxBuffered: number;
  /** Clients served at once; one more is answered 503. */
  maxClients: number;
  /** What a new client gets first (`event: snapshot`), as JSON bytes: the same Buffer for every client that asks before it changes. */
  snapshot: () => Buffer;
  /** What changed since the last flush (`event: delta`), or undefined for nothing. */
  delta: () => unknown;
  /** Told when a client is dropped for reading too slowly: the bytes it had unsent, and the size of the write that would have passed the limit. */
  onDrop?: (buffered: number, writing: number) => void;
  /** Told when a client is refused: why (the 503's message). */
  onRefuse?: (why: string) => void;
}

/** Server-sent events to a bounded number of pages: a snapshot on connect, then batched deltas. */
export interface EventStream {
  /** Takes over `res` as an event stream until the client leaves or `close()`; answers 503 when it cannot. */
  attach(res: ServerResponse): void;
  /** Connected clients. */
  readonly clients: number;
  /** Ends every stream and stops the ticks. */
  close(): void;
}

const snapshotHead = Buffer.from('retry: 1000\nevent: snapshot\ndata: ');
const frameEnd = Buffer.from('\n\n');

function deltaFrame(data: unknown): Buffer {
  // JSON.stringify never emits a raw newline, so one data: line carries the whole message.
  return Buffer.from(`event: delta\ndata: ${JSON.stringify(data)}\n\n`);
}

function refuse(res: ServerResponse, why: string): void {
  res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' }).end(`${why}\n`);
}

/**
 * Server-sent events with batching: every client gets a snapshot when it
 * connects; then, at most once per `interval`, one delta message built
 * once and written to all. The tick runs only while a client is connected,
 * so an unwatched view costs nothing but its fold.
 *
 * Memory is bounded whatever the clients do. Every message is one Buffer
 * shared by all the clients it goes to (a string written to a socket that
 * cannot take it at once is copied per socket; a Buffer is referenced),
 * and the snapshot is serialized once for all the clients that connect
 * while it holds. Before every write, the snapshot included, a client's
 * unsent bytes plus the write are checked against `maxBuffered`: one that
 * would pass it is dropped instead, and its `EventSource` reconnects and
 * starts from a snapshot, so nothing it shows is lost, only skipped. At
 * most `maxClients` are served at once. So the messages held for clients
 * are at most `maxBuffered` bytes of deltas (all clients hold the same
 * ones) plus one snapshot per client, and each client at most
 * `maxBuffered` in all.
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

  /** Writes `bytes` to `res` if its unsent bytes stay within the limit; else drops it and says false. */
  const write = (res: ServerResponse, bytes: number, ...chunks: Buffer[]): boolean => {
    if (res.writableLength + bytes > options.maxBuffered) {
      options.onDrop?.(res.writableLength, bytes);
      drop(res);
      res.destroy();
      return false;
    }
    for (const chunk of chunks) res.write(chunk);
    return true;
  };

  const flush = (): void => {
    const delta = options.delta();
    if (delta === undefined) return;
    const frame = deltaFrame(delta);
    for (const res of [...clients]) write(res, frame.length, frame);
  };

  return {
    attach(res) {
      if (closed) {
        refuse(res, 'the live view has stopped');
        return;
      }
      if (clients.size >= options.maxClients) {
        const why = `the live view serves ${options.maxClients} pages at once (maxClients), and as many are open: close one, or raise maxClients`;
        options.onRefuse?.(why);
        refuse(res, why);
        return;
      }
      // Unwatched, changes pile up as dirty marks: the snapshot covers them. (With others watching, the next delta is built
      // from the state at its own time, never older than this snapshot, so it may carry them again harmlessly.)
      if (clients.size === 0) options.delta();
      const snapshot = options.snapshot();
      const bytes = snapshotHead.length + snapshot.length + frameEnd.length;
      if (bytes > options.maxBuffered) {
        // Dropped after it was sent, the page would reconnect for ever: it is told instead, and the browser does not retry a 503.
        const why = `the live view's snapshot is ${bytes} bytes, more than maxBuffered (${options.maxBuffered}): raise maxBuffered, or lower limits.maxKeys`;
        options.onRefuse?.(why);
        refuse(res, why);
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', Connection: 'keep-alive' });
      clients.add(res);
      res.on('close', () => drop(res));
      if (!write(res, bytes, snapshotHead, snapshot, frameEnd)) return;
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
