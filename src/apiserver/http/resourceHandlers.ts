import type { KubeObject } from '../../types.js';
import { toVersion } from '../api/conversion.js';
import { parseDeleteOptions } from '../writes/deletion.js';
import { jsonResponse, jsonTextResponse, mediaType, parseJson, parseObjectBody, parseOptionalJson, parseYamlBody, type ApiResponse } from './httpIo.js';
import { isPlainObject } from '../../util/json.js';
import { listPage, type ListPage } from '../storage/list.js';
import { managerFromUserAgent } from '../writes/objectMeta.js';
import { acceptedPatchTypes, applyPatch, applyPatchType, PatchError } from '../writes/patch.js';
import { objectJson, warningHeaders, type BodyRequest, type ResourceRequest } from './requestContext.js';
import { apiVersionOf, type ResourceType } from '../api/resourceType.js';
import { parseFilter } from '../selectors/selectors.js';
import { parseShardFilter } from '../selectors/shardFilter.js';
import { ApplyConflictError, serverSideApply } from '../writes/serverSideApply.js';
import { ApiError, badRequest, invalid, methodNotAllowed, notFound, unsupportedMediaType } from '../api/statusError.js';
import { scaleHandlers } from './scale.js';
import { tableOptions, toTable } from './table.js';
import { checkTarget, metadataTarget, partialObjectMetadata, partialObjectMetadataListJson } from './partialMetadata.js';
import type { WriteOptions } from '../cluster.js';
import { checkBuiltinFields, resetFieldsFor } from '../writes/writes.js';
import { goValue } from '../writes/goValue.js';

/**
 * The verbs on resources: get, list, create, update, patch (JSON, merge,
 * strategic merge, apply), delete and deletecollection, on the main
 * endpoint and the `/status`, `/scale` and namespace `/finalize`
 * subresources.
 */

export function writeOptions(r: ResourceRequest): WriteOptions {
  const manager = r.query.get('fieldManager') ?? managerFromUserAgent(r.headers.userAgent);
  if (manager.length > 128) {
    throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [
      { field: 'fieldManager', type: 'Too long', detail: 'may not be more than 128 bytes' },
    ]);
  }
  const options: WriteOptions = { manager, now: r.server.cluster.timestamp(), dryRun: r.query.getAll('dryRun').includes('All'), warnings: r.warnings };
  if (r.guard !== undefined) options.guard = r.guard;
  if (r.subresource === 'status') options.subresource = 'status';
  const validation = r.query.get('fieldValidation');
  if (validation !== null && validation !== '') {
    if (validation !== 'Strict' && validation !== 'Warn' && validation !== 'Ignore') {
      throw invalid({ group: 'meta.k8s.io', kind: 'CreateOptions' }, '', [
        { field: 'fieldValidation', type: 'Unsupported value', detail: `${JSON.stringify(validation)}: supported values: "Ignore", "Strict", "Warn"` },
      ]);
    }
    options.fieldValidation = validation;
  }
  return options;
}

function requireName(r: ResourceRequest): string {
  if (r.name === undefined) throw methodNotAllowed();
  return r.name;
}

function objectResponse(r: ResourceRequest, status: number, json: string): ApiResponse {
  return jsonTextResponse(status, json, warningHeaders(r.warnings));
}

export function handleGet(r: ResourceRequest): ApiResponse {
  const stored = r.server.cluster.get(r.type, r.namespace, requireName(r));
  const table = tableOptions(r.headers.accept, r.query);
  if (table !== undefined) return jsonResponse(200, toTable(r.type, [stored], { rv: stored.rv }, table));
  const metadataOnly = metadataTarget(r.headers.accept);
  if (metadataOnly !== undefined) {
    checkTarget(metadataOnly, 'get');
    return objectResponse(r, 200, JSON.stringify(partialObjectMetadata(r.type, stored)));
  }
  return objectResponse(r, 200, objectJson(r.type, stored));
}

function listJson(type: ResourceType, page: ListPage): string {
  const metadata: Record<string, unknown> = { resourceVersion: String(page.rv) };
  if (page.continueToken !== undefined) metadata.continue = page.continueToken;
  if (page.remainingItemCount !== undefined) metadata.remainingItemCount = page.remainingItemCount;
  if (page.shardSelector !== undefined) metadata.shardInfo = { selector: page.shardSelector };
  const head = `{"kind":${JSON.stringify(type.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(type))},"metadata":${JSON.stringify(metadata)},"items":[`;
  return `${head}${page.items.map((s) => objectJson(type, s)).join(',')}]}`;
}

function parseLimit(text: string | null): number | undefined {
  if (text === null || text === '') return undefined;
  if (!/^-?\d+$/.test(text)) throw badRequest(`limit: Invalid value: ${JSON.stringify(text)}: must be an integer`);
  return Number(text);
}

export function handleList(r: ResourceRequest): ApiResponse {
  const shardText = r.query.get('shardSelector');
  const shard = parseShardFilter(shardText, r.server.shardedListAndWatch);
  const filter = { ...parseFilter(r.type, r.query.get('labelSelector'), r.query.get('fieldSelector')), shard };
  const page = listPage(r.server.cluster.store, r.type, {
    namespace: r.namespace,
    filter,
    limit: parseLimit(r.query.get('limit')),
    continueToken: r.query.get('continue') ?? undefined,
    resourceVersion: r.query.get('resourceVersion') ?? undefined,
    resourceVersionMatch: r.query.get('resourceVersionMatch') ?? undefined,
  });
  // KEP-5866: the applied selector is echoed as sent, so a client can tell it was honoured.
  if (shard !== undefined && shardText !== null) page.shardSelector = shardText;
  const table = tableOptions(r.headers.accept, r.query);
  if (table !== undefined) {
    return jsonResponse(200, toTable(r.type, page.items, { rv: page.rv, continueToken: page.continueToken, remainingItemCount: page.remainingItemCount }, table));
  }
  const metadataOnly = metadataTarget(r.headers.accept);
  if (metadataOnly !== undefined) {
    checkTarget(metadataOnly, 'list');
    return objectResponse(r, 200, partialObjectMetadataListJson(r.type, page));
  }
  return objectResponse(r, 200, listJson(r.type, page));
}

export function handleCreate(r: BodyRequest): ApiResponse {
  if (r.subresource !== undefined || r.name !== undefined) throw methodNotAllowed();
  if (r.type.namespaced && r.namespace === undefined) throw methodNotAllowed();
  const body = parseObjectBody(r.body, r.headers.contentType);
  const result = r.server.cluster.create(r.type, r.namespace, body, { ...writeOptions(r), ownsBody: true });
  return objectResponse(r, 201, objectJson(r.type, result.stored));
}

export function handleUpdate(r: BodyRequest): ApiResponse {
  const name = requireName(r);
  const body = parseObjectBody(r.body, r.headers.contentType);
  if (r.subresource === 'scale') return scaleHandlers.update(r, body, writeOptions(r));
  if (r.subresource === 'finalize') {
    const live = r.server.cluster.get(r.type, undefined, name);
    const finalizers = isPlainObject(body) && isPlainObject(body.spec) && Array.isArray(body.spec.finalizers) ? body.spec.finalizers : [];
    const stored = r.server.cluster.finalizeNamespace(live, finalizers.map(String), writeOptions(r).manager);
    r.server.cluster.settle();
    return objectResponse(r, 200, objectJson(r.type, stored));
  }
  const result = r.server.cluster.update(r.type, r.namespace, name, body, { ...writeOptions(r), ownsBody: true });
  return objectResponse(r, 200, objectJson(r.type, result.stored));
}

function patchErrorToApi(error: unknown): unknown {
  if (error instanceof PatchError) return new ApiError(error.code, error.reason, error.message);
  if (error instanceof ApplyConflictError) {
    return new ApiError(error.code, error.reason, error.message, {
      causes: error.causes.map((c) => ({ reason: c.type, message: c.message, field: c.field })),
    });
  }
  return error;
}

function checkApplyBody(r: ResourceRequest, body: unknown, name: string): KubeObject {
  if (!isPlainObject(body)) throw badRequest(`the apply configuration must be an object, got ${JSON.stringify(body)}`);
  const meta = isPlainObject(body.metadata) ? body.metadata : {};
  if (meta.name !== undefined && meta.name !== name) {
    throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
  }
  if (typeof body.apiVersion !== 'string' || body.apiVersion === '') {
    throw badRequest('apiVersion must be set in an apply configuration');
  }
  if (typeof body.kind !== 'string' || body.kind === '') throw badRequest('kind must be set in an apply configuration');
  if (body.apiVersion !== apiVersionOf(r.type) || body.kind !== r.type.kind) {
    throw badRequest(`the API version in the data (${body.apiVersion}) does not match the expected API version (${apiVersionOf(r.type)})`);
  }
  if (meta.managedFields !== undefined && meta.managedFields !== null) {
    throw badRequest('metadata.managedFields must be nil');
  }
  return { ...body, metadata: { ...meta, name, ...(r.type.namespaced ? { namespace: r.namespace } : {}) } } as KubeObject;
}

export function handlePatch(r: BodyRequest): ApiResponse {
  const name = requireName(r);
  const contentType = mediaType(r.headers.contentType);
  const accepted = acceptedPatchTypes(r.type.builtin);
  if (!accepted.includes(contentType) && !(contentType === 'application/strategic-merge-patch+json')) {
    throw unsupportedMediaType(contentType, accepted);
  }
  const text = r.body.toString('utf8');
  const options = writeOptions(r);
  const cluster = r.server.cluster;
  const apply = contentType === applyPatchType;
  const force = r.query.get('force');
  if (!apply && force !== null) {
    throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [
      { field: 'force', type: 'Forbidden', detail: 'may not be specified for non-apply patch' },
    ]);
  }
  if (apply) {
    const manager = r.query.get('fieldManager');
    if (manager === null || manager === '') {
      throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [
        { field: 'fieldManager', type: 'Required value', detail: 'is required for apply patch' },
      ]);
    }
    const applied = checkApplyBody(r, parseYamlBody(text), name);
    checkBuiltinFields(r.type, applied, { ...options, fromPatch: 'apply' });
    const live = cluster.find(r.type, r.namespace, name);
    if (live === undefined && r.subresource !== undefined) throw notFound(cluster.gr(r.type), name);
    const liveObject = live === undefined ? undefined : toVersion(r.type, live.object);
    let result: { object: object };
    try {
      result = serverSideApply({
        live: liveObject,
        applied,
        manager,
        force: force === 'true',
        kind: { group: r.type.group, kind: r.type.kind },
        builtin: r.type.builtin,
        now: options.now,
        subresource: options.subresource,
        resetFields: resetFieldsFor(r.type, options.subresource, applied, ...(liveObject === undefined ? [] : [liveObject])),
        fieldsCache: cluster.fieldsCache,
      });
    } catch (error) {
      throw patchErrorToApi(error);
    }
    const applyOptions: WriteOptions = { ...options, managedFieldsDone: true, fromPatch: 'apply' };
    if (live === undefined) {
      const created = cluster.create(r.type, r.namespace, result.object, applyOptions);
      return objectResponse(r, 201, objectJson(r.type, created.stored));
    }
    // The apply's own resourceVersion, if it gave one, is a precondition; else it applies to the live version.
    const next = result.object as KubeObject;
    const rv = applied.metadata.resourceVersion;
    const body = { ...next, metadata: { ...next.metadata, resourceVersion: rv === undefined || rv === '' ? live.object.metadata.resourceVersion : rv } };
    const updated = cluster.update(r.type, r.namespace, name, body, applyOptions);
    return objectResponse(r, 200, objectJson(r.type, updated.stored));
  }
  const body = parseJson(text);
  if (r.subresource === 'scale') return scaleHandlers.patch(r, contentType, body, options);
  const live = cluster.get(r.type, r.namespace, name);
  let patched: object;
  try {
    patched = applyPatch(contentType, toVersion(r.type, live.object), body, { kind: { group: r.type.group, kind: r.type.kind }, builtin: r.type.builtin });
  } catch (error) {
    throw patchErrorToApi(error);
  }
  // Kube shows a strategic merge patch as Go prints the decoded patch, other patches as the patched object's JSON.
  const value = contentType === 'application/strategic-merge-patch+json' ? () => goValue(body) : () => JSON.stringify(patched);
  const result = cluster.update(r.type, r.namespace, name, patched, { ...options, fromPatch: { value } });
  return objectResponse(r, 200, objectJson(r.type, result.stored));
}

/** Kube answers an immediate delete with the object for pods and custom resources, with a Status for the rest. */
function returnsDeletedObject(type: ResourceType): boolean {
  return !type.builtin || (type.group === '' && type.resource === 'pods');
}

export function handleDelete(r: BodyRequest): ApiResponse {
  const name = requireName(r);
  if (r.subresource !== undefined) throw methodNotAllowed();
  const options = parseDeleteOptions(parseOptionalJson(r.body.toString('utf8')), r.query);
  const result = r.server.cluster.delete(r.type, r.namespace, name, options);
  if (!result.deleted || returnsDeletedObject(r.type)) return objectResponse(r, 200, objectJson(r.type, result.stored));
  const details: Record<string, string> = { name, kind: r.type.resource };
  if (r.type.group !== '') details.group = r.type.group;
  if (result.stored.object.metadata.uid !== undefined) details.uid = result.stored.object.metadata.uid;
  return jsonResponse(200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details });
}

export function handleDeleteCollection(r: BodyRequest): ApiResponse {
  if (r.subresource !== undefined) throw methodNotAllowed();
  if (r.type.namespaced && r.namespace === undefined) throw methodNotAllowed();
  const options = parseDeleteOptions(parseOptionalJson(r.body.toString('utf8')), r.query);
  const filter = parseFilter(r.type, r.query.get('labelSelector'), r.query.get('fieldSelector'));
  const cluster = r.server.cluster;
  const page = listPage(cluster.store, r.type, {
    namespace: r.namespace,
    filter,
    limit: undefined,
    continueToken: undefined,
    resourceVersion: undefined,
    resourceVersionMatch: undefined,
  });
  const deleted = [];
  for (const item of page.items) {
    const meta = item.object.metadata;
    try {
      deleted.push(cluster.delete(r.type, meta.namespace, meta.name as string, options).stored);
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 404)) throw error;
    }
  }
  return objectResponse(r, 200, listJson(r.type, { rv: cluster.store.resourceVersion, items: deleted }));
}
