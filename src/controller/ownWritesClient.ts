import type {
  ApplyOptions,
  CallOptions,
  JsonPatchOperation,
  KubeClient,
  ListOptions,
  ListTarget,
  Mutate,
  ObjectTarget,
  RemoveOptions,
  RemoveResult,
  WriteOptions,
  WriteResult,
} from '../sinks/client/kubeClient.js';
import type { ResourceInfo } from '../sinks/client/resources.js';
import type { KubeObject, ObjectKey } from '../types.js';
import type { OwnWrite, OwnWrites } from './ownWrites.js';

/**
 * The client one run of `key` gets with read-your-own-writes on: `inner`,
 * with every write it answers recorded in `writes` (the resourceVersion it
 * produced, or the object gone for a delete), so that `key` does not run
 * again before the caches show it. Reads pass through; a write that fails
 * records nothing. A write whose answer is not an object (a Status) is not
 * recorded, except a delete's: the object is then gone.
 */
export class OwnWritesClient implements KubeClient {
  constructor(
    private readonly inner: KubeClient,
    private readonly writes: OwnWrites,
    private readonly key: ObjectKey,
  ) {}

  /** The same recording of writes, over another client (replay answers a run's requests with its own). */
  over(inner: KubeClient): OwnWritesClient {
    return new OwnWritesClient(inner, this.writes, this.key);
  }

  get<T extends KubeObject>(target: ObjectTarget, options?: CallOptions): Promise<T> {
    return this.inner.get<T>(target, options);
  }
  list<T extends KubeObject>(target: ListTarget, options?: ListOptions): Promise<T[]> {
    return this.inner.list<T>(target, options);
  }
  resource(apiVersion: string, kind: string, options?: CallOptions): Promise<ResourceInfo> {
    return this.inner.resource(apiVersion, kind, options);
  }
  create<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T> {
    return this.inner.create(object, options).then(this.wrote);
  }
  update<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T> {
    return this.inner.update(object, options).then(this.wrote);
  }
  apply<T extends KubeObject>(object: T, options?: ApplyOptions): Promise<T> {
    return this.inner.apply(object, options).then(this.wrote);
  }
  patchMerge<T extends KubeObject>(target: ObjectTarget, patch: object, options?: WriteOptions): Promise<T> {
    return this.inner.patchMerge<T>(target, patch, options).then(this.wrote);
  }
  patchJson<T extends KubeObject>(target: ObjectTarget, operations: readonly JsonPatchOperation[], options?: WriteOptions): Promise<T> {
    return this.inner.patchJson<T>(target, operations, options).then(this.wrote);
  }
  patchStatus<T extends KubeObject>(target: ObjectTarget, patch: object | readonly JsonPatchOperation[], options?: WriteOptions): Promise<T> {
    return this.inner.patchStatus<T>(target, patch, options).then(this.wrote);
  }
  createOrUpdate<T extends KubeObject>(object: T, mutate: Mutate<T>, options?: WriteOptions): Promise<WriteResult<T>> {
    return this.inner.createOrUpdate(object, mutate, options).then(this.wroteIfChanged);
  }
  updateStatus<T extends KubeObject>(object: T, mutate?: Mutate<T>, options?: WriteOptions): Promise<WriteResult<T>> {
    return this.inner.updateStatus(object, mutate, options).then(this.wroteIfChanged);
  }
  remove<T extends KubeObject>(target: ObjectTarget, options?: RemoveOptions): Promise<RemoveResult<T>> {
    return this.inner.remove<T>(target, options).then((answer) => {
      // `deleting`: still there, at a new version (its deletionTimestamp); `absent`: nothing this run wrote.
      if (answer.result === 'deleting' && answer.object !== undefined) this.wrote(answer.object);
      else if (answer.result === 'deleted') this.record(target, answer.object, true);
      return answer;
    });
  }

  private readonly wrote = <T extends KubeObject>(object: T): T => {
    this.record(object, object, false);
    return object;
  };

  private readonly wroteIfChanged = <T extends KubeObject>(answer: WriteResult<T>): WriteResult<T> => {
    if (answer.result !== 'unchanged') this.record(answer.object, answer.object, false);
    return answer;
  };

  private record(target: ObjectTarget, answer: KubeObject | undefined, gone: boolean): void {
    const write = ownWrite(target, answer, gone);
    if (write !== undefined) this.writes.record(this.key, write);
  }
}

/** The write an answer stands for; undefined when it names no object. */
function ownWrite(target: ObjectTarget, answer: KubeObject | undefined, gone: boolean): OwnWrite | undefined {
  const meta = answer?.metadata;
  if (!gone && (meta === null || typeof meta !== 'object')) return undefined;
  const named = target as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown }; name?: unknown; namespace?: unknown };
  const apiVersion = typeof answer?.apiVersion === 'string' ? answer.apiVersion : named.apiVersion;
  const kind = typeof answer?.kind === 'string' ? answer.kind : named.kind;
  const name = meta?.name ?? named.metadata?.name ?? named.name;
  const namespace = meta?.namespace ?? named.metadata?.namespace ?? named.namespace;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof name !== 'string' || name === '') return undefined;
  return {
    apiVersion,
    kind,
    name,
    namespace: typeof namespace === 'string' && namespace !== '' ? namespace : undefined,
    resourceVersion: typeof meta?.resourceVersion === 'string' && meta.resourceVersion !== '' ? meta.resourceVersion : undefined,
    uid: typeof meta?.uid === 'string' ? meta.uid : undefined,
    gone,
  };
}
