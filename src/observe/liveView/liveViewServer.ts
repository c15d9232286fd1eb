import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { silentLogger, type Logger } from '../../logger.js';
import { listenOn } from '../../sinks/metrics/listenOn.js';
import type { LiveView } from './liveView.js';
import { hostAccepted, hostOf, loopbackHosts, minTokenLength, tokenGuard } from './liveViewAccess.js';

/** Where the live view listens, and who it answers. */
export interface LiveViewServerOptions {
  /** The address to listen on (default `127.0.0.1`, as `kubectl proxy`'s `--address`): another address is an opt-in to being reached from elsewhere. */
  host?: string;
  /** The port (default 8081; 0 for any free one, which `url` then names). */
  port?: number;
  /**
   * More `Host` names to answer, beside `localhost`, `127.0.0.1`, `[::1]`
   * and `host` itself: a string is one name (`viewer.example.com`, `[fd00::1]`),
   * a RegExp is tested against the host without its port, as `kubectl proxy`'s
   * `--accept-hosts`. Any other Host gets 403, so a page of another site
   * cannot read the view through DNS rebinding.
   */
  acceptHosts?: ReadonlyArray<string | RegExp>;
  /**
   * A bearer token every request must carry (at least 16 characters):
   * `Authorization: Bearer <token>`, or `?token=<token>` once in the
   * browser's address, which trades it for a cookie. Without it: 401.
   */
  token?: string;
  /** Where failed requests are logged (default: none). */
  logger?: Logger;
}

/** The live view's own listener. */
export interface LiveViewServer {
  /** `http://host:port/debug/rxkube/`, with the port actually bound (and never the token). */
  readonly url: string;
  /** The port actually bound. */
  readonly port: number;
  /** Stops listening and closes open connections (the pages' streams too). */
  close(): Promise<void>;
}

const wildcard = new Set(['0.0.0.0', '::', '']);
const bracketed = (address: string): string => (isIP(address) === 6 ? `[${address}]` : address.toLowerCase());

/** A live view's listener with its options checked, not listening yet. */
export interface PreparedLiveViewServer {
  /** Starts listening; rejects naming the address when it cannot. */
  listen(): Promise<LiveViewServer>;
}

/**
 * Serves a live view on a listener of its own, apart from the metrics and
 * health server (which Prometheus and the kubelet reach over the pod
 * network): loopback unless told otherwise, answering only the `Host`
 * names it knows (403 for any other, before anything else is looked at)
 * and, with `token`, only requests that carry it (401). The checks cover
 * every path it serves: the page, its script and style, the event stream
 * and the JSON endpoints.
 */
export function startLiveViewServer(view: LiveView, options: LiveViewServerOptions = {}): Promise<LiveViewServer> {
  return prepareLiveViewServer(view, options).listen();
}

/** `startLiveViewServer` in two steps: its options checked now (a bad one throws, naming it), the listener opened by `listen()`. */
export function prepareLiveViewServer(view: LiveView, options: LiveViewServerOptions = {}): PreparedLiveViewServer {
  const logger = options.logger ?? silentLogger;
  const listenHost = options.host ?? '127.0.0.1';
  const port = options.port ?? 8081;
  if (options.token !== undefined && (typeof options.token !== 'string' || options.token.length < minTokenLength)) {
    throw new RangeError(`live view: token must be a string of at least ${minTokenLength} characters (a random one: openssl rand -hex 32), got ${typeof options.token === "string" ? `${options.token.length} characters` : typeof options.token}`);
  }
  for (const accepted of options.acceptHosts ?? []) {
    if (typeof accepted !== 'string' && !(accepted instanceof RegExp)) throw new TypeError(`live view: acceptHosts takes host names and RegExps, got ${typeof accepted}`);
  }
  const names = new Set([...loopbackHosts, ...(options.acceptHosts ?? []).filter((h): h is string => typeof h === 'string').map((h) => h.toLowerCase())]);
  const patterns = (options.acceptHosts ?? []).filter((h): h is RegExp => h instanceof RegExp);
  if (!wildcard.has(listenHost)) names.add(bracketed(listenHost));
  const checkToken = options.token === undefined ? undefined : tokenGuard(options.token, view.path);

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const host = hostOf(req.headers.host);
    if (!hostAccepted(host, names, patterns)) {
      logger.warn({ host: req.headers.host, path: req.url }, 'live view: refused a request for a host it does not serve');
      res.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
      res.end(`403 Forbidden: the live view does not answer for host "${host}": it answers loopback names and the address it listens on (acceptHosts adds more)\n`);
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (checkToken?.(req, res, url) === 'answered') return;
    view.handle(req, res);
  };
  return { listen: () => listen(handler, listenHost, port, view.path, logger) };
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void, listenHost: string, port: number, path: string, logger: Logger): Promise<LiveViewServer> {
  const { address, close } = await listenOn(createServer(handler), port, listenHost, 'live view', logger);
  // The address a browser on this machine opens: a wildcard is reached through loopback.
  const urlHost = wildcard.has(address.address) ? '127.0.0.1' : bracketed(address.address);
  return { url: `http://${urlHost}:${address.port}${path}/`, port: address.port, close };
}
