import { ForwardingClient, targetOf, type KubeCall } from '../sinks/client/forwardingClient.js';
import type { KubeClient, ObjectTarget } from '../sinks/client/kubeClient.js';
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
class TracedClient extends ForwardingClient {
  constructor(
    inner: KubeClient,
    private readonly hub: TimelineHub,
    private readonly key: ObjectKey,
  ) {
    super(inner);
  }

  protected override around(call: KubeCall): Promise<unknown> {
    let answer: Promise<unknown>;
    try {
      answer = this.forward(call);
    } catch (err) {
      this.tell(call, 0, undefined, messageOf(err));
      throw err;
    }
    return answer.then(
      (value) => {
        this.tell(call, answerCode(call.method, value), value, undefined);
        return value;
      },
      (err: unknown) => {
        this.tell(call, err instanceof KubeApiError ? err.code : 0, err instanceof KubeApiError ? err.status : undefined, messageOf(err));
        throw err;
      },
    );
  }

  /** Writes the call's entry, if someone still reads the timeline; what it addressed is worked out only then. */
  private tell(call: KubeCall, code: number, body: unknown, error: string | undefined): void {
    if (!this.hub.active) return;
    const { resource, objectKey } = addressed(targetOf(call));
    this.hub.write(this.key, { verb: call.method, resource, objectKey, code, body, error });
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
