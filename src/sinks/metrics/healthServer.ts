import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { defaultLogger, type Logger } from '../../logger.js';
import { listenOn } from './listenOn.js';

/** A probe: true when healthy. A throw, a rejection or a timeout counts as unhealthy. */
export type HealthCheck = () => boolean | Promise<boolean>;

/** One probe, or several by name (the name is what a failing response reports). */
export type HealthChecks = HealthCheck | Record<string, HealthCheck>;

/**
 * Options of `startHealthServer()`: where to listen, what to serve at `/metrics`, and the checks behind `/healthz` and `/readyz`.
 */
export interface HealthServerOptions {
  /** Default 8080. Pass 0 for any free port (tests); the chosen one is in `url`. */
  port?: number;
  /** Default: every interface, as a pod's probes and Prometheus come from outside it. */
  host?: string;
  /** Served at `/metrics` in the Prometheus text format; without it `/metrics` is 404. */
  registry?: Registry;
  /**
   * `/healthz`: the process is alive and should not be restarted.
   * `/readyz`: it should get traffic: stores synced and, under leader
   * election, leading or standing by healthily. With no check, an endpoint
   * answers 200 "ok" while the server runs.
   */
  checks?: { healthz?: HealthChecks; readyz?: HealthChecks };
  /** Ms a check may take before it counts as failed (default 5000). */
  checkTimeout?: number;
  /** Where failed requests and checks are logged (default: pino to stderr). */
  logger?: Logger;
  /**
   * More handlers, by path prefix (`/debug/rxkube`): each answers its
   * prefix and every path below it, whatever the method. (The live view has a listener of its own, on loopback: see docs/liveview.md.)
   */
  mounts?: Readonly<Record<string, (req: IncomingMessage, res: ServerResponse) => void | Promise<void>>>;
}

/** A running health server. */
export interface HealthServer {
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  /** The port actually bound. */
  readonly port: number;
  /** Stops listening and closes open connections; nothing of the server keeps the process alive after it resolves. */
  close(): Promise<void>;
}

interface CheckResult {
  name: string;
  ok: boolean;
  detail?: string;
}

function named(checks: HealthChecks | undefined, endpoint: string): Array<[string, HealthCheck]> {
  if (checks === undefined) return [];
  if (typeof checks === 'function') return [[endpoint, checks]];
  return Object.entries(checks);
}

async function runCheck(name: string, check: HealthCheck, timeout: number): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve({ name, ok: false, detail: `timed out after ${timeout} ms` }), timeout);
    // A probe cut short by close() must not hold the process until its timeout.
    timer.unref();
  });
  const ran = (async (): Promise<CheckResult> => {
    try {
      const ok = await check();
      return ok === true ? { name, ok: true } : { name, ok: false };
    } catch (err) {
      return { name, ok: false, detail: err instanceof Error ? err.message : String(err) };
    }
  })();
  try {
    return await Promise.race([ran, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts the operational HTTP endpoints of a controller process:
 *
 * - `GET /metrics`: the registry in the Prometheus text format, with the
 *   registry's own Content-Type (`text/plain; version=0.0.4; charset=utf-8`).
 * - `GET /healthz`, `GET /readyz`: 200 `ok` when every check passes, else
 *   503 with one line per check, `[+]name ok` or `[-]name failed: why`, and
 *   a last line naming the failed ones, as kube-apiserver's own health
 *   endpoints answer. `?verbose` lists the checks on success too.
 *
 * Checks run on every probe, concurrently, each bounded by `checkTimeout`.
 * Other paths are 404, other methods than GET and HEAD 405.
 */
export async function startHealthServer(options: HealthServerOptions = {}): Promise<HealthServer> {
  const logger = options.logger ?? defaultLogger({ part: 'healthServer' });
  const checkTimeout = options.checkTimeout ?? 5000;
  const endpoints: Record<string, Array<[string, HealthCheck]>> = {
    '/healthz': named(options.checks?.healthz, 'healthz'),
    '/readyz': named(options.checks?.readyz, 'readyz'),
  };

  const send = (res: ServerResponse, code: number, body: string, contentType = 'text/plain; charset=utf-8'): void => {
    res.writeHead(code, { 'Content-Type': contentType, 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' });
    res.end(res.req.method === 'HEAD' ? undefined : body);
  };

  const probe = async (res: ServerResponse, path: string, verbose: boolean): Promise<void> => {
    const endpoint = path.slice(1);
    const checks = endpoints[path] ?? [];
    const results = await Promise.all(checks.map(([name, check]) => runCheck(name, check, checkTimeout)));
    const failed = results.filter((r) => !r.ok);
    const lines = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed${r.detail ? `: ${r.detail}` : ''}`));
    if (failed.length === 0) {
      send(res, 200, verbose ? `${lines.join('\n')}\n${endpoint} check passed\n` : 'ok');
      return;
    }
    logger.warn({ endpoint, failed: failed.map((r) => r.name) }, 'health check failed');
    send(res, 503, `${lines.join('\n')}\n${endpoint} check failed: ${failed.map((r) => r.name).join(', ')}\n`);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const mount = Object.entries(options.mounts ?? {}).find(([prefix]) => url.pathname === prefix || url.pathname.startsWith(`${prefix}/`));
    if (mount !== undefined) {
      await mount[1](req, res);
      return;
    }
    const known = url.pathname === '/metrics' || url.pathname in endpoints;
    if (!known || (url.pathname === '/metrics' && options.registry === undefined)) {
      send(res, 404, `404 page not found: ${url.pathname}\n`);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      send(res, 405, `method ${req.method ?? ''} not allowed\n`);
      return;
    }
    if (url.pathname === '/metrics') {
      const registry = options.registry as Registry;
      send(res, 200, await registry.metrics(), registry.contentType);
      return;
    }
    await probe(res, url.pathname, url.searchParams.has('verbose'));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err: err instanceof Error ? err.message : String(err), path: req.url }, 'health server request failed');
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    });
  });

  const { address, close } = await listenOn(server, options.port ?? 8080, options.host, 'health server', logger);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const urlHost = address.address === '::' || address.address === '0.0.0.0' ? 'localhost' : host;
  return {
    url: `http://${urlHost}:${address.port}`,
    port: address.port,
    close,
  };
}
