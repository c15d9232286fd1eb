import type { KubeConfig } from '@kubernetes/client-node';
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { defaultLogger, type Logger } from '../../logger.js';
import { type KubeObject, type RequestObserver, resourceName, type Typed } from '../../types.js';
import { isNotFound, type RequestDescription } from './errors.js';
import { retryThrottled, transportFor, type KubeRequest, type KubeTransport, type ThrottleRetryOptions } from './kubeTransport.js';
import { abortableValue } from '../../util/wait.js';
import { ResourceResolver, resourcePath, type KindResolver, type ResourceInfo } from './resources.js';
import {
  createOrUpdateOnce,
  InvalidTargetError,
  toRef,
  updateStatusOnce,
  type Mutate,
  type WriteResult,
  type WriteSteps,
} from './readModifyWrite.js';
import { retryOnConflict, type ConflictBackoff } from './retryOnConflict.js';

export { InvalidTargetError, MutateIdentityError, type Mutate, type WriteResult } from './readModifyWrite.js';

/** Names an object without holding it: what `get`, the patches and `remove` need. */
export interface ObjectRef {
  /** The object's `apiVersion` (`apps/v1`, `v1`). */
  apiVersion: string;
  /** The object's kind (`Deployment`): the client finds its resource through discovery. */
  kind: string;
  /** The object's name. */
  name: string;
  /** Required for namespaced kinds; ignored for cluster-scoped ones. */
  namespace?: string;
}

/**
 * An object, or a reference to one, whose object is a `T`. The calls that
 * take one answer with a `T` taken from the argument: an object is its own
 * type (`client.get(pa)` returns what `pa` is), a reference carries its
 * type (`Typed`: `client.get({ ...deployments, namespace, name })` returns
 * a `Deployment`), and a reference without one reads a `KubeObject`. An
 * object or reference of any kind still passes where a `T` is named
 * (`client.get<PodAutoscalerV1>(v2)`): reading another version of a kind
 * is how a conversion is seen.
 */
export type ObjectTarget<T extends KubeObject = KubeObject> = T | ((ObjectRef | KubeObject) & Typed<T>);

/** One operation of an RFC 6902 JSON patch. */
export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

/**
 * What a delete did. `deleting`: the object is still there, waiting for its
 * finalizers (or a grace period); `absent`: it was already gone, which for
 * an idempotent delete is success.
 */
export interface RemoveResult<T> {
  /** `deleted`, `deleting` (finalizers or a grace period hold it) or `absent` (it was already gone). */
  result: 'deleted' | 'deleting' | 'absent';
  /** The object as the server last returned it (not for `absent`, nor when it answered a Status). */
  object?: T;
}

/** What every call of the client takes. */
export interface CallOptions {
  /** Aborts the request (and any wait for a retry) at once. Pass the reconcile's `ctx.signal`. */
  signal?: AbortSignal;
}

/** Which objects of a kind `list` reads: all, or those in a namespace, matching selectors. */
export interface ListTarget {
  /** The kind's `apiVersion`. */
  apiVersion: string;
  /** The kind to list (`ConfigMap`). */
  kind: string;
  /** One namespace (namespaced kinds only); omitted for all namespaces. */
  namespace?: string;
}

/** What `list` takes besides its target. */
export interface ListOptions extends CallOptions {
  /** Only objects with these labels (kube's label selector syntax). */
  labelSelector?: string;
  /** Only objects whose fields match (kube's field selector syntax). */
  fieldSelector?: string;
}

/** What the writes take. */
export interface WriteOptions extends CallOptions {
  /** The field manager recorded for this write (default: the client's). */
  fieldManager?: string;
}

/** What `apply` (server-side apply) takes. */
export interface ApplyOptions extends WriteOptions {
  /** Take over fields another manager owns instead of failing with a 409 conflict. */
  force?: boolean;
  /** Apply to the `status` subresource rather than the object. */
  subresource?: 'status';
}

/** What `remove` takes. */
export interface RemoveOptions extends CallOptions {
  /** Whether and how dependents are garbage collected (the server's default for the kind when unset). */
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  /** Seconds the object may take to go (the kind's default when unset; 0: at once). */
  gracePeriodSeconds?: number;
  /** Delete only if the stored object still has this uid / resourceVersion (else 409 Conflict). */
  preconditions?: { uid?: string; resourceVersion?: string };
}

/**
 * How a `kubeClient` writes: its field manager, how it retries conflicts and 429s, its clock, its logger and where it looks kinds up.
 */
export interface KubeClientOptions extends Partial<Pick<ThrottleRetryOptions, 'maxThrottleRetries' | 'maxRetryAfterSeconds'>> {
  /** The field manager for writes and server-side apply (default `rxkube`). */
  fieldManager?: string;
  /** How 409 Conflicts are retried (default client-go's `retry.DefaultRetry`: 5 attempts, 10 ms apart, 10 % jitter). */
  conflictBackoff?: Partial<ConflictBackoff>;
  /** Source of backoff jitter in [0, 1) (default `Math.random`). */
  random?: () => number;
  /** Where the waits for conflict retries and Retry-After happen (default `asyncScheduler`: real time). */
  scheduler?: SchedulerLike;
  /** Where retries are logged (default: pino to stderr): a request the server asked to retry later at warn, conflicts re-read at debug (routine, as in controller-runtime). */
  logger?: Logger;
  /** Where kinds are looked up (default: the server's discovery, through the same transport). */
  resolver?: KindResolver;
  /** Told of every HTTP request sent (`rest_client_*` metrics); only used when `server` is a kubeconfig. */
  requests?: RequestObserver;
}

/**
 * Typed writes to the API server for any kind, with the idempotent shapes a
 * level-triggered controller wants: writes that can run again without harm. Every method takes
 * an `AbortSignal` so that a reconcile's requests stop with it.
 */
export interface KubeClient {
  /** Reads an object straight from the server (a strongly consistent read, unlike the cache). */
  get<T extends KubeObject>(target: ObjectTarget<T>, options?: CallOptions): Promise<T>;
  /** Creates the object (POST); 409 AlreadyExists if the name is taken. */
  create<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T>;
  /** Replaces the object (PUT), guarded by its `metadata.resourceVersion` when set. */
  update<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T>;
  /**
   * Server-side apply: sends the fields this manager wants
   * (`application/apply-patch+yaml`); the server merges them and records
   * ownership. A field owned by another manager fails with a 409 Conflict
   * listing the fields, unless `force`. Not retried: re-sending the same
   * intent cannot resolve an ownership conflict. `managedFields` in the
   * object are not sent (the server refuses them).
   */
  apply<T extends KubeObject>(object: T, options?: ApplyOptions): Promise<T>;
  /**
   * Reads the object named by `object`; if it is missing, runs `mutate` on a
   * copy of `object` and creates that; else runs `mutate` on a copy of what
   * is stored and writes it only if it differs (controller-runtime's
   * `CreateOrUpdate`). A 409 (a stale read, or a create that lost a race)
   * re-reads and runs `mutate` again, a bounded number of times. `mutate`
   * must be idempotent and must not change the name or namespace.
   */
  createOrUpdate<T extends KubeObject>(object: T, mutate: Mutate<T>, options?: WriteOptions): Promise<WriteResult<T>>;
  /** RFC 7396 merge patch (`null` deletes a field). No resourceVersion guard unless the patch holds one. */
  patchMerge<T extends KubeObject>(target: ObjectTarget<T>, patch: object, options?: WriteOptions): Promise<T>;
  /** RFC 6902 JSON patch; a failing `test` operation rejects the whole patch with 422 Invalid. */
  patchJson<T extends KubeObject>(target: ObjectTarget<T>, operations: readonly JsonPatchOperation[], options?: WriteOptions): Promise<T>;
  /**
   * Writes the `status` subresource (PUT). With `mutate`: reads the object,
   * runs `mutate` on a copy, and writes only when the status changed. Without:
   * writes `object.status`, first from `object` itself (guarded by its
   * resourceVersion), then onto a fresh read. A 409 re-reads and retries, a
   * bounded number of times.
   */
  updateStatus<T extends KubeObject>(object: T, mutate?: Mutate<T>, options?: WriteOptions): Promise<WriteResult<T>>;
  /** Patches the `status` subresource: a merge patch for an object, a JSON patch for an array of operations. */
  patchStatus<T extends KubeObject>(
    target: ObjectTarget<T>,
    patch: object | readonly JsonPatchOperation[],
    options?: WriteOptions,
  ): Promise<T>;
  /** Deletes the object; an object already gone is `absent`, not an error. */
  remove<T extends KubeObject>(target: ObjectTarget<T>, options?: RemoveOptions): Promise<RemoveResult<T>>;
  /**
   * Lists objects straight from the server (a strongly consistent read,
   * unlike the cache), page by page until the last; each item gets the
   * `apiVersion` and `kind` the server leaves off list items.
   */
  list<T extends KubeObject>(target: ListTarget & Typed<T>, options?: ListOptions): Promise<T[]>;
  /** Where a kind lives (discovery, cached). */
  resource(apiVersion: string, kind: string, options?: CallOptions): Promise<ResourceInfo>;
}

function contentTypeForPatch(patch: object | readonly JsonPatchOperation[]): string {
  return Array.isArray(patch) ? 'application/json-patch+json' : 'application/merge-patch+json';
}

/**
 * The client over a kubeconfig (HTTP, with its credentials), or over any
 * `KubeTransport`: `rxkube/testing`'s memory client is this same client
 * over the embedded API server's request handling in process.
 */
export function kubeClient(server: KubeConfig | KubeTransport, options: KubeClientOptions = {}): KubeClient {
  const logger = options.logger ?? defaultLogger({ part: 'kubeClient' });
  const defaultFieldManager = options.fieldManager ?? 'rxkube';
  const transport = transportFor(server, options.requests);
  const throttle: ThrottleRetryOptions = {
    scheduler: options.scheduler ?? asyncScheduler,
    logger,
    ...(options.maxThrottleRetries !== undefined ? { maxThrottleRetries: options.maxThrottleRetries } : {}),
    ...(options.maxRetryAfterSeconds !== undefined ? { maxRetryAfterSeconds: options.maxRetryAfterSeconds } : {}),
  };
  const send = <T>(request: KubeRequest, signal: AbortSignal | undefined): Promise<T> =>
    abortableValue(transport.send<T>(request).pipe(retryThrottled<T>(request, throttle)), signal);
  const resolver: KindResolver = options.resolver ?? new ResourceResolver(send);

  interface Addressed {
    info: ResourceInfo;
    ref: ObjectRef;
    describe: (verb: string, subresource?: string) => RequestDescription;
    path: (subresource?: string) => string;
    /** `configmaps "ns/name"`, for messages. */
    label: string;
  }

  async function address(target: ObjectTarget, signal?: AbortSignal): Promise<Addressed> {
    const ref = toRef(target);
    if (typeof ref.name !== 'string' || ref.name === '') {
      throw new InvalidTargetError(`cannot address ${ref.kind ?? 'an object'} without a name (metadata.name is ${JSON.stringify(ref.name)})`);
    }
    const info = await resolver.resolve(ref.apiVersion, ref.kind, signal);
    if (info.namespaced && (ref.namespace === undefined || ref.namespace === '')) {
      throw new InvalidTargetError(`${ref.kind} "${ref.name}" has no namespace, but ${resourceName(info)} are namespaced`);
    }
    const namespace = info.namespaced ? ref.namespace : undefined;
    return {
      info,
      ref,
      describe: (verb, subresource) => ({ verb, resource: resourceName(info), name: ref.name, namespace, subresource }),
      path: (subresource) => resourcePath(info, namespace, ref.name, subresource),
      label: `${resourceName(info)} "${namespace ? `${namespace}/` : ''}${ref.name}"`,
    };
  }

  const conflictOptions = (signal?: AbortSignal) => ({
    backoff: options.conflictBackoff,
    scheduler: options.scheduler,
    random: options.random,
    logger,
    signal,
  });

  const manager = (o?: WriteOptions): string => o?.fieldManager ?? defaultFieldManager;

  const get = async <T extends KubeObject>(target: ObjectTarget, o?: CallOptions): Promise<T> => {
    const a = await address(target, o?.signal);
    return send<T>({ method: 'GET', path: a.path(), describe: a.describe('get') }, o?.signal);
  };

  const create = async <T extends KubeObject>(object: T, o?: WriteOptions): Promise<T> => {
    const a = await address(object, o?.signal);
    const ns = a.info.namespaced ? a.ref.namespace : undefined;
    return send<T>(
      {
        method: 'POST',
        path: resourcePath(a.info, ns),
        query: { fieldManager: manager(o) },
        body: object,
        describe: a.describe('create'),
      },
      o?.signal,
    );
  };

  const put = async <T extends KubeObject>(object: T, o: WriteOptions | undefined, subresource?: 'status'): Promise<T> => {
    const a = await address(object, o?.signal);
    return send<T>(
      {
        method: 'PUT',
        path: a.path(subresource),
        query: { fieldManager: manager(o) },
        body: object,
        describe: a.describe('update', subresource),
      },
      o?.signal,
    );
  };

  const patch = async <T extends KubeObject>(
    target: ObjectTarget,
    body: object | readonly JsonPatchOperation[],
    o: WriteOptions | undefined,
    subresource?: 'status',
  ): Promise<T> => {
    if (body === null || typeof body !== 'object') {
      throw new TypeError(`a patch must be an object (merge patch) or an array of operations (JSON patch), got ${String(body)}`);
    }
    const a = await address(target, o?.signal);
    return send<T>(
      {
        method: 'PATCH',
        path: a.path(subresource),
        query: { fieldManager: manager(o) },
        body,
        contentType: contentTypeForPatch(body),
        describe: a.describe('patch', subresource),
      },
      o?.signal,
    );
  };

  // The read-mutate-write steps (createOrUpdate, updateStatus) over this client's requests.
  const steps = (o: WriteOptions | undefined): WriteSteps => ({
    get: (object) => get(object, o),
    create: (object) => create(object, o),
    put: (object, subresource) => put(object, o, subresource),
  });

  async function remove<T extends KubeObject>(target: ObjectTarget, o?: RemoveOptions): Promise<RemoveResult<T>> {
    const a = await address(target, o?.signal);
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (o?.propagationPolicy !== undefined) body.propagationPolicy = o.propagationPolicy;
    if (o?.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = o.gracePeriodSeconds;
    if (o?.preconditions !== undefined) body.preconditions = o.preconditions;
    let answer: T | { kind?: string; metadata?: undefined } | undefined;
    try {
      answer = await send({ method: 'DELETE', path: a.path(), body, describe: a.describe('delete') }, o?.signal);
    } catch (err) {
      if (isNotFound(err)) return { result: 'absent' };
      throw err;
    }
    // kube answers a Status, or the object: as it was when deleted at once, or marked and waiting for its finalizers.
    if (answer?.metadata === undefined || answer.kind === 'Status') return { result: 'deleted' };
    const meta = answer.metadata;
    const pending = (meta.finalizers?.length ?? 0) > 0 || (meta.deletionGracePeriodSeconds ?? 0) > 0;
    return { result: pending ? 'deleting' : 'deleted', object: answer as T };
  }

  async function list<T extends KubeObject>(target: ListTarget, o?: ListOptions): Promise<T[]> {
    const info = await resolver.resolve(target.apiVersion, target.kind, o?.signal);
    const namespace = info.namespaced ? target.namespace : undefined;
    const items: T[] = [];
    let token: string | undefined;
    do {
      const page: { items?: T[] | null; metadata?: { continue?: string } } = await send(
        {
          method: 'GET',
          path: resourcePath(info, namespace),
          query: { labelSelector: o?.labelSelector, fieldSelector: o?.fieldSelector, limit: '500', continue: token },
          describe: { verb: 'list', resource: resourceName(info), namespace },
        },
        o?.signal,
      );
      for (const item of page.items ?? []) items.push({ ...item, apiVersion: target.apiVersion, kind: target.kind });
      token = page.metadata?.continue || undefined;
    } while (token !== undefined);
    return items;
  }

  return {
    get,
    create,
    list,
    update: (object, o) => put(object, o),

    async apply(object, o) {
      const a = await address(object, o?.signal);
      const body: KubeObject = { ...object, metadata: { ...object.metadata } };
      delete body.metadata.managedFields;
      return send(
        {
          method: 'PATCH',
          path: a.path(o?.subresource),
          query: { fieldManager: manager(o), force: o?.force ? 'true' : undefined },
          body,
          contentType: 'application/apply-patch+yaml',
          describe: a.describe('apply', o?.subresource),
        },
        o?.signal,
      );
    },

    async createOrUpdate(object, mutate, o) {
      const a = await address(object, o?.signal);
      const what = `createOrUpdate ${a.label}`;
      return retryOnConflict(
        a.describe('update'),
        () => createOrUpdateOnce(steps(o), object, mutate, what),
        conflictOptions(o?.signal),
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

    async updateStatus(object, mutate, o) {
      const a = await address(object, o?.signal);
      const what = `updateStatus ${a.label}`;
      return retryOnConflict(
        a.describe('update', 'status'),
        (n) => updateStatusOnce(steps(o), object, mutate, what, n),
        conflictOptions(o?.signal),
      );
    },

    patchStatus: (target, body, o) => patch(target, body, o, 'status'),

    remove,

    resource: (apiVersion, kind, o) => resolver.resolve(apiVersion, kind, o?.signal),
  };
}
