import { firstValueFrom, timer, type SchedulerLike } from 'rxjs';
import { KubeApiError } from '../../sinks/client/errors.js';
import { addressed } from '../../observe/timelineClient.js';
import type { KubeClient, ListTarget, ObjectTarget } from '../../sinks/client/kubeClient.js';
import type { WriteEntry } from '../../observe/timeline.js';
import { splitKey } from '../../types.js';
import { requestText, type RecordedRun, type RunStep } from './runSteps.js';

/** A request that the recorded run did not make: replay has no answer for it. */
export class UnrecordedRequestError extends Error {
  /** `UnrecordedRequestError`. */
  override readonly name = 'UnrecordedRequestError';
}

/** Where a replayed run's steps go, and which run it is. */
export interface ReplayedRunLog {
  readonly key: string;
  readonly run: number;
  readonly steps: RunStep[];
}

type KubeStatus = NonNullable<KubeApiError['status']>;

function isStatus(body: unknown): body is KubeStatus {
  return body !== null && typeof body === 'object' && (body as { kind?: unknown }).kind === 'Status';
}

/** The failure a recorded answer stands for: the `KubeApiError` the client threw (with its message as recorded), or a plain error when no answer came. */
function recordedFailure(entry: WriteEntry): Error {
  const message = entry.error ?? `${entry.verb} ${entry.resource} failed with ${entry.code}`;
  if (entry.code === 0 && !isStatus(entry.body)) return new Error(message);
  const { namespace, name } = entry.objectKey === undefined ? { namespace: undefined, name: undefined } : splitKey(entry.objectKey);
  const status = isStatus(entry.body) ? entry.body : undefined;
  const error = new KubeApiError(
    { verb: entry.verb, resource: entry.resource, ...(name !== undefined ? { name } : {}), ...(namespace !== undefined ? { namespace } : {}) },
    { code: entry.code, message: status?.message ?? message, ...(status?.reason !== undefined ? { reason: status.reason } : {}), ...(status !== undefined ? { status, details: status.details } : {}) },
  );
  Object.defineProperty(error, 'message', { value: message });
  return error;
}

/**
 * The `ctx.client` of one replayed run: each call is answered with the
 * answer the recorded run got to the first call it made, not yet
 * answered, of the same method on the same kind and object (so a run that
 * calls the same methods in the same order gets the same answers), at the
 * recorded time of that answer or at once when that time is past. A
 * failure comes back as the same `KubeApiError` (code, reason, Status,
 * message), so `isNotFound` and `isConflict` read it alike. A call the
 * recorded run never made fails with an `UnrecordedRequestError` that names
 * it and what the recorded run did call.
 */
export function replayClient(recorded: RecordedRun | undefined, log: ReplayedRunLog, scheduler: SchedulerLike): KubeClient {
  const unanswered = [...(recorded?.requests ?? [])];
  const answer = async <R>(verb: string, target: ObjectTarget | ListTarget): Promise<R> => {
    const { resource, objectKey } = addressed(target);
    const i = unanswered.findIndex((e) => e.verb === verb && e.resource === resource && e.objectKey === objectKey);
    if (i < 0) {
      const asked = requestText(verb, resource, objectKey, 200);
      const made = recorded === undefined ? 'the recording has no such run' : `the recorded run made: ${recorded.requests.map((r) => requestText(r.verb, r.resource, r.objectKey, r.code)).join(', ') || 'no requests'}`;
      log.steps.push({ at: scheduler.now(), text: `${asked} (not recorded)` });
      throw new UnrecordedRequestError(`replay: run ${log.run} of "${log.key}" made a request the recording did not: ${asked} (${made})`);
    }
    const entry = unanswered.splice(i, 1)[0] as WriteEntry;
    if (entry.at > scheduler.now()) await firstValueFrom(timer(entry.at - scheduler.now(), scheduler));
    log.steps.push({ at: scheduler.now(), text: requestText(entry.verb, entry.resource, entry.objectKey, entry.code) });
    if (entry.error !== undefined || entry.code >= 400 || entry.code === 0) throw recordedFailure(entry);
    return structuredClone(entry.body) as R;
  };
  return {
    get: (target) => answer('get', target),
    create: (object) => answer('create', object),
    update: (object) => answer('update', object),
    apply: (object) => answer('apply', object),
    createOrUpdate: (object) => answer('createOrUpdate', object),
    patchMerge: (target) => answer('patchMerge', target),
    patchJson: (target) => answer('patchJson', target),
    updateStatus: (object) => answer('updateStatus', object),
    patchStatus: (target) => answer('patchStatus', target),
    remove: (target) => answer('remove', target),
    list: (target) => answer('list', target),
    resource: (apiVersion, kind) => answer('resource', { apiVersion, kind }),
  };
}
