import type { EventEntry, RunEndEntry, TimelineEntry, WriteEntry } from '../../observe/timeline.js';
import type { ObjectKey } from '../../types.js';

/** One thing a run did, as a replay compares it: a request and its answer's code, an Event, or the outcome. */
export interface RunStep {
  /** Scheduler time, ms since the epoch. */
  readonly at: number;
  /** One line: `get deployments.apps default/web`, `patch deployments.apps default/web 409`, `Normal Scaled: 2 → 3`, `default/web success`. */
  readonly text: string;
}

/** One run of a key: the nth reconcile of `key` (from 1), with what it did. */
export interface RunRecord {
  /** The key the run was for. */
  readonly key: ObjectKey;
  /** The run's rank among the runs of its key, from 1. */
  readonly run: number;
  /** Its `ctx.attempt`: 1, and one more for each retry after a failure. */
  readonly attempt: number;
  /** When it started (ms since the epoch). */
  readonly start: number;
  /** When it ended; undefined for a run still in flight when the recording stopped. */
  readonly end: number | undefined;
  /** What it did, in order: requests with their answers' codes, Events, and last its outcome. */
  readonly steps: readonly RunStep[];
}

/** A recorded run, with the requests it made (and their answers), to be served to its replay in order. */
export interface RecordedRun extends RunRecord {
  readonly requests: readonly WriteEntry[];
  /** The places of its `run-start` and `run-end` among the recording's entries (no end: still in flight when it stopped). */
  readonly startIndex: number;
  readonly endIndex: number | undefined;
}

/** A request in one line, with its code when it was not a success (0: no answer came). */
export function requestText(verb: string, resource: string, objectKey: string | undefined, code: number): string {
  const failed = code >= 200 && code < 300 ? '' : ` ${code}`;
  return `${verb} ${resource}${objectKey === undefined || objectKey === '' ? '' : ` ${objectKey}`}${failed}`;
}

/** An Event in one line. */
export function eventText(type: string, reason: string, message: string): string {
  return `${type} ${reason}${message === '' ? '' : `: ${message}`}`;
}

/** An outcome in one line: `<key> <result>`, with the error's message (a requeue's delay is not in an outcome, so neither here). */
export function outcomeText(key: ObjectKey, result: string, error: string | undefined): string {
  return `${key} ${result}${error !== undefined ? `: ${error}` : ''}`;
}

/** Error messages as recorded and as replayed, alike: without a leading `Error: ` or `KubeApiError: `. */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/^[A-Za-z]*Error: /, '');
}

function writeStep(w: WriteEntry): RunStep {
  return { at: w.at, text: requestText(w.verb, w.resource, w.objectKey, w.code) };
}

function eventStep(e: EventEntry): RunStep {
  return { at: e.at, text: eventText(e.eventType, e.reason, e.message) };
}

function endStep(e: RunEndEntry): RunStep {
  return { at: e.at, text: outcomeText(e.key, e.result, e.error === undefined ? undefined : errorMessage(e.error)) };
}

interface OpenRun {
  key: ObjectKey;
  run: number;
  attempt: number;
  start: number;
  end: number | undefined;
  steps: RunStep[];
  requests: WriteEntry[];
  startIndex: number;
  endIndex: number | undefined;
}

/**
 * The runs of a recording, by key, each in order: a run is what happened
 * between a key's `run-start` and its `run-end` (at most one run of a key
 * is in flight at a time, so the writes and Events stamped with that key in
 * between are that run's).
 */
export function recordedRuns(entries: readonly TimelineEntry[]): Map<ObjectKey, RecordedRun[]> {
  const runs = new Map<ObjectKey, OpenRun[]>();
  const open = new Map<ObjectKey, OpenRun>();
  for (const [index, e] of entries.entries()) {
    switch (e.type) {
      case 'run-start': {
        const list = runs.get(e.key) ?? [];
        runs.set(e.key, list);
        const run: OpenRun = { key: e.key, run: list.length + 1, attempt: e.attempt, start: e.at, end: undefined, steps: [], requests: [], startIndex: index, endIndex: undefined };
        list.push(run);
        open.set(e.key, run);
        break;
      }
      case 'write': {
        const run = open.get(e.key);
        run?.steps.push(writeStep(e));
        run?.requests.push(e);
        break;
      }
      case 'event':
        open.get(e.key)?.steps.push(eventStep(e));
        break;
      case 'run-end': {
        const run = open.get(e.key);
        if (run === undefined) break;
        run.steps.push(endStep(e));
        run.end = e.at;
        run.endIndex = index;
        open.delete(e.key);
        break;
      }
      default:
        break;
    }
  }
  return runs;
}
