import type { KubeObject } from '../../types.js';
import { toVersion } from '../api/conversion.js';
import { errorResponse, jsonTextResponse, type ApiResponse } from '../http/httpIo.js';
import { failure, refusal, resourceRequest, serveAdmitted, type ExchangeContext, type PreparedRequest } from '../http/exchange.js';
import { objectJson, warningHeaders } from '../http/requestContext.js';
import { writeOptions } from '../http/resourceHandlers.js';
import { admitWithWebhooks, anyWebhookFor } from './dispatcher.js';
import type { Operation } from './webhookConfigurations.js';

/**
 * The hook of admission webhooks into the write path. The cluster's writes
 * are synchronous and the webhooks are not, so a write that some webhook
 * may be called for runs twice: first as a dry run, which gives the object
 * exactly as it would be stored (patch applied, defaults set, generated
 * name, uid), which the webhooks see and mutate; then for real, with the
 * mutated object as the body (validated and defaulted again, as kube
 * decodes a mutated object again) on the resourceVersion the webhooks saw.
 * If the object changed in between, the whole round runs again, as kube's
 * update retries on a conflict. Writes no webhook's rules name cost nothing
 * more. The `/scale` subresource and deletecollection are not sent to
 * webhooks (a limit of this server).
 */

const retries = 3;

function operationOf(verb: string): Operation | undefined {
  switch (verb) {
    case 'create':
      return 'CREATE';
    case 'update':
    case 'patch':
      return 'UPDATE';
    case 'delete':
      return 'DELETE';
    default:
      return undefined;
  }
}

function withDryRun(prepared: PreparedRequest): PreparedRequest {
  const url = new URL(prepared.request.url);
  url.searchParams.delete('dryRun');
  url.searchParams.append('dryRun', 'All');
  return { ...prepared, request: { ...prepared.request, url } };
}

function withWarnings(response: ApiResponse, warnings: readonly string[]): ApiResponse {
  if (warnings.length === 0) return response;
  const existing = response.headers.Warning;
  const more = warningHeaders(warnings).Warning as string[];
  return { ...response, headers: { ...response.headers, Warning: [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), ...more] } };
}

async function admitted(ctx: ExchangeContext, prepared: PreparedRequest, body: Buffer, operation: Operation): Promise<ApiResponse> {
  const { cluster, logger } = ctx;
  const type = prepared.type as NonNullable<PreparedRequest['type']>;
  const route = prepared.route as Extract<PreparedRequest['route'], { kind: 'resource' }>;
  const dryRun = prepared.request.url.searchParams.getAll('dryRun').includes('All');
  const base = { type, subresource: route.subresource, namespace: route.namespace, name: route.name, dryRun };
  for (let attempt = 0; ; attempt++) {
    const live = route.name === undefined ? undefined : cluster.find(type, route.namespace, route.name);
    const oldObject = live === undefined ? null : toVersion(type, live.object);
    if (operation === 'DELETE') {
      if (live === undefined) return serveAdmitted(ctx, prepared, body);
      const outcome = await admitWithWebhooks(cluster, logger, { ...base, operation, object: null, oldObject });
      return withWarnings(serveAdmitted(ctx, prepared, body), outcome.warnings);
    }
    const dry = serveAdmitted(ctx, withDryRun(prepared), body);
    if (dry.status >= 300) return dry;
    const created = dry.status === 201;
    const object = JSON.parse(dry.body) as KubeObject;
    const outcome = await admitWithWebhooks(cluster, logger, { ...base, name: object.metadata.name, operation: created ? 'CREATE' : operation, object, oldObject: created ? null : oldObject });
    const now = route.name === undefined ? undefined : cluster.find(type, route.namespace, route.name);
    if (now?.rv !== live?.rv) {
      if (attempt < retries) continue;
    }
    const mutated = outcome.object as KubeObject;
    const r = resourceRequest(ctx, prepared);
    const options = { ...writeOptions(r), ownsBody: true, managedFieldsDone: true };
    let response: ApiResponse;
    if (created) {
      const meta = object.metadata;
      const result = cluster.create(type, route.namespace, mutated, { ...options, ...(meta.uid !== undefined ? { uid: meta.uid } : {}), ...(meta.creationTimestamp !== undefined ? { creationTimestamp: meta.creationTimestamp } : {}) });
      response = jsonTextResponse(201, objectJson(type, result.stored), warningHeaders(r.warnings));
    } else {
      const rv = live?.object.metadata.resourceVersion;
      const next = { ...mutated, metadata: { ...mutated.metadata, ...(rv !== undefined ? { resourceVersion: rv } : {}) } };
      const result = cluster.update(type, route.namespace, route.name as string, next, options);
      response = jsonTextResponse(200, objectJson(type, result.stored), warningHeaders(r.warnings));
    }
    return withWarnings(response, outcome.warnings);
  }
}

/**
 * Answers an authenticated request, calling the admission webhooks of the
 * cluster for a write their rules name. Never throws: an error is its Status.
 * `alreadyAdmitted`: the request passed authentication and faults already
 * (a request the conversion layer serves through another version).
 */
export async function answerWithWebhooks(ctx: ExchangeContext, prepared: PreparedRequest, body: Buffer, alreadyAdmitted = false): Promise<ApiResponse> {
  const refused = alreadyAdmitted ? undefined : refusal(ctx, prepared);
  if (refused !== undefined) return refused;
  const { route, type } = prepared;
  const operation = operationOf(prepared.info.verb);
  if (operation === undefined || type === undefined || route.kind !== 'resource' || route.subresource === 'scale') return serveAdmitted(ctx, prepared, body);
  const probe = { type, subresource: route.subresource, namespace: route.namespace, name: route.name };
  // A patch may create (server-side apply of a new object): a webhook for CREATE may be called for it.
  const operations: Operation[] = prepared.info.verb === 'patch' ? ['UPDATE', 'CREATE'] : [operation];
  if (!operations.some((op) => anyWebhookFor(ctx.cluster, ctx.logger, { ...probe, operation: op }))) return serveAdmitted(ctx, prepared, body);
  let response: ApiResponse;
  try {
    response = await admitted(ctx, prepared, body, operation);
  } catch (error) {
    response = errorResponse(failure(ctx, prepared, error));
  }
  prepared.log.status = response.status;
  return response;
}
