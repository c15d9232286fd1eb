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
 * What a request addressed: the kind qualified by its group
 * (`Deployment.apps`, `ConfigMap`), and the object's key (none for a
 * list). The timeline names requests so, and replay matches calls to
 * recorded ones by it.
 */
export function addressed(target: ObjectTarget | ListTarget | undefined): { resource: string; objectKey: ObjectKey | undefined } {
  if (target === null || typeof target !== 'object') return { resource: '', objectKey: undefined };
  const apiVersion = typeof target.apiVersion === 'string' ? target.apiVersion : '';
  const kind = typeof target.kind === 'string' ? target.kind : '';
  const slash = apiVersion.indexOf('/');
  const resource = slash === -1 ? kind : `${kind}.${apiVersion.slice(0, slash)}`;
  const meta = 'metadata' in target && target.metadata !== null && typeof target.metadata === 'object' ? target.metadata : (target as { name?: unknown; namespace?: unknown });
  const name = typeof meta.name === 'string' ? meta.name : undefined;
  const namespace = typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : undefined;
  return { resource, objectKey: name === undefined ? undefined : namespace === undefined ? name : `${namespace}/${name}` };
}

/** The HTTP status a successful call's answer stands for. */
type CodeOf<R> = (answer: R) => number;
const ok: CodeOf<unknown> = () => 200;

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
    return this.traced('get', target, ok, () => this.inner.get<T>(target, options));
  }
  create<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T> {
    return this.traced('create', object, () => 201, () => this.inner.create(object, options));
  }
  update<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T> {
    return this.traced('update', object, ok, () => this.inner.update(object, options));
  }
  apply<T extends KubeObject>(object: T, options?: ApplyOptions): Promise<T> {
    return this.traced('apply', object, ok, () => this.inner.apply(object, options));
  }
  createOrUpdate<T extends KubeObject>(object: T, mutate: Mutate<T>, options?: WriteOptions): Promise<WriteResult<T>> {
    return this.traced('createOrUpdate', object, (answer) => (answer.result === 'created' ? 201 : 200), () => this.inner.createOrUpdate(object, mutate, options));
  }
  patchMerge<T extends KubeObject>(target: ObjectTarget, patch: object, options?: WriteOptions): Promise<T> {
    return this.traced('patchMerge', target, ok, () => this.inner.patchMerge<T>(target, patch, options));
  }
  patchJson<T extends KubeObject>(target: ObjectTarget, operations: readonly JsonPatchOperation[], options?: WriteOptions): Promise<T> {
    return this.traced('patchJson', target, ok, () => this.inner.patchJson<T>(target, operations, options));
  }
  updateStatus<T extends KubeObject>(object: T, mutate?: Mutate<T>, options?: WriteOptions): Promise<WriteResult<T>> {
    return this.traced('updateStatus', object, ok, () => this.inner.updateStatus(object, mutate, options));
  }
  patchStatus<T extends KubeObject>(target: ObjectTarget, patch: object | readonly JsonPatchOperation[], options?: WriteOptions): Promise<T> {
    return this.traced('patchStatus', target, ok, () => this.inner.patchStatus<T>(target, patch, options));
  }
  remove<T extends KubeObject>(target: ObjectTarget, options?: RemoveOptions): Promise<RemoveResult<T>> {
    return this.traced('remove', target, (answer) => (answer.result === 'absent' ? 404 : 200), () => this.inner.remove<T>(target, options));
  }
  list<T extends KubeObject>(target: ListTarget, options?: ListOptions): Promise<T[]> {
    return this.traced('list', target, ok, () => this.inner.list<T>(target, options));
  }
  resource(apiVersion: string, kind: string, options?: CallOptions): Promise<ResourceInfo> {
    return this.traced('resource', { apiVersion, kind }, ok, () => this.inner.resource(apiVersion, kind, options));
  }

  private traced<R>(verb: string, target: ObjectTarget | ListTarget, codeOf: CodeOf<R>, call: () => Promise<R>): Promise<R> {
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
        tell(codeOf(value), value, undefined);
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
