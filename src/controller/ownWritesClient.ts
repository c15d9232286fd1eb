import { ForwardingClient, type KubeCall } from '../sinks/client/forwardingClient.js';
import type { KubeClient, ObjectTarget, RemoveResult, WriteResult } from '../sinks/client/kubeClient.js';
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
export class OwnWritesClient extends ForwardingClient {
  constructor(
    inner: KubeClient,
    private readonly writes: OwnWrites,
    private readonly key: ObjectKey,
  ) {
    super(inner);
  }

  /** The same recording of writes, over another client (replay answers a run's requests with its own). */
  over(inner: KubeClient): OwnWritesClient {
    return new OwnWritesClient(inner, this.writes, this.key);
  }

  // Only the writes matter here; reads (get, list, resource) go on as they came.
  protected override around(call: KubeCall): Promise<unknown> {
    switch (call.method) {
      case 'create':
      case 'update':
      case 'apply':
      case 'patchMerge':
      case 'patchJson':
      case 'patchStatus':
        return (this.forward(call) as Promise<KubeObject>).then(this.wrote);
      case 'createOrUpdate':
      case 'updateStatus':
        return (this.forward(call) as Promise<WriteResult<KubeObject>>).then(this.wroteIfChanged);
      case 'remove': {
        const target = call.target;
        return (this.forward(call) as Promise<RemoveResult<KubeObject>>).then((answer) => {
          // `deleting`: still there, at a new version (its deletionTimestamp); `absent`: nothing this run wrote.
          if (answer.result === 'deleting' && answer.object !== undefined) this.wrote(answer.object);
          else if (answer.result === 'deleted') this.record(target, answer.object, true);
          return answer;
        });
      }
      default:
        return this.forward(call);
    }
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
