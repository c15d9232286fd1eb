import { asyncScheduler, type Observable, type SchedulerLike } from 'rxjs';
import { toVersion } from '../../apiserver/api/conversion.js';
import type { InProcessServer } from '../../apiserver/inProcessServer.js';
import type { RequestFaults } from '../../apiserver/faults.js';
import type { ResourceType } from '../../apiserver/api/resourceType.js';
import { ApiError } from '../../apiserver/api/statusError.js';
import { kubeClient, type KubeClient, type ObjectTarget } from '../../sinks/client/kubeClient.js';
import { toRef } from '../../sinks/client/readModifyWrite.js';
import type { ConflictBackoff } from '../../sinks/client/retryOnConflict.js';
import { joinKey, resourceName, type KubeObject, type ListWatchEvent, type ResourceRef } from '../../types.js';
import { cloneJson } from '../../util/json.js';
import { writeVerbs, type MemoryRequest } from './memoryRequest.js';
import { registryResolver, serveResource, typeOfKind, typeOfResource, type MemoryResource } from './memoryResources.js';
import { memoryTransport } from './memoryTransport.js';
import { memoryWatch } from './memoryWatch.js';
import { shardedListWatch } from '../../sources/shardedListWatch.js';
import type { ListWatchOptions } from '../../sources/listWatch.js';
import type { SourceShard } from '../../sources/sourceShard.js';
import { silentLogger } from '../../logger.js';
import { virtualServer } from './virtualServer.js';

/** How to make a memory client: its clock, latency, field manager, retries, and the custom resources it serves. */
export interface MemoryClientOptions {
  /** The clock of writes and timestamps, and where waits happen (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /** The field manager of writes (default `rxkube`, as the real client's). */
  fieldManager?: string;
  /** Custom resources it serves besides the built-ins. */
  resources?: readonly MemoryResource[];
  /** Ms between a write and its watch event (default 0). */
  watchLatency?: number;
  /** How `createOrUpdate` and `updateStatus` retry a 409 (default client-go's: 5 attempts, 10 ms apart). */
  conflictBackoff?: Partial<ConflictBackoff>;
  /** Jitter of those retries in [0, 1) (default always 0, so that delays are exact). */
  random?: () => number;
  /** Ms each request takes to reach the cluster (default 0): lets a test see triggers arrive while a reconcile runs. */
  latency?: number;
  /** Resends of a request answered 429/5xx with a Retry-After (default 5, as the real transport). */
  maxThrottleRetries?: number;
}

/**
 * A `KubeClient` over an in-memory cluster, for tests: everything a
 * reconcile can do through `ctx.client`, answered at once (or after
 * `latency`) on the scheduler's clock, with every request recorded.
 *
 * It is `kubeClient` itself, over the embedded API server's request handling
 * in process instead of HTTP: the same addressing and errors, conflict
 * retries and Retry-After resends as the real client, and the server's own
 * writes: server-set metadata (uid, creationTimestamp, generation bumped on
 * spec changes only), resourceVersion on every change and none on a no-op
 * write, 409 Conflict on a stale resourceVersion, 409 AlreadyExists, 404
 * NotFound, the `/status` split, merge and JSON patches (a failed `test` is
 * 422 Invalid), server-side apply with field ownership and conflicts,
 * finalizers and `deletionTimestamp`, owner-reference garbage collection,
 * label and field selectors, Status errors as `KubeApiError`s, so
 * `isNotFound`, `isConflict` and the rest work. Timestamps come from the
 * scheduler and uids are counted, so a test sees the same objects on every
 * run.
 *
 * What it simplifies: namespaces need not exist; kinds are looked up in the
 * cluster's registry rather than through discovery requests (built-ins plus
 * `resources`); watches follow the cluster's changes directly.
 *
 * For tests: `requests`/`writes` read back what was done; `faults` injects
 * them (`faults.failNext(1, { code: 409, verb: 'update' })`), with the same
 * API as the embedded HTTP server's; `seed` and `as(manager)` change the
 * cluster without being recorded; `watch` lists and watches it as a source
 * would.
 */
export interface MemoryClient extends KubeClient {
  /** Every request, in order: reads and writes, answered or refused. */
  readonly requests: readonly MemoryRequest[];
  /** The requests that were writes (`create`, `update`, `patch`, `apply`, `delete`). */
  readonly writes: readonly MemoryRequest[];
  /** Faults its requests meet: the same `RequestFaults` as the embedded server's `faults`. */
  readonly faults: RequestFaults;
  /** Stores objects as given (status, uid and creationTimestamp included; defaults: namespace `default`), unrecorded. Returns them as stored. */
  seed<T extends KubeObject>(...objects: T[]): T[];
  /** The stored object (a copy), if any; unrecorded. Typed as the client's `get` types it: from the object or the typed reference. */
  object<T extends KubeObject>(target: ObjectTarget<T>): T | undefined;
  /** The stored objects of a kind (copies, by key), in a namespace or all; unrecorded. */
  objects<T extends KubeObject>(apiVersion: string, kind: string, namespace?: string): T[];
  /** A list-watch of a resource, as `listWatch` emits it: the list now, then every change. */
  watch<T extends KubeObject>(resource: ResourceRef, options?: MemoryWatchSelectors): Observable<ListWatchEvent<T>>;
  /** The same cluster through another field manager, unrecorded and never faulted: someone else (a user, another controller). */
  as(fieldManager: string): KubeClient;
  /** Serves one more custom resource. */
  serve(resource: MemoryResource): void;
}

/** The selectors a memory client's `watch` takes: kube's label and field selectors, and a `shardSelector` as `listWatch` takes it. */
export type MemoryWatchSelectors = Pick<ListWatchOptions<KubeObject>, 'labelSelector' | 'fieldSelector' | 'shardSelector'>;

/** What the marble helpers reach behind a memory client: its server, and a way to mirror a scripted watch into it. */
export interface MemoryClientInternals {
  readonly server: InProcessServer;
  typeOf(resource: ResourceRef): ResourceType;
  /** Sets or removes an object exactly as a scripted watch shows it, without a change event. */
  mirror(type: ResourceType, object: KubeObject, gone: boolean): void;
}

const internals = new WeakMap<MemoryClient, MemoryClientInternals>();

/** The internals of a client made by `memoryClient` (for `runReconcile`). */
export function memoryClientInternals(client: MemoryClient): MemoryClientInternals {
  const found = internals.get(client);
  if (found === undefined) throw new TypeError('not a client made by memoryClient()');
  return found;
}

/**
 * An in-memory `KubeClient` for tests (see `MemoryClient` for what it does
 * as the API server does, and what it simplifies).
 *
 * ```ts
 * const client = memoryClient({ scheduler, resources: [podAutoscalers] });
 * client.seed(deployment);
 * client.faults.failNext(1, { code: 409, verb: 'patch' });
 * await client.patchMerge(deployment, { spec: { replicas: 3 } }).catch(...); // 409 Conflict
 * client.writes; // [{ verb: 'patch', key: 'default/web', code: 409, injected: true, … }]
 * ```
 */
export function memoryClient(options: MemoryClientOptions = {}): MemoryClient {
  const scheduler = options.scheduler ?? asyncScheduler;
  const server = virtualServer(scheduler);
  const { cluster } = server;
  for (const resource of options.resources ?? []) serveResource(cluster.registry, resource);
  const requests: MemoryRequest[] = [];
  const resolver = registryResolver(cluster.registry);
  const clientOptions = {
    scheduler,
    resolver,
    random: options.random ?? (() => 0),
    ...(options.conflictBackoff !== undefined ? { conflictBackoff: options.conflictBackoff } : {}),
    ...(options.maxThrottleRetries !== undefined ? { maxThrottleRetries: options.maxThrottleRetries } : {}),
  };
  const transport = memoryTransport(server, { scheduler, latency: options.latency ?? 0, record: (r) => requests.push(r) });
  const client = kubeClient(transport, { ...clientOptions, fieldManager: options.fieldManager ?? 'rxkube' });
  const others = memoryTransport(server, { scheduler, faulty: false });

  const typeOf = (apiVersion: string | undefined, kind: string | undefined): ResourceType => typeOfKind(cluster.registry, apiVersion ?? '', kind ?? '');
  const copy = <T extends KubeObject>(type: ResourceType, object: KubeObject): T => cloneJson(toVersion(type, object)) as T;

  const seedOne = <T extends KubeObject>(object: T): T => {
    if (object === null || typeof object !== 'object' || typeof object.metadata !== 'object' || object.metadata === null) {
      throw new TypeError(`seed takes Kubernetes objects, got ${JSON.stringify(object)}`);
    }
    const type = typeOf(object.apiVersion, object.kind);
    const metadata = type.namespaced && !object.metadata.namespace ? { ...object.metadata, namespace: 'default' } : object.metadata;
    try {
      return copy<T>(type, cluster.put(type, { ...object, metadata }, 'seed', { keepIdentity: true }).object);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      throw new Error(`cannot seed ${object.kind ?? 'object'} "${metadata.namespace ? `${metadata.namespace}/` : ''}${metadata.name ?? ''}": ${err.message}`);
    }
  };

  const extras = {
    requests,
    get writes() {
      return requests.filter((r) => writeVerbs.includes(r.verb));
    },
    faults: server.faults,
    seed: <T extends KubeObject>(...objects: T[]) => objects.map(seedOne),
    object<T extends KubeObject>(target: ObjectTarget<T>): T | undefined {
      const ref = toRef(target);
      const type = typeOf(ref.apiVersion, ref.kind);
      const found = cluster.find(type, ref.namespace, ref.name);
      return found === undefined ? undefined : copy<T>(type, found.object);
    },
    objects: <T extends KubeObject>(apiVersion: string, kind: string, namespace?: string): T[] =>
      cluster.objects(typeOf(apiVersion, kind), namespace).map((o) => cloneJson(o) as T),
    watch: <T extends KubeObject>(resource: ResourceRef, o: MemoryWatchSelectors = {}) => {
      const { shardSelector, ...selectors } = o;
      const watchOf = (shard?: SourceShard) =>
        memoryWatch<T>(cluster, resource, {
          ...selectors,
          ...(shard !== undefined ? { shard: shard.shard.selector } : {}),
          scheduler,
          ...(options.watchLatency !== undefined ? { latency: options.watchLatency } : {}),
        });
      if (shardSelector === undefined) return watchOf();
      // Sharded as a server with ShardedListAndWatch shards: moving ranges list again, as listWatch does.
      return shardedListWatch<T>(shardSelector, { resource: resourceName(resource), logger: silentLogger, monitor: {}, signal: undefined, source: watchOf });
    },
    as: (fieldManager: string) => kubeClient(others, { ...clientOptions, fieldManager }),
    serve: (resource: MemoryResource) => serveResource(cluster.registry, resource),
  };
  // Property descriptors, not Object.assign: `writes` stays a getter.
  const memory = Object.defineProperties(client, Object.getOwnPropertyDescriptors(extras)) as MemoryClient;
  internals.set(memory, {
    server,
    typeOf: (resource) => typeOfResource(cluster.registry, resource),
    mirror: (type, object, gone) =>
      cluster.store.restore(type.storageKey, joinKey(type.namespaced ? object.metadata.namespace : undefined, object.metadata.name as string), gone ? undefined : object),
  });
  return memory;
}
