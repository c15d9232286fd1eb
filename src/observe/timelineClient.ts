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
import { KubeApiError } from '../sinks/client/errors.js';
import type { EventInput, EventRecorder } from '../sinks/events/eventRecorder.js';
import type { ObjectReference } from '../sinks/events/objectReference.js';
import type { KubeObject, ObjectKey } from '../types.js';
import type { TimelineHub } from './timelineHub.js';
import { addressed, answerCode } from '../observe/addressed.js';

export { addressed };

/** The client and recorder a run is given. */
export interface RunParts {
  readonly client: KubeClient;
  readonly recorder: EventRecorder;
}

/**
 * The client and recorder one run of `key` gets: when someone reads the
 * timeline as the run starts, ones that tell it of every request (with
 * its answer) and every Event; else the controller's own (`own`, made
 * once), untouched, so that a run nobody watches allocates nothing for
 * the timeline.
 */
export function runParts(hub: TimelineHub, key: ObjectKey, own: RunParts): RunParts {
  if (!hub.active) return own;
  return { client: new TracedClient(own.client, hub, key), recorder: new TracedRecorder(own.recorder, hub, key) };
}

/**
 * A `KubeClient` that tells the timeline of each call of one run when it
 * is answered: the verb (the method's name), what it addressed, the
 * status code (201 for a create, 404 for a delete of an object already
 * gone, the error's code for a failure, 0 when no answer came) and the
 * answer itself (for a failure, the server's Status if it sent one).
 */
class TracedClient implements KubeClient {
  constructor(
    private readonly inner: KubeClient,
    private readonly hub: TimelineHub,
    private readonly key: ObjectKey,
  ) {}

  get<T extends KubeObject>(target: ObjectTarget, options?: CallOptions): Promise<T> {
    return this.traced('get', target, () => this.inner.get<T>(target, options));
  }
  create<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T> {
    return this.traced('create', object, () => this.inner.create(object, options));
  }
  update<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T> {
    return this.traced('update', object, () => this.inner.update(object, options));
  }
  apply<T extends KubeObject>(object: T, options?: ApplyOptions): Promise<T> {
    return this.traced('apply', object, () => this.inner.apply(object, options));
  }
  createOrUpdate<T extends KubeObject>(object: T, mutate: Mutate<T>, options?: WriteOptions): Promise<WriteResult<T>> {
    return this.traced('createOrUpdate', object, () => this.inner.createOrUpdate(object, mutate, options));
  }
  patchMerge<T extends KubeObject>(target: ObjectTarget, patch: object, options?: WriteOptions): Promise<T> {
    return this.traced('patchMerge', target, () => this.inner.patchMerge<T>(target, patch, options));
  }
  patchJson<T extends KubeObject>(target: ObjectTarget, operations: readonly JsonPatchOperation[], options?: WriteOptions): Promise<T> {
    return this.traced('patchJson', target, () => this.inner.patchJson<T>(target, operations, options));
  }
  updateStatus<T extends KubeObject>(object: T, mutate?: Mutate<T>, options?: WriteOptions): Promise<WriteResult<T>> {
    return this.traced('updateStatus', object, () => this.inner.updateStatus(object, mutate, options));
  }
  patchStatus<T extends KubeObject>(target: ObjectTarget, patch: object | readonly JsonPatchOperation[], options?: WriteOptions): Promise<T> {
    return this.traced('patchStatus', target, () => this.inner.patchStatus<T>(target, patch, options));
  }
  remove<T extends KubeObject>(target: ObjectTarget, options?: RemoveOptions): Promise<RemoveResult<T>> {
    return this.traced('remove', target, () => this.inner.remove<T>(target, options));
  }
  list<T extends KubeObject>(target: ListTarget, options?: ListOptions): Promise<T[]> {
    return this.traced('list', target, () => this.inner.list<T>(target, options));
  }
  resource(apiVersion: string, kind: string, options?: CallOptions): Promise<ResourceInfo> {
    return this.traced('resource', { apiVersion, kind }, () => this.inner.resource(apiVersion, kind, options));
  }

  private traced<R>(verb: string, target: ObjectTarget | ListTarget, call: () => Promise<R>): Promise<R> {
    const tell = (code: number, body: unknown, error: string | undefined): void => {
      if (!this.hub.active) return;
      const { resource, objectKey } = addressed(target);
      this.hub.write(this.key, { verb, resource, objectKey, code, body, error });
    };
    let answer: Promise<R>;
    try {
      answer = call();
    } catch (err) {
      tell(0, undefined, messageOf(err));
      throw err;
    }
    return answer.then(
      (value) => {
        tell(answerCode(verb, value), value, undefined);
        return value;
      },
      (err: unknown) => {
        tell(err instanceof KubeApiError ? err.code : 0, err instanceof KubeApiError ? err.status : undefined, messageOf(err));
        throw err;
      },
    );
  }
}

/** An `EventRecorder` that tells the timeline of each Event one run records, then records it. */
class TracedRecorder implements EventRecorder {
  constructor(
    private readonly inner: EventRecorder,
    private readonly hub: TimelineHub,
    private readonly key: ObjectKey,
  ) {}

  record(regarding: KubeObject | ObjectReference, event: EventInput): void {
    if (this.hub.active && event !== null && typeof event === 'object') {
      const { objectKey } = addressed(regarding as ObjectTarget);
      this.hub.event(this.key, event.type, event.reason, event.action, event.note, objectKey);
    }
    this.inner.record(regarding, event);
  }

  flush(): Promise<void> {
    return this.inner.flush();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  stats(): ReturnType<EventRecorder['stats']> {
    return this.inner.stats();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
