import type { KubeObject } from '../../types.js';
import { isPlainObject } from '../../util/json.js';
import { toVersion } from '../api/conversion.js';
import { apiVersionOf, type ResourceType } from '../api/resourceType.js';
import { ApiError, badRequest } from '../api/statusError.js';
import type { ExchangeContext, PreparedRequest } from '../http/exchange.js';
import { failure, refusal } from '../http/exchange.js';
import { errorResponse, jsonResponse, mediaType, parseJson, parseObjectBody, type ApiResponse } from '../http/httpIo.js';
import { tableOptions } from '../http/table.js';
import { applyPatch, applyPatchType, PatchError } from '../writes/patch.js';
import { convertObjects, webhookConversionFor, type WebhookConversion } from './conversionWebhook.js';

/**
 * A request through a version of a custom resource that is not its storage
 * version, when the CRD converts through a webhook: the request is served
 * through the storage version, and what goes in and out is converted by
 * the webhook. A write's body is converted to the storage version; a merge
 * or JSON patch is applied to the live object converted to the request's
 * version (as kube applies it), and written back converted; every object
 * answered (one, or a list's items) is converted to the request's
 * version. Server-side apply through such a version is refused (a limit
 * of this server); Tables are served as the storage version prints them.
 */

export interface ConvertedRoute {
  conversion: WebhookConversion;
  /** The same resource in its storage version. */
  storageType: ResourceType;
}

/** How a request must be converted, or undefined when it needs no conversion webhook. */
export function conversionOf(ctx: ExchangeContext, prepared: PreparedRequest): ConvertedRoute | undefined {
  const { type, route } = prepared;
  if (type === undefined || route.kind !== 'resource') return undefined;
  const conversion = webhookConversionFor(ctx.cluster, type);
  if (conversion === undefined || conversion.storageVersion === type.version) return undefined;
  const storageType = ctx.cluster.registry.lookup(type.group, conversion.storageVersion, type.resource);
  return storageType === undefined ? undefined : { conversion, storageType };
}

/** The same request addressed to the storage version. */
export function atStorageVersion(prepared: PreparedRequest, storageType: ResourceType, change: { method?: string; verb?: string; contentType?: string } = {}): PreparedRequest {
  const url = new URL(prepared.request.url);
  const segments = url.pathname.split('/');
  const at = segments.indexOf(prepared.type?.version ?? '', 2);
  if (at >= 0) segments[at] = storageType.version;
  url.pathname = segments.join('/');
  const headers = change.contentType === undefined ? prepared.request.headers : { ...prepared.request.headers, contentType: change.contentType };
  const route = prepared.route.kind === 'resource' ? { ...prepared.route, version: storageType.version } : prepared.route;
  return {
    ...prepared,
    request: { ...prepared.request, url, method: change.method ?? prepared.request.method, headers },
    route,
    type: storageType,
    log: { ...prepared.log, ...(change.verb !== undefined ? { verb: change.verb } : {}) },
  };
}

type Serve = (prepared: PreparedRequest, body: Buffer) => Promise<ApiResponse>;

async function convertAnswer(route: ConvertedRoute, type: ResourceType, response: ApiResponse, table: boolean): Promise<ApiResponse> {
  if (response.status >= 300 || table) return response;
  const body = JSON.parse(response.body) as Record<string, unknown>;
  const desired = apiVersionOf(type);
  if (body.kind === type.listKind && Array.isArray(body.items)) {
    const items = await convertObjects(route.conversion, type, body.items as KubeObject[], desired);
    return jsonResponse(response.status, { ...body, apiVersion: desired, items }, { ...response.headers });
  }
  if (body.kind === type.kind) {
    const [object] = await convertObjects(route.conversion, type, [body as unknown as KubeObject], desired);
    return jsonResponse(response.status, object, { ...response.headers });
  }
  return response;
}

async function convertBody(route: ConvertedRoute, type: ResourceType, body: unknown): Promise<unknown> {
  if (!isPlainObject(body) || body.kind !== type.kind || body.apiVersion !== apiVersionOf(type)) return body;
  const [converted] = await convertObjects(route.conversion, type, [body as unknown as KubeObject], apiVersionOf(route.storageType));
  return converted;
}

async function patchThrough(ctx: ExchangeContext, prepared: PreparedRequest, route: ConvertedRoute, body: Buffer, serve: Serve): Promise<ApiResponse> {
  const type = prepared.type as ResourceType;
  const contentType = mediaType(prepared.request.headers.contentType);
  if (contentType === applyPatchType) {
    throw badRequest(`server-side apply through ${apiVersionOf(type)}, which a conversion webhook converts, is not supported by this server: apply through ${apiVersionOf(route.storageType)}`);
  }
  const r = prepared.route as Extract<PreparedRequest['route'], { kind: 'resource' }>;
  const patch = parseJson(body.toString('utf8'));
  for (let attempt = 0; ; attempt++) {
    const live = ctx.cluster.get(route.storageType, r.namespace, r.name as string);
    const [inRequestVersion] = await convertObjects(route.conversion, type, [toVersion(route.storageType, live.object)], apiVersionOf(type));
    let patched: object;
    try {
      patched = applyPatch(contentType, inRequestVersion as KubeObject, patch, { kind: { group: type.group, kind: type.kind }, builtin: false });
    } catch (error) {
      if (error instanceof PatchError) throw new ApiError(error.code, error.reason, error.message);
      throw error;
    }
    const stored = (await convertBody(route, type, patched)) as KubeObject;
    const put = { ...stored, metadata: { ...stored.metadata, resourceVersion: live.object.metadata.resourceVersion } };
    const response = await serve(atStorageVersion(prepared, route.storageType, { method: 'PUT', verb: 'update', contentType: 'application/json' }), Buffer.from(JSON.stringify(put)));
    // Someone wrote in between: patch the new state, as kube's update retries.
    if (response.status === 409 && attempt < 3) continue;
    return response;
  }
}

/** Answers a request that needs the conversion webhook. Never throws: an error is its Status. */
export async function answerConverted(ctx: ExchangeContext, prepared: PreparedRequest, body: Buffer, route: ConvertedRoute, serve: Serve): Promise<ApiResponse> {
  const refused = refusal(ctx, prepared);
  if (refused !== undefined) return refused;
  const type = prepared.type as ResourceType;
  const table = tableOptions(prepared.request.headers.accept, prepared.request.url.searchParams) !== undefined;
  let response: ApiResponse;
  try {
    let served: ApiResponse;
    switch (prepared.info.verb) {
      case 'create':
      case 'update': {
        const converted = await convertBody(route, type, parseObjectBody(body, prepared.request.headers.contentType));
        served = await serve(atStorageVersion(prepared, route.storageType, { contentType: 'application/json' }), Buffer.from(JSON.stringify(converted)));
        break;
      }
      case 'patch':
        served = await patchThrough(ctx, prepared, route, body, serve);
        break;
      default:
        served = await serve(atStorageVersion(prepared, route.storageType), body);
    }
    response = await convertAnswer(route, type, served, table);
  } catch (error) {
    response = errorResponse(failure(ctx, prepared, error));
  }
  prepared.log.status = response.status;
  return response;
}
