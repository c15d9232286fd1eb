import type { IncomingMessage, ServerResponse } from 'node:http';
import { asyncScheduler, type Observable, type SchedulerLike } from 'rxjs';
import { silentLogger, type Logger } from '../../logger.js';
import type { TimelineEntry } from '../timeline.js';
import { liveViewPage } from './assets/page.js';
import { liveViewScript } from './assets/script.js';
import { liveViewStyle } from './assets/style.js';
import { eventStream } from './eventStream.js';
import { LiveModel, type LiveModelLimits, type LiveViewStores } from './liveModel.js';
import { sharedSnapshot } from './sharedSnapshot.js';

/** Where `runController` serves the live view. */
export const liveViewPath = '/debug/rxkube';

/** What the live view reads: a controller's timeline, and read access to its caches. */
export interface LiveViewSource {
  /** The controller's timeline; subscribed once, when the view is made. */
  timeline: Observable<TimelineEntry>;
  /** Its stores by resource name: their sizes, and the cached object a key's detail shows. */
  stores?: LiveViewStores;
  /** The primary resource's store name (a key's detail shows its object from that store). */
  primary?: string;
}

/** How the live view batches and what it keeps. */
export interface LiveViewOptions {
  /** Ms changes are batched for before the pages get them (default 250). */
  batchInterval?: number;
  /** What the model keeps (see `LiveModelLimits`). */
  limits?: Partial<LiveModelLimits>;
  /** Bytes a page may leave unread, its snapshot counted, before it is dropped and must reconnect (default 8 MiB). */
  maxBuffered?: number;
  /** Pages served at once (event streams); one more is answered 503 saying so (default 16). */
  maxClients?: number;
  /** Where the batching waits and what `now` is (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /** Where its warnings go (default: none). */
  logger?: Logger;
}

/** A live view: an HTTP handler for everything below `path`, and its model. */
export interface LiveView {
  /** The path it serves below, without a trailing slash. */
  readonly path: string;
  /** Answers one request below `path`. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Pages connected now. */
  readonly clients: number;
  /** Stops reading the timeline and ends every page's stream. */
  close(): void;
}

const common = { 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' } as const;
// Everything comes from rxkube itself: no CDN, no inline script.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'";

function send(res: ServerResponse, code: number, body: string | Buffer, contentType: string, headers: Record<string, string> = {}): void {
  res.writeHead(code, { 'Content-Type': contentType, ...common, ...headers });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  send(res, code, JSON.stringify(body), 'application/json; charset=utf-8');
}

/**
 * The live view of one controller: folds its timeline into a `LiveModel`
 * and serves, below `/debug/rxkube/`:
 *
 * - `/` the page, `app.js` its script, `style.css` its style (plain files
 *   embedded in the package: no build step, no CDN);
 * - `events`: server-sent events, a `snapshot` on connect, then `delta`s
 *   batched at most every `batchInterval` ms;
 * - `api/state`: the snapshot as JSON;
 * - `api/key?key=namespace/name`: a key's detail as JSON (400 without
 *   `key`, 404 naming the key when the view does not hold it).
 *
 * Other paths are 404, other methods than GET and HEAD 405. A timeline
 * that errors or completes leaves the view up, saying so; an entry the
 * model cannot fold is logged and skipped, never the end of the view.
 */
export function liveView(source: LiveViewSource, options: LiveViewOptions = {}): LiveView {
  const scheduler = options.scheduler ?? asyncScheduler;
  const logger = options.logger ?? silentLogger;
  const interval = options.batchInterval ?? 250;
  if (!(interval > 0)) throw new RangeError(`live view: batchInterval must be a positive number of ms, got ${String(interval)}`);
  const maxBuffered = options.maxBuffered ?? 8 * 1024 * 1024;
  const maxClients = options.maxClients ?? 16;
  if (!(maxBuffered > 0)) throw new RangeError(`live view: maxBuffered must be a positive number of bytes, got ${String(maxBuffered)}`);
  if (!Number.isInteger(maxClients) || maxClients < 1) throw new RangeError(`live view: maxClients must be a positive integer, got ${String(maxClients)}`);
  const model = new LiveModel(options.limits, source.stores);
  const snapshot = sharedSnapshot(() => model.snapshot(scheduler.now()), () => scheduler.now(), interval);
  let skipped = 0;
  const subscription = source.timeline.subscribe({
    next: (entry) => {
      try {
        model.apply(entry);
      } catch (err) {
        // A malformed entry is the producer's bug: say so (once in a while), keep folding the rest.
        if (skipped++ % 1000 === 0) logger.warn({ err: err instanceof Error ? err.message : String(err), type: (entry as { type?: unknown }).type, skipped }, 'live view: skipped a timeline entry it could not fold');
      }
    },
    error: (err: unknown) => model.end(`the timeline failed: ${err instanceof Error ? err.message : String(err)}`),
    complete: () => model.end('the controller has stopped'),
  });
  const stream = eventStream({
    scheduler,
    interval,
    maxBuffered,
    maxClients,
    snapshot: () => snapshot.get(),
    delta: () => {
      // A page that connects after this delta was taken must not get a snapshot from before it.
      snapshot.invalidate();
      return model.takeDelta(scheduler.now());
    },
    onDrop: (buffered, writing) => logger.warn({ buffered, writing, maxBuffered }, 'live view: dropped a page that read too slowly (it reconnects with a fresh snapshot)'),
    onRefuse: (why) => logger.warn({ why }, 'live view: refused a page'),
  });

  const routes: Record<string, (url: URL, res: ServerResponse) => void> = {
    '/': (_url, res) => send(res, 200, liveViewPage, 'text/html; charset=utf-8', { 'Content-Security-Policy': csp }),
    '/app.js': (_url, res) => send(res, 200, liveViewScript, 'text/javascript; charset=utf-8'),
    '/style.css': (_url, res) => send(res, 200, liveViewStyle, 'text/css; charset=utf-8'),
    '/events': (_url, res) => (res.req.method === 'HEAD' ? send(res, 200, '', 'text/event-stream; charset=utf-8') : stream.attach(res)),
    '/api/state': (_url, res) => send(res, 200, snapshot.get(), 'application/json; charset=utf-8'),
    '/api/key': (url, res) => {
      const key = url.searchParams.get('key');
      if (key === null || key === '') {
        sendJson(res, 400, { error: `missing query parameter "key": ask for ${liveViewPath}/api/key?key=namespace/name` });
        return;
      }
      const detail = model.detail(key, source.primary);
      if (detail === undefined) {
        sendJson(res, 404, {
          error: `no key "${key}" in the live view: it was never triggered since the view started, or it was dropped (the view keeps the ${model.limits.maxKeys} most recently active keys)`,
        });
        return;
      }
      sendJson(res, 200, detail);
    },
  };

  return {
    path: liveViewPath,
    handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname === liveViewPath) {
        // Relative links on the page need the trailing slash.
        res.writeHead(301, { Location: `${liveViewPath}/${url.search}`, ...common }).end();
        return;
      }
      const route = url.pathname.startsWith(`${liveViewPath}/`) ? routes[url.pathname.slice(liveViewPath.length)] : undefined;
      if (route === undefined) {
        send(res, 404, `404 page not found: ${url.pathname} (the live view serves ${liveViewPath}/)\n`, 'text/plain; charset=utf-8');
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        send(res, 405, `method ${req.method ?? ''} not allowed\n`, 'text/plain; charset=utf-8', { Allow: 'GET, HEAD' });
        return;
      }
      route(url, res);
    },
    get clients() {
      return stream.clients;
    },
    close() {
      subscription.unsubscribe();
      stream.close();
    },
  };
}
