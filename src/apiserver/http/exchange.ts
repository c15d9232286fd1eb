import { aggregatedDiscovery, aggregatedDiscoveryVersion, coreVersions, groupDocument, groupList, resourceList } from '../api/discovery.js';
import { openApiDocument } from '../api/openapi.js';
import type { ResourceType } from '../api/resourceType.js';
import type { Access } from '../auth/access.js';
import { requestAttributes } from '../auth/requestAttributes.js';
import type { UserInfo } from '../auth/user.js';
import { ApiError, methodNotAllowed, requestEntityTooLarge, routeNotFound, statusFor, unauthorized } from '../api/statusError.js';
import type { RequestInfo } from '../faults.js';
import { applyPatchType } from '../writes/patch.js';
import { errorResponse, jsonResponse, jsonTextResponse, maxBodyBytes, mediaType, parseObjectBody, type ApiResponse } from './httpIo.js';
import type { BodyRequest, RequestHeaders, ResourceRequest, ServerContext } from './requestContext.js';
import type { RequestLog, RequestLogEntry } from './requestLog.js';
import { handleCreate, handleDelete, handleDeleteCollection, handleGet, handleList, handlePatch, handleUpdate } from './resourceHandlers.js';
import { parseRoute, type ResourceRoute, type Route } from './router.js';
import { scaleHandlers } from './scale.js';
import { isContainerSubresource, noContainersError } from './noContainers.js';

/**
 * One request through the server, from routing to the answer, whatever
 * carried it: the HTTP handler (handler.ts) and the in-process clients of
 * `rxkube/testing` both go through these steps, so they meet the same
 * routes, faults, validation, writes and Status errors. `prepare` routes
 * and logs; `admit` applies authentication, authorization (with RBAC on)
 * and injected faults; `answer`
 * serves everything but a watch (which only HTTP streams), and never throws:
 * a client mistake is a 4xx Status, a server bug a logged 500.
 */

export interface ExchangeContext extends ServerContext {
  /** The admin token requests need (any request passes without one, unless RBAC is on). */
  readonly token: string | undefined;
  /** Authentication, authorization (RBAC, when on), issued tokens and access reviews. */
  readonly access: Access;
  readonly requestLog: RequestLog;
  /** The server's clock (ms since the epoch) and when it started, for the request log. */
  readonly now: () => number;
  readonly startedAt: number;
  /** host:port, for `/api`'s serverAddressByClientCIDRs. */
  readonly address: () => string;
}

/** A request as the server reads it: the method, the URL (path and query) and the headers it looks at. */
export interface ApiRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: RequestHeaders;
}

/** A request routed and logged, ready to be admitted and answered. */
export interface PreparedRequest {
  readonly request: ApiRequest;
  readonly route: Route;
  /** What it is, for faults (and the log entry, which also records its answer's status). */
  readonly info: RequestInfo;
  readonly log: RequestLogEntry;
  /** The resource type it addresses, when the route names one that is served. */
  readonly type: ResourceType | undefined;
  /** Who sent it, once authenticated (see `userOf`): undefined inside when no token this server knows. */
  authentication?: { readonly user: UserInfo | undefined; acting?: UserInfo };
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
      if (parseBool(query.get('watch'))) return 'watch';
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

function describe(route: Route, request: ApiRequest, type: ResourceType | undefined): RequestInfo {
  switch (route.kind) {
    case 'resource': {
      const verb = resourceVerb(route, request.method, request.url.searchParams);
      return {
        verb,
        group: route.group,
        version: route.version,
        resource: route.resource,
        subresource: route.subresource,
        namespace: route.namespace,
        name: route.name,
        ...(type !== undefined ? { kind: type.kind } : {}),
        ...(verb === 'patch' && mediaType(request.headers.contentType) === applyPatchType ? { apply: true } : {}),
      };
    }
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

/** Routes a request and adds it to the request log. */
export function prepare(ctx: ExchangeContext, request: ApiRequest): PreparedRequest {
  const route = parseRoute(request.url.pathname);
  const type = route.kind === 'resource' ? ctx.cluster.registry.lookup(route.group, route.version, route.resource) : undefined;
  const info = describe(route, request, type);
  const { kind: _kind, apply: _apply, ...logged } = info;
  const log: RequestLogEntry = {
    ...logged,
    method: request.method,
    path: request.url.pathname,
    query: Object.fromEntries(request.url.searchParams),
    status: 0,
    at: ctx.now() - ctx.startedAt,
  };
  ctx.requestLog.add(log);
  return { request, route, info, log, type };
}

/** The user a request's bearer token names, authenticated once per request (undefined for none this server knows); the impersonated one, once admitted. */
export function userOf(ctx: ExchangeContext, prepared: PreparedRequest): UserInfo | undefined {
  prepared.authentication ??= { user: ctx.access.authenticator.authenticate(prepared.request.headers.authorization) };
  return prepared.authentication.acting ?? prepared.authentication.user;
}

/** The user a request acts as: its own, or (with RBAC) the one it may impersonate. */
function actingUserOf(ctx: ExchangeContext, prepared: PreparedRequest): UserInfo | undefined {
  const user = userOf(ctx, prepared);
  const headers = prepared.request.headers;
  const authentication = prepared.authentication as NonNullable<PreparedRequest['authentication']>;
  if (user === undefined || authentication.acting !== undefined || (headers.impersonateUser === undefined && headers.impersonateGroups === undefined)) return user;
  authentication.acting = ctx.access.impersonate(user, headers);
  return authentication.acting;
}

/**
 * Whether the request may go on to authorization: without RBAC, when it
 * carries the server's token (or any, when it asks for none) or one the
 * server issued; with RBAC, when it carries a token that names a user.
 */
export function authenticated(ctx: ExchangeContext, prepared: PreparedRequest): boolean {
  if (ctx.access.authorizer === undefined && (ctx.token === undefined || prepared.request.headers.authorization === `Bearer ${ctx.token}`)) return true;
  return userOf(ctx, prepared) !== undefined;
}

/** Throws the answer a request gets instead of being served: 401 without a valid token, 403 when RBAC refuses it, or an injected fault. */
export function admit(ctx: ExchangeContext, prepared: PreparedRequest): void {
  if (!authenticated(ctx, prepared)) throw unauthorized();
  if (ctx.access.authorizer !== undefined) {
    const { route, info, request } = prepared;
    ctx.access.authorize(actingUserOf(ctx, prepared), requestAttributes(route, info.verb, request.method, request.url.pathname, request.url.searchParams));
  }
  const injected = ctx.faults.errorFor(prepared.info);
  if (injected !== undefined) throw injected;
}

/** The request to a resource, checked against what the type serves, for its handler. */
export function resourceRequest(ctx: ExchangeContext, prepared: PreparedRequest): ResourceRequest {
  const { route, type, request, log } = prepared;
  if (route.kind !== 'resource' || type === undefined) throw routeNotFound();
  if (!type.namespaced && route.namespace !== undefined) throw routeNotFound();
  if (type.namespaced && route.namespace === undefined && route.name !== undefined) throw routeNotFound();
  const sub = route.subresource;
  if (sub !== undefined) {
    const served = (sub === 'status' && type.status) || (sub === 'scale' && type.scale !== undefined) || type.extraSubresources?.some((s) => s.name === sub);
    if (!served) throw routeNotFound();
  }
  return {
    server: ctx,
    method: request.method,
    headers: request.headers,
    query: request.url.searchParams,
    type,
    namespace: route.namespace,
    name: route.name,
    subresource: sub,
    verb: log.verb,
    log,
    warnings: [],
    guard: ctx.access.writeGuard(userOf(ctx, prepared), { namespace: route.namespace ?? '', name: route.name ?? '' }),
  };
}

function serveResource(r: BodyRequest): ApiResponse {
  const sub = r.subresource;
  if (isContainerSubresource(sub)) throw noContainersError(r);
  switch (r.verb) {
    case 'get':
      if (sub === 'scale') return scaleHandlers.get(r);
      if (sub === 'finalize') throw methodNotAllowed();
      return handleGet(r);
    case 'list':
      return handleList(r);
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
      // Watches are streamed by the HTTP handler; nothing else gets here.
      throw methodNotAllowed();
  }
}

function discovery(ctx: ExchangeContext, request: ApiRequest, core: boolean): ApiResponse {
  const aggregated = aggregatedDiscoveryVersion(request.headers.accept);
  if (aggregated !== undefined) {
    const body = aggregatedDiscovery(ctx.cluster.registry, core, `apidiscovery.k8s.io/${aggregated}`);
    return jsonResponse(200, body, { 'Content-Type': `application/json;g=apidiscovery.k8s.io;v=${aggregated};as=APIGroupDiscoveryList` });
  }
  return jsonResponse(200, core ? coreVersions(ctx.address()) : groupList(ctx.cluster.registry));
}

function serve(ctx: ExchangeContext, prepared: PreparedRequest, body: Buffer): ApiResponse {
  const { route, request } = prepared;
  // HTTP stops reading at the limit; a body handed over in process (the memory clients) meets it here.
  if (body.length > maxBodyBytes) throw requestEntityTooLarge(maxBodyBytes);
  if (route.kind !== 'resource' && request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed();
  switch (route.kind) {
    case 'resource': {
      const r = resourceRequest(ctx, prepared);
      if (!ctx.access.serves(r.type, r.subresource)) return serveResource({ ...r, body });
      // Access reviews and TokenRequests are answered, never stored.
      if (r.verb !== 'create') throw methodNotAllowed();
      return jsonResponse(201, ctx.access.answer(r.type, r.namespace, r.name, parseObjectBody(body, r.headers.contentType), userOf(ctx, prepared)));
    }
    case 'root':
      return jsonResponse(200, { paths: ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/openapi/v2', '/openapi/v3', '/readyz', '/version'] });
    case 'version':
      return jsonResponse(200, versionInfo);
    case 'health':
      return { status: 200, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: 'ok' };
    case 'coreVersions':
      return discovery(ctx, request, true);
    case 'groups':
      return discovery(ctx, request, false);
    case 'group': {
      const doc = groupDocument(ctx.cluster.registry, route.group);
      if (doc === undefined) throw routeNotFound();
      return jsonResponse(200, doc);
    }
    case 'groupVersion': {
      const doc = resourceList(ctx.cluster.registry, route.group, route.version);
      if (doc === undefined) throw routeNotFound();
      return jsonResponse(200, doc);
    }
    case 'openapi': {
      const doc = openApiDocument(ctx.cluster.registry, route.path, request.headers.accept);
      if (doc === undefined) throw routeNotFound();
      const headers = { 'Content-Type': doc.contentType, Vary: 'Accept' };
      return typeof doc.body === 'string' ? jsonTextResponse(200, doc.body, headers) : { status: 200, headers, body: '', binary: doc.body };
    }
    default:
      throw routeNotFound();
  }
}

/** The Status answer for anything a step threw: an `ApiError` as it is, anything else a logged 500. */
export function failure(ctx: ExchangeContext, prepared: PreparedRequest, error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  ctx.logger.error({ err: error, method: prepared.request.method, path: prepared.request.url.pathname }, 'apiserver: request failed');
  return statusFor(500, { message: `Internal error occurred: ${(error as Error)?.message ?? String(error)}` });
}

/** What `step` answers, or the Status of what it threw; the log entry gets the status. Never throws. */
function settle<R extends ApiResponse | undefined>(ctx: ExchangeContext, prepared: PreparedRequest, step: () => R): R | ApiResponse {
  let response: R | ApiResponse;
  try {
    response = step();
  } catch (error) {
    response = errorResponse(failure(ctx, prepared, error));
  }
  if (response !== undefined) prepared.log.status = response.status;
  return response;
}

/** Answers an admitted request that is not a watch; the log entry gets the status. Never throws. */
export function serveAdmitted(ctx: ExchangeContext, prepared: PreparedRequest, body: Buffer): ApiResponse {
  return settle(ctx, prepared, () => serve(ctx, prepared, body));
}

/** The answer a request gets instead of being served (see `admit`), or undefined when it is admitted. Never throws. */
export function refusal(ctx: ExchangeContext, prepared: PreparedRequest): ApiResponse | undefined {
  return settle(ctx, prepared, () => {
    admit(ctx, prepared);
    return undefined;
  });
}

/** Admits and answers a request that is not a watch; the log entry gets the status. Never throws. */
export function answer(ctx: ExchangeContext, prepared: PreparedRequest, body: Buffer): ApiResponse {
  return refusal(ctx, prepared) ?? serveAdmitted(ctx, prepared, body);
}
