import type { SchedulerLike } from 'rxjs';
import {
  InvalidTargetError,
  type ApplyOptions,
  type CallOptions,
  type JsonPatchOperation,
  type KubeClient,
  type Mutate,
  type ObjectRef,
  type ObjectTarget,
  type RemoveOptions,
  type WriteOptions,
  type WriteResult,
} from '../../sinks/client/kubeClient.js';
import { delay } from '../../util/wait.js';
import { errorFromResponse, isNotFound, type RequestDescription } from '../../sinks/client/errors.js';
import { createOrUpdateOnce, toRef, updateStatusOnce, type WriteSteps } from '../../sinks/client/readModifyWrite.js';
import { resourceName, type KubeObject } from '../../types.js';
import { retryOnConflict, type ConflictBackoff } from '../../sinks/client/retryOnConflict.js';
import { cloneJson } from '../../util/json.js';
import { applyJsonPatch } from '../../apiserver/writes/jsonPatch.js';
import { applyMergePatch7396 } from '../../apiserver/writes/mergePatch.js';
import { PatchError } from '../../apiserver/writes/patchError.js';
import type { ResourceType } from '../../apiserver/api/resourceType.js';
import { ApplyConflictError, serverSideApply } from '../../apiserver/writes/serverSideApply.js';
import { ApiError, notFound } from '../../apiserver/api/statusError.js';
import { resetFieldsFor } from '../../apiserver/writes/writes.js';
import type { FaultQueue, MemoryVerb } from './faults.js';
import { memoryKey, type MemoryCluster } from './memoryCluster.js';
import type { MemoryRequest } from './memoryRequest.js';

/** An API server refusal as a Status body, whatever part of the server logic raised it. */
export function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof PatchError) return new ApiError(err.code, err.reason, err.message);
  if (err instanceof ApplyConflictError) {
    return new ApiError(409, 'Conflict', err.message, {
      causes: err.causes.map((c) => ({ reason: c.type, message: c.message, field: c.field })),
    });
  }
  return undefined;
}

interface Addressed {
  type: ResourceType;
  ref: ObjectRef;
  namespace: string | undefined;
  describe: RequestDescription;
}

/** How requests of a memory client behave. */
export interface RequestSettings {
  /** How `createOrUpdate` and `updateStatus` retry a 409 (default client-go's: 5 attempts, 10 ms apart). */
  conflictBackoff?: Partial<ConflictBackoff>;
  /** Jitter of those retries in [0, 1) (default always 0, so that delays are exact). */
  random?: () => number;
  /** Ms each request takes (default 0): lets a test see triggers arrive while a reconcile runs. */
  latency?: number;
  /** Resends of a request answered 429/5xx with a Retry-After (default 5, as the real transport). */
  maxThrottleRetries?: number;
}

export interface MemoryKubeClientContext {
  cluster: MemoryCluster;
  scheduler: SchedulerLike;
  /** The field manager of writes that name none. */
  manager: string;
  options: RequestSettings;
  /** Where requests are recorded and faults looked up; none for `as()` clients. */
  log?: { requests: MemoryRequest[]; faults: FaultQueue };
}

/**
 * The `KubeClient` methods over a memory cluster, with the real client's
 * semantics (see `MemoryClient`): addressing and its errors, one request
 * per call (latency, injected faults, 429/5xx resends, recording), and
 * `createOrUpdate`/`updateStatus` retrying conflicts through
 * `retryOnConflict`, as `kubeClient` does over HTTP.
 */
export function memoryKubeClient(ctx: MemoryKubeClientContext): KubeClient {
  const { cluster, scheduler } = ctx;
  const latency = ctx.options.latency ?? 0;
  const maxThrottleRetries = ctx.options.maxThrottleRetries ?? 5;

  const address = (target: ObjectTarget, verb: MemoryVerb, subresource?: 'status'): Addressed => {
    const ref = toRef(target);
    if (typeof ref.name !== 'string' || ref.name === '') {
      throw new InvalidTargetError(`cannot address ${ref.kind ?? 'an object'} without a name (metadata.name is ${JSON.stringify(ref.name)})`);
    }
    const type = cluster.kinds.byKind(ref.apiVersion, ref.kind);
    if (type.namespaced && (ref.namespace === undefined || ref.namespace === '')) {
      throw new InvalidTargetError(`${ref.kind} "${ref.name}" has no namespace, but ${resourceName(cluster.kinds.info(type))} are namespaced`);
    }
    const namespace = type.namespaced ? ref.namespace : undefined;
    const describe: RequestDescription = { verb, resource: resourceName(cluster.kinds.info(type)), name: ref.name, namespace, subresource };
    return { type, ref, namespace, describe };
  };

  const manager = (o?: WriteOptions): string => o?.fieldManager ?? ctx.manager;

  /** One request: waits its latency, meets any injected fault, runs `op` on the cluster, records what happened. */
  async function request<R extends KubeObject | undefined>(
    a: Addressed,
    meta: { verb: MemoryVerb; subresource?: 'status'; patchType?: 'merge' | 'json'; body?: unknown; fieldManager?: string; created?: (r: R) => boolean },
    signal: AbortSignal | undefined,
    op: () => R,
  ): Promise<R> {
    if (signal?.aborted) throw signal.reason;
    if (latency > 0) await delay(latency, scheduler, signal);
    for (let attempt = 0; ; attempt++) {
      const base: MemoryRequest = {
        at: scheduler.now(),
        verb: meta.verb,
        ...(meta.subresource ? { subresource: meta.subresource } : {}),
        ...(meta.patchType ? { patchType: meta.patchType } : {}),
        apiVersion: a.ref.apiVersion,
        kind: a.ref.kind,
        resource: a.describe.resource,
        ...(a.namespace !== undefined ? { namespace: a.namespace } : {}),
        name: a.ref.name,
        key: memoryKey(a.type, a.namespace, a.ref.name),
        ...(meta.fieldManager !== undefined ? { fieldManager: meta.fieldManager } : {}),
        ...(meta.body !== undefined ? { body: cloneJson(meta.body) } : {}),
        code: 200,
      };
      const injected = ctx.log?.faults.take({ verb: meta.verb, type: a.type, name: a.ref.name, namespace: a.namespace, subresource: meta.subresource });
      let failure: ApiError | undefined = injected;
      let result: R | undefined;
      if (failure === undefined) {
        try {
          result = op();
        } catch (err) {
          failure = toApiError(err);
          if (failure === undefined) throw err;
        }
      }
      if (failure === undefined) {
        ctx.log?.requests.push({
          ...base,
          code: meta.created?.(result as R) ? 201 : 200,
          ...(result?.metadata.resourceVersion !== undefined ? { resourceVersion: result.metadata.resourceVersion } : {}),
        });
        return (result === undefined ? result : cloneJson(result)) as R;
      }
      const error = errorFromResponse(a.describe, failure.code, JSON.stringify(failure.toStatus()), failure.headers['Retry-After']);
      ctx.log?.requests.push({ ...base, code: failure.code, error, ...(injected ? { injected: true } : {}) });
      const throttled = error.retryAfterSeconds !== undefined && (error.code === 429 || error.code >= 500);
      if (!throttled || attempt >= maxThrottleRetries) throw error;
      await delay(Math.min(error.retryAfterSeconds ?? 0, 30) * 1000, scheduler, signal);
    }
  }

  const statusOf = (a: Addressed, subresource: 'status' | undefined): void => {
    if (subresource === 'status' && !a.type.status) throw notFound({ group: a.type.group, resource: `${a.type.resource}/status` }, a.ref.name);
  };

  const get = async <T extends KubeObject>(target: ObjectTarget, o?: CallOptions): Promise<T> => {
    const a = address(target, 'get');
    return request(a, { verb: 'get' }, o?.signal, () => cluster.get(a.type, a.namespace, a.ref.name) as T);
  };

  const create = async <T extends KubeObject>(object: T, o?: WriteOptions): Promise<T> => {
    const a = address(object, 'create');
    const fieldManager = manager(o);
    return request(a, { verb: 'create', body: object, fieldManager, created: () => true }, o?.signal, () => cluster.create(a.type, object, { manager: fieldManager }) as T);
  };

  const put = async <T extends KubeObject>(object: T, o: WriteOptions | undefined, subresource?: 'status'): Promise<T> => {
    const a = address(object, 'update', subresource);
    const fieldManager = manager(o);
    return request(a, { verb: 'update', subresource, body: object, fieldManager }, o?.signal, () => {
      statusOf(a, subresource);
      return cluster.update(a.type, object, { manager: fieldManager, ...(subresource ? { subresource } : {}) }) as T;
    });
  };

  const patch = async <T extends KubeObject>(target: ObjectTarget, body: object | readonly JsonPatchOperation[], o: WriteOptions | undefined, subresource?: 'status'): Promise<T> => {
    if (body === null || typeof body !== 'object') {
      throw new TypeError(`a patch must be an object (merge patch) or an array of operations (JSON patch), got ${String(body)}`);
    }
    const a = address(target, 'patch', subresource);
    const fieldManager = manager(o);
    const json = Array.isArray(body);
    return request(a, { verb: 'patch', subresource, patchType: json ? 'json' : 'merge', body, fieldManager }, o?.signal, () => {
      statusOf(a, subresource);
      const live = cluster.get(a.type, a.namespace, a.ref.name);
      const patched = json ? applyJsonPatch(cloneJson(live) as never, body) : applyMergePatch7396(cloneJson(live) as never, body);
      return cluster.update(a.type, patched, { manager: fieldManager, ...(subresource ? { subresource } : {}) }) as T;
    });
  };

  const conflicts = (signal?: AbortSignal) => ({
    backoff: ctx.options.conflictBackoff,
    scheduler,
    random: ctx.options.random ?? (() => 0),
    signal,
  });

  // The read-mutate-write steps (createOrUpdate, updateStatus) over the memory requests.
  const steps = (o: WriteOptions | undefined): WriteSteps => ({
    get: (object) => get(object, o),
    create: (object) => create(object, o),
    put: (object, subresource) => put(object, o, subresource),
  });

  return {
    get,
    create,
    update: async (object, o) => put(object, o),

    async apply(object, o?: ApplyOptions) {
      const subresource = o?.subresource;
      const a = address(object, 'apply', subresource);
      const fieldManager = manager(o);
      const body: KubeObject = { ...object, metadata: { ...object.metadata } };
      delete body.metadata.managedFields;
      let created = false;
      return request(a, { verb: 'apply', subresource, body, fieldManager, created: () => created }, o?.signal, () => {
        statusOf(a, subresource);
        const live = cluster.find(a.type, a.namespace, a.ref.name);
        if (live === undefined && subresource !== undefined) throw notFound({ group: a.type.group, resource: a.type.resource }, a.ref.name);
        const { object: merged } = serverSideApply({
          live,
          applied: body,
          manager: fieldManager,
          force: o?.force === true,
          kind: { group: a.type.group, kind: a.type.kind },
          builtin: a.type.builtin,
          now: cluster.timestamp(),
          ...(subresource ? { subresource } : {}),
          resetFields: resetFieldsFor(a.type, subresource, body, ...(live ? [live] : [])),
        });
        created = live === undefined;
        if (live === undefined) return cluster.create(a.type, merged, { manager: fieldManager, managedFieldsDone: true }) as typeof object;
        const next = merged as KubeObject;
        const rv = body.metadata.resourceVersion;
        return cluster.update(a.type, { ...next, metadata: { ...next.metadata, resourceVersion: rv ? rv : live.metadata.resourceVersion } }, {
          manager: fieldManager,
          managedFieldsDone: true,
          ...(subresource ? { subresource } : {}),
        }) as typeof object;
      });
    },

    async createOrUpdate(object, mutate, o) {
      const a = address(object, 'update');
      const what = `createOrUpdate ${a.describe.resource} "${a.namespace ? `${a.namespace}/` : ''}${a.ref.name}"`;
      return retryOnConflict(
        a.describe,
        () => createOrUpdateOnce(steps(o), object, mutate, what),
        conflicts(o?.signal),
      );
    },

    async patchMerge(target, body, o) {
      if (Array.isArray(body)) throw new TypeError('patchMerge takes an object; use patchJson for an array of JSON patch operations');
      return patch(target, body, o);
    },

    async patchJson(target, operations, o) {
      if (!Array.isArray(operations)) throw new TypeError('patchJson takes an array of JSON patch operations');
      return patch(target, operations, o);
    },

    async updateStatus<T extends KubeObject>(object: T, mutate?: Mutate<T>, o?: WriteOptions): Promise<WriteResult<T>> {
      const a = address(object, 'update', 'status');
      const what = `updateStatus ${a.describe.resource} "${a.namespace ? `${a.namespace}/` : ''}${a.ref.name}"`;
      return retryOnConflict(
        a.describe,
        (n) => updateStatusOnce(steps(o), object, mutate, what, n),
        conflicts(o?.signal),
      );
    },

    patchStatus: async (target, body, o) => patch(target, body, o, 'status'),

    async remove<T extends KubeObject>(target: ObjectTarget, o?: RemoveOptions) {
      const a = address(target, 'delete');
      const body: Record<string, unknown> = {};
      if (o?.propagationPolicy !== undefined) body.propagationPolicy = o.propagationPolicy;
      if (o?.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = o.gracePeriodSeconds;
      if (o?.preconditions !== undefined) body.preconditions = o.preconditions;
      let outcome: { object: KubeObject; deleted: boolean } | undefined;
      try {
        const object = await request(a, { verb: 'delete', body }, o?.signal, () => {
          outcome = cluster.delete(a.type, a.namespace, a.ref.name, {
            ...(o?.propagationPolicy ? { propagationPolicy: o.propagationPolicy } : {}),
            ...(o?.preconditions ? { preconditions: o.preconditions } : {}),
          });
          return outcome.object;
        });
        return { result: outcome?.deleted ? ('deleted' as const) : ('deleting' as const), object: object as T };
      } catch (err) {
        if (isNotFound(err)) return { result: 'absent' as const };
        throw err;
      }
    },

    async resource(apiVersion, kind) {
      return cluster.kinds.info(cluster.kinds.byKind(apiVersion, kind));
    },
  };
}
