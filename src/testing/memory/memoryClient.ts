import { asyncScheduler, type Observable, type SchedulerLike } from 'rxjs';
import type { KubeClient, ObjectTarget } from '../../sinks/client/kubeClient.js';
import type { ResourceRef, KubeObject, ListWatchEvent } from '../../types.js';
import { cloneJson } from '../../util/json.js';
import { FaultQueue, type Fault } from './faults.js';
import { MemoryCluster } from './memoryCluster.js';
import { MemoryKinds, type MemoryResource } from './memoryKinds.js';
import { toRef } from '../../sinks/client/readModifyWrite.js';
import { memoryKubeClient, toApiError, type RequestSettings } from './memoryKubeClient.js';
import type { MemoryRequest } from './memoryRequest.js';
import { memoryWatch } from './memoryWatch.js';

export interface MemoryClientOptions extends RequestSettings {
  /** The clock of writes and timestamps, and where waits happen (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /** The field manager of writes (default `rxkube`, as the real client's). */
  fieldManager?: string;
  /** Custom resources it serves besides the built-ins. */
  resources?: readonly MemoryResource[];
  /** Ms between a write and its watch event (default 0). */
  watchLatency?: number;
}

/**
 * A `KubeClient` over an in-memory cluster, for tests: everything a
 * reconcile can do through `ctx.client`, answered at once (or after
 * `latency`) on the scheduler's clock, with every request recorded.
 *
 * What it does as the API server does (it runs the embedded API server's
 * write logic): server-set metadata (uid, creationTimestamp, generation
 * bumped on spec changes only), resourceVersion on every change and none on
 * a no-op write, 409 Conflict on a stale resourceVersion, 409 AlreadyExists,
 * 404 NotFound, the `/status` split (the main resource cannot change status,
 * `/status` changes nothing else), merge and JSON patches (a failed `test`
 * is 422 Invalid), server-side apply with field ownership and conflicts,
 * finalizers and `deletionTimestamp`, owner-reference garbage collection,
 * label and field selectors on watches. Errors are `KubeApiError`s built
 * from a Status body as the real client builds them, so `isNotFound`,
 * `isConflict` and the rest work; `createOrUpdate` and `updateStatus` retry
 * conflicts as the real client does (through `retryOnConflict`, without
 * jitter by default).
 *
 * What it simplifies: no namespaces are required to exist; no schema,
 * admission or CRD validation; one version per kind (no conversion); the
 * garbage collector and foreground/orphan deletion happen inside the delete
 * that causes them (kube's are asynchronous); strategic merge patches are
 * not offered (neither does `KubeClient`); discovery is a fixed list
 * (built-ins plus `resources`).
 *
 * For tests: `requests`/`writes` read back what was done, `failNext`
 * injects faults, `seed` and `as(manager)` change the cluster without being
 * recorded, `watch` lists and watches it as a source would.
 */
export interface MemoryClient extends KubeClient {
  /** Every request, in order: reads and writes, answered or refused. */
  readonly requests: readonly MemoryRequest[];
  /** The requests that were writes (`create`, `update`, `patch`, `apply`, `delete`). */
  readonly writes: readonly MemoryRequest[];
  /** The next `count` requests that `fault` selects (default: any write) fail with it instead of running. */
  failNext(count: number, fault: Fault): void;
  /** Faults added with `failNext` that no request has used yet. */
  pendingFaults(): number;
  /** Stores objects as given (status included; defaults: namespace `default`), unrecorded. Returns them as stored. */
  seed<T extends KubeObject>(...objects: T[]): T[];
  /** The stored object (a copy), if any; unrecorded. */
  object<T extends KubeObject>(target: ObjectTarget): T | undefined;
  /** The stored objects of a kind (copies, by key), in a namespace or all; unrecorded. */
  objects<T extends KubeObject>(apiVersion: string, kind: string, namespace?: string): T[];
  /** A list-watch of a resource, as `listWatch` emits it: the list now, then every change. */
  watch<T extends KubeObject>(resource: ResourceRef, options?: { labelSelector?: string; fieldSelector?: string }): Observable<ListWatchEvent<T>>;
  /** The same cluster through another field manager, unrecorded and never faulted: someone else (a user, another controller). */
  as(fieldManager: string): KubeClient;
  /** Serves one more custom resource. */
  serve(resource: MemoryResource): void;
  /** The cluster behind it. */
  readonly cluster: MemoryCluster;
}

/**
 * An in-memory `KubeClient` for tests (see `MemoryClient` for what it does
 * as the API server does, and what it simplifies).
 *
 * ```ts
 * const client = memoryClient({ scheduler, resources: [podAutoscalers] });
 * client.seed(deployment);
 * client.failNext(1, { code: 409 });
 * await client.patchMerge(deployment, { spec: { replicas: 3 } }).catch(...); // 409 Conflict
 * client.writes; // [{ verb: 'patch', key: 'default/web', code: 409, injected: true, … }]
 * ```
 */
export function memoryClient(options: MemoryClientOptions = {}): MemoryClient {
  const scheduler = options.scheduler ?? asyncScheduler;
  const kinds = new MemoryKinds(options.resources ?? []);
  const cluster = new MemoryCluster(kinds, () => scheduler.now());
  const requests: MemoryRequest[] = [];
  const faults = new FaultQueue();
  const client = memoryKubeClient({ cluster, scheduler, manager: options.fieldManager ?? 'rxkube', options, log: { requests, faults } });
  const seedManager = 'seed';

  const seedOne = <T extends KubeObject>(object: T): T => {
    if (object === null || typeof object !== 'object' || typeof object.metadata !== 'object' || object.metadata === null) {
      throw new TypeError(`seed takes Kubernetes objects, got ${JSON.stringify(object)}`);
    }
    const type = kinds.byKind(object.apiVersion ?? '', object.kind ?? '');
    const metadata = type.namespaced && !object.metadata.namespace ? { ...object.metadata, namespace: 'default' } : object.metadata;
    try {
      return cloneJson(cluster.put(type, { ...object, metadata }, seedManager)) as T;
    } catch (err) {
      const status = toApiError(err);
      if (status === undefined) throw err;
      throw new Error(`cannot seed ${object.kind ?? 'object'} "${metadata.namespace ? `${metadata.namespace}/` : ''}${metadata.name ?? ''}": ${status.message}`);
    }
  };

  const extras = {
    requests,
    get writes() {
      return requests.filter((r) => r.verb !== 'get');
    },
    failNext: (count: number, fault: Fault) => faults.add(count, fault),
    pendingFaults: () => faults.pending(),
    seed: <T extends KubeObject>(...objects: T[]) => objects.map(seedOne),
    object<T extends KubeObject>(target: ObjectTarget): T | undefined {
      const ref = toRef(target);
      const type = kinds.byKind(ref.apiVersion, ref.kind);
      const found = cluster.find(type, ref.namespace, ref.name);
      return found === undefined ? undefined : (cloneJson(found) as T);
    },
    objects: <T extends KubeObject>(apiVersion: string, kind: string, namespace?: string) =>
      cluster.list(kinds.byKind(apiVersion, kind), namespace).map((o) => cloneJson(o) as T),
    watch: <T extends KubeObject>(resource: ResourceRef, o: { labelSelector?: string; fieldSelector?: string } = {}) =>
      memoryWatch<T>(cluster, resource, { ...o, scheduler, ...(options.watchLatency !== undefined ? { latency: options.watchLatency } : {}) }),
    as: (fieldManager: string) => memoryKubeClient({ cluster, scheduler, manager: fieldManager, options: { ...options, latency: 0 } }),
    serve: (resource: MemoryResource) => kinds.add(resource),
    cluster,
  };
  // Property descriptors, not Object.assign: `writes` stays a getter.
  return Object.defineProperties(client, Object.getOwnPropertyDescriptors(extras)) as MemoryClient;
}
