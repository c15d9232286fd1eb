import type { KubeObject } from '../../types.js';
import type { WriteOptions } from '../cluster.js';
import { toVersion } from '../api/conversion.js';
import { jsonResponse, type ApiResponse } from './httpIo.js';
import { cloneJson, isPlainObject, ownMember, setMember } from '../../util/json.js';
import { labelSelectorFromObject, type LabelSelectorObject } from '../selectors/labelSelector.js';
import { applyPatch, PatchError } from '../writes/patch.js';
import type { ResourceRequest } from './requestContext.js';
import type { ResourceType } from '../api/resourceType.js';
import { ApiError, badRequest, conflict, routeNotFound } from '../api/statusError.js';

/**
 * The `/scale` subresource (autoscaling/v1 `Scale`): a view of an object's
 * replica count through the paths its type declares (`.spec.replicas`,
 * `.status.replicas`, the selector), as `kubectl scale` and autoscalers use it.
 */

type Plain = Record<string, unknown>;

function segments(path: string): string[] {
  return path.replace(/^\./, '').split('.').filter((s) => s !== '');
}

function readPath(obj: unknown, path: string): unknown {
  let current = obj;
  for (const part of segments(path)) {
    if (!isPlainObject(current)) return undefined;
    current = ownMember(current, part);
  }
  return current;
}

function writePath(obj: Plain, path: string, value: unknown): void {
  const parts = segments(path);
  let current = obj;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(ownMember(current, part))) setMember<unknown>(current, part, {});
    current = current[part] as Plain;
  }
  setMember(current, parts[parts.length - 1] as string, value);
}

function selectorOf(type: ResourceType, object: KubeObject): string | undefined {
  if (type.builtin) {
    const selector = (object as unknown as { spec?: { selector?: LabelSelectorObject } }).spec?.selector;
    return selector === undefined ? undefined : labelSelectorFromObject(selector).toString();
  }
  const path = type.scale?.labelSelectorPath;
  const value = path === undefined ? undefined : readPath(object, path);
  return typeof value === 'string' ? value : undefined;
}

function scaleOf(type: ResourceType, object: KubeObject): Plain {
  const scale = type.scale as NonNullable<ResourceType['scale']>;
  const meta = object.metadata;
  const status: Plain = { replicas: readPath(object, scale.statusReplicasPath) ?? 0 };
  const selector = selectorOf(type, object);
  if (selector !== undefined) status.selector = selector;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: meta.name,
      namespace: meta.namespace,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      creationTimestamp: meta.creationTimestamp,
    },
    spec: { replicas: readPath(object, scale.specReplicasPath) ?? 0 },
    status,
  };
}

function scaled(r: ResourceRequest): ResourceType['scale'] & object {
  if (r.type.scale === undefined) throw routeNotFound();
  return r.type.scale;
}

function applyScale(r: ResourceRequest, scale: unknown, options: WriteOptions): ApiResponse {
  const spec = scaled(r);
  const name = r.name as string;
  if (!isPlainObject(scale)) throw badRequest('the body of a scale request must be a Scale object');
  const meta = isPlainObject(scale.metadata) ? scale.metadata : {};
  if (meta.name !== undefined && meta.name !== name) {
    throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
  }
  const replicas = isPlainObject(scale.spec) ? scale.spec.replicas : undefined;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw new ApiError(422, 'Invalid', `Scale.autoscaling "${name}" is invalid: spec.replicas: Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`);
  }
  const cluster = r.server.cluster;
  const live = cluster.get(r.type, r.namespace, name);
  if (typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '' && meta.resourceVersion !== live.object.metadata.resourceVersion) {
    throw conflict(cluster.gr(r.type), name);
  }
  const next = cloneJson(toVersion(r.type, live.object)) as unknown as Plain;
  writePath(next, spec.specReplicasPath, replicas);
  const stored = cluster.update(r.type, r.namespace, name, next, { ...options, subresource: undefined }).stored;
  return jsonResponse(200, scaleOf(r.type, toVersion(r.type, stored.object)));
}

export const scaleHandlers = {
  get(r: ResourceRequest): ApiResponse {
    scaled(r);
    const live = r.server.cluster.get(r.type, r.namespace, r.name as string);
    return jsonResponse(200, scaleOf(r.type, toVersion(r.type, live.object)));
  },
  update(r: ResourceRequest, body: unknown, options: WriteOptions): ApiResponse {
    return applyScale(r, body, options);
  },
  patch(r: ResourceRequest, contentType: string, body: unknown, options: WriteOptions): ApiResponse {
    scaled(r);
    const live = r.server.cluster.get(r.type, r.namespace, r.name as string);
    let patched: object;
    try {
      patched = applyPatch(contentType, scaleOf(r.type, toVersion(r.type, live.object)), body, { kind: { group: 'autoscaling', kind: 'Scale' }, builtin: true });
    } catch (error) {
      if (error instanceof PatchError) throw new ApiError(error.code, error.reason, error.message);
      throw error;
    }
    return applyScale(r, patched, options);
  },
};
