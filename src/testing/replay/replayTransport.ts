import { Observable, timer, type SchedulerLike } from 'rxjs';
import { errorFromResponse } from '../../sinks/client/errors.js';
import type { KubeRequest, KubeTransport } from '../../sinks/client/kubeTransport.js';
import type { WriteEntry } from '../../timeline.js';
import { joinKey } from '../../types.js';
import { requestText, type RecordedRun, type RunStep } from './runSteps.js';

/** A request that the recorded run did not make: replay has no answer for it. */
export class UnrecordedRequestError extends Error {
  override readonly name = 'UnrecordedRequestError';
}

/** Where a replayed run's steps go, and which run it is. */
export interface ReplayedRunLog {
  readonly key: string;
  readonly run: number;
  readonly steps: RunStep[];
}

function sameTarget(entry: WriteEntry, request: KubeRequest): boolean {
  const { verb, resource, subresource, namespace, name } = request.describe;
  if (entry.verb !== verb) return false;
  if (entry.resource !== resource && entry.resource !== `${resource}/${subresource ?? ''}`) return false;
  // A list addresses a namespace (or all), not an object.
  if (name === undefined) return true;
  return entry.objectKey === joinKey(namespace, name);
}

function describe(request: KubeRequest): string {
  const { verb, resource, namespace, name } = request.describe;
  return requestText(verb, resource, name === undefined ? namespace : joinKey(namespace, name), 200);
}

/**
 * The transport of one replayed run: each request is answered with the
 * answer the recorded run got to the first request it made, not yet
 * answered, of the same verb, resource and object (so a run that makes
 * the same requests in the same order gets the same answers), at the
 * recorded time of that answer or at once when that time is past. A request
 * the recorded run never made fails with an `UnrecordedRequestError` that
 * names it and what the recorded run did make.
 */
export function replayTransport(recorded: RecordedRun | undefined, log: ReplayedRunLog, scheduler: SchedulerLike): KubeTransport {
  const unanswered = [...(recorded?.requests ?? [])];
  return {
    send: <T>(request: KubeRequest) =>
      new Observable<T>((subscriber) => {
        const i = unanswered.findIndex((entry) => sameTarget(entry, request));
        if (i < 0) {
          const made = recorded === undefined ? 'the recording has no such run' : `the recorded run made: ${recorded.requests.map((r) => requestText(r.verb, r.resource, r.objectKey, r.code)).join(', ') || 'no requests'}`;
          log.steps.push({ at: scheduler.now(), text: `${describe(request)} (not recorded)` });
          subscriber.error(new UnrecordedRequestError(`replay: run ${log.run} of "${log.key}" made a request the recording did not: ${describe(request)} (${made})`));
          return undefined;
        }
        const entry = unanswered.splice(i, 1)[0] as WriteEntry;
        return timer(Math.max(0, entry.at - scheduler.now()), scheduler).subscribe(() => {
          log.steps.push({ at: scheduler.now(), text: requestText(entry.verb, entry.resource, entry.objectKey, entry.code) });
          if (entry.code >= 200 && entry.code < 300) {
            subscriber.next(structuredClone(entry.body) as T);
            subscriber.complete();
          } else {
            subscriber.error(errorFromResponse(request.describe, entry.code, entry.body === undefined ? '' : JSON.stringify(entry.body)));
          }
        });
      }),
  };
}
