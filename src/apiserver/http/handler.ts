import type { IncomingMessage, ServerResponse } from 'node:http';
import { aggregatedDiscovery, aggregatedDiscoveryVersion, coreVersions, groupDocument, groupList, resourceList } from '../api/discovery.js';
import type { RequestInfo } from '../faults.js';
import { sendError, sendJson } from './httpIo.js';
import { openApiDocument } from '../api/openapi.js';
import type { ResourceRequest, ServerContext } from './requestContext.js';
import type { RequestLog, RequestLogEntry } from './requestLog.js';
import { handleCreate, handleDelete, handleDeleteCollection, handleGet, handleList, handlePatch, handleUpdate } from './resourceHandlers.js';
import { parseRoute, type ResourceRoute, type Route } from './router.js';
import { scaleHandlers } from './scale.js';
import { ApiError, badRequest, methodNotAllowed, routeNotFound, statusFor, unauthorized } from '../api/statusError.js';
import { handleWatch } from '../watch/watchHandler.js';

/**
 * The HTTP entry point: routes a request, records it in the request log,
 * applies authentication and injected faults, and turns every error into a
 * Status response. A client mistake is never a 5xx; a server bug is a 500
 * with the error logged, never a crash.
 */

export interface HandlerContext extends ServerContext {
  readonly token: string | undefined;
  readonly requestLog: RequestLog;
  readonly startedAt: number;
  /** host:port, for `/api`'s serverAddressByClientCIDRs. */
  readonly address: () => string;
  /** Waits `ms` unless the server closes first. */
  readonly sleep: (ms: number) => Promise<void>;
}

const versionInfo = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0+rxkube',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2024-12-11T00:00:00Z',
  goVersion: 'go1.23.3',
  compiler: 'gc',
  platform: 'linux/amd64',
};

function parseBool(value: string | null): boolean {
  return value !== null && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value);
}

function resourceVerb(route: ResourceRoute, method: string, query: URLSearchParams): string {
  // As in kube's RequestInfo, the legacy /watch/ prefix makes any method a watch (which only GET may do).
  if (route.watchPrefix) return 'watch';
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (route.watchPrefix || parseBool(query.get('watch'))) return 'watch';
      return route.name === undefined ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return route.name === undefined ? 'deletecollection' : 'delete';
    default:
      return method.toLowerCase();
  }
}

function describe(route: Route, method: string, query: URLSearchParams): RequestInfo & { name?: string; version?: string } {
  switch (route.kind) {
    case 'resource':
      return {
        verb: resourceVerb(route, method, query),
        group: route.group,
        version: route.version,
        resource: route.resource,
        subresource: route.subresource,
        namespace: route.namespace,
        name: route.name,
      };
    case 'coreVersions':
    case 'groups':
    case 'group':
    case 'groupVersion':
    case 'root':
      return { verb: 'discovery' };
    case 'openapi':
      return { verb: 'openapi' };
    case 'version':
      return { verb: 'version' };
    case 'health':
      return { verb: 'health' };
    default:
      return { verb: 'unknown' };
  }
}

function authorized(ctx: HandlerContext, req: IncomingMessage): boolean {
  if (ctx.token === undefined) return true;
  return req.headers.authorization === `Bearer ${ctx.token}`;
}

function sendDiscovery(req: IncomingMessage, res: ServerResponse, ctx: HandlerContext, core: boolean): void {
  const aggregated = aggregatedDiscoveryVersion(req.headers.accept);
  if (aggregated !== undefined) {
    const body = aggregatedDiscovery(ctx.cluster.registry, core, `apidiscovery.k8s.io/${aggregated}`);
    sendJson(res, 200, body, { 'Content-Type': `application/json;g=apidiscovery.k8s.io;v=${aggregated};as=APIGroupDiscoveryList` });
    return;
  }
  sendJson(res, 200, core ? coreVersions(ctx.address()) : groupList(ctx.cluster.registry));
}

async function dispatchResource(ctx: HandlerContext, req: IncomingMessage, res: ServerResponse, route: ResourceRoute, url: URL, log: RequestLogEntry): Promise<void> {
  const type = ctx.cluster.registry.lookup(route.group, route.version, route.resource);
  if (type === undefined) throw routeNotFound();
  if (!type.namespaced && route.namespace !== undefined) throw routeNotFound();
  if (type.namespaced && route.namespace === undefined && route.name !== undefined) throw routeNotFound();
  const sub = route.subresource;
  if (sub !== undefined) {
    const served = (sub === 'status' && type.status) || (sub === 'scale' && type.scale !== undefined) || (sub === 'finalize' && type.extraSubresources?.some((s) => s.name === 'finalize'));
    if (!served) throw routeNotFound();
  }
  const r: ResourceRequest = {
    server: ctx,
    req,
    res,
    query: url.searchParams,
    type,
    namespace: route.namespace,
    name: route.name,
    subresource: sub,
    verb: log.verb,
    log,
    warnings: [],
  };
  switch (log.verb) {
    case 'get':
      if (sub === 'scale') return scaleHandlers.get(r);
      if (sub === 'finalize') throw methodNotAllowed();
      return handleGet(r);
    case 'list':
      return handleList(r);
    case 'watch':
      if (sub !== undefined || (req.method !== 'GET' && req.method !== 'HEAD')) throw methodNotAllowed();
      return handleWatch(r);
    case 'create':
      return handleCreate(r);
    case 'update':
      return handleUpdate(r);
    case 'patch':
      if (sub === 'finalize') throw methodNotAllowed();
      return handlePatch(r);
    case 'delete':
      return handleDelete(r);
    case 'deletecollection':
      return handleDeleteCollection(r);
    default:
      throw methodNotAllowed();
  }
}

async function dispatch(ctx: HandlerContext, req: IncomingMessage, res: ServerResponse, route: Route, url: URL, log: RequestLogEntry): Promise<void> {
  const method = req.method ?? 'GET';
  if (route.kind !== 'resource' && method !== 'GET' && method !== 'HEAD') throw methodNotAllowed();
  switch (route.kind) {
    case 'resource':
      return dispatchResource(ctx, req, res, route, url, log);
    case 'root':
      return sendJson(res, 200, { paths: ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/openapi/v2', '/openapi/v3', '/readyz', '/version'] });
    case 'version':
      return sendJson(res, 200, versionInfo);
    case 'health':
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return;
    case 'coreVersions':
      return sendDiscovery(req, res, ctx, true);
    case 'groups':
      return sendDiscovery(req, res, ctx, false);
    case 'group': {
      const doc = groupDocument(ctx.cluster.registry, route.group);
      if (doc === undefined) throw routeNotFound();
      return sendJson(res, 200, doc);
    }
    case 'groupVersion': {
      const doc = resourceList(ctx.cluster.registry, route.group, route.version);
      if (doc === undefined) throw routeNotFound();
      return sendJson(res, 200, doc);
    }
    case 'openapi': {
      const doc = openApiDocument(ctx.cluster.registry, route.path, url.searchParams);
      if (doc === undefined) throw routeNotFound();
      return sendJson(res, 200, doc);
    }
    default:
      throw routeNotFound();
  }
}

export function createRequestHandler(ctx: HandlerContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      // Node's parser passes an absolute-form target that is no URL (`GET http://[ HTTP/1.1`).
      req.resume();
      sendError(res, badRequest(`the request target ${JSON.stringify(req.url)} is not a valid URL`));
      return;
    }
    const route = parseRoute(url.pathname);
    const info = describe(route, req.method ?? 'GET', url.searchParams);
    const log: RequestLogEntry = {
      ...info,
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: 0,
      at: Date.now() - ctx.startedAt,
    };
    ctx.requestLog.add(log);
    const settle = (): void => {
      if (log.status === 0 && res.headersSent) log.status = res.statusCode;
    };
    res.on('finish', settle);
    res.on('close', settle);
    void (async () => {
      if (!authorized(ctx, req)) throw unauthorized();
      const delay = ctx.faults.delayFor(info);
      if (delay > 0) await ctx.sleep(delay);
      const injected = ctx.faults.errorFor(info);
      if (injected !== undefined) throw injected;
      await dispatch(ctx, req, res, route, url, log);
    })().catch((error: unknown) => {
      let apiError: ApiError;
      if (error instanceof ApiError) apiError = error;
      else {
        ctx.logger.error({ err: error, method: req.method, path: url.pathname }, 'apiserver: request failed');
        apiError = statusFor(500, { message: `Internal error occurred: ${(error as Error)?.message ?? String(error)}` });
      }
      if (res.headersSent) {
        res.destroy();
        return;
      }
      log.status = apiError.code;
      // Drain what is left of the body so the connection stays usable.
      req.resume();
      sendError(res, apiError);
    });
  };
}
