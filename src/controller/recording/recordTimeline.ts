import type { Observable, SchedulerLike } from 'rxjs';
import type { Logger } from '../../logger.js';
import type { TimelineEntry } from '../../timeline.js';
import type { ControllerOptions, WatchedResource } from '../controller.js';
import type { KubeObject } from '../../types.js';
import { DEFAULT_OWN_WRITE_TIMEOUT, readYourWritesOption } from '../readYourWrites.js';
import { recordingFormat, recordingVersion, type RecordedOptions, type RecordedResource, type RecordingHeader } from './format.js';
import { redactEntry } from '../../util/redactSecrets.js';
import { rotatingFile, type RotatingFileStats, type RotationOptions } from './rotatingFile.js';

/** Where and how `runController` records its timeline (`record: 'run.jsonl'` is `{ path: 'run.jsonl' }`). */
export interface RecordOptions extends RotationOptions {
  /** The file; rotated ones are `path.1`, `path.2`, … (the highest the oldest). */
  path: string;
  /** Keep Secrets' `data` and `stringData` as received (default false: their values read `(redacted)`). */
  keepSecrets?: boolean;
}

/** A recording under way. */
export interface TimelineRecording {
  /** Stops recording; resolves once every entry so far is on disk (or counted as dropped). Never rejects. */
  stop(): Promise<void>;
  stats(): RotatingFileStats;
}

function recordedResource(r: WatchedResource): RecordedResource {
  return {
    ...(r.group !== undefined ? { group: r.group } : {}),
    version: r.version,
    resource: r.resource,
    kind: r.kind,
    ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
    ...(r.labelSelector !== undefined ? { labelSelector: r.labelSelector } : {}),
    ...(r.fieldSelector !== undefined ? { fieldSelector: r.fieldSelector } : {}),
    ...(r.metadataOnly !== undefined ? { metadataOnly: r.metadataOnly } : {}),
  };
}

/** What a recording keeps of a controller's options: the data replay needs, none of the functions. */
export function recordedOptions<T extends KubeObject>(options: ControllerOptions<T>, redactSecrets: boolean): RecordedOptions {
  return {
    for: recordedResource(options.for),
    owns: (options.owns ?? []).map(recordedResource),
    watches: (options.watches ?? []).map((w) => recordedResource(w.resource)),
    concurrency: options.concurrency ?? 1,
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    ...(options.resyncPeriod !== undefined ? { resyncPeriod: options.resyncPeriod } : {}),
    ...recordedReadYourWrites(options.readYourWrites),
    redactSecrets,
  };
}

/**
 * Writes a controller's timeline to `record.path` as the flight recorder's
 * format (see `format.ts`): a header, then one entry a line, Secrets
 * redacted unless `keepSecrets`. Subscribe before the controller starts,
 * so that the informers' first lists are in it. Writing happens in the
 * background (see `rotatingFile`); nothing here throws into the
 * controller: an entry that cannot be written is logged and skipped.
 */
export function recordTimeline<T extends KubeObject>(
  timeline: Observable<TimelineEntry>,
  options: ControllerOptions<T>,
  record: RecordOptions,
  parts: { scheduler: SchedulerLike; logger: Logger },
): TimelineRecording {
  if (typeof record.path !== 'string' || record.path === '') throw new TypeError('record: needs a file path');
  const redact = record.keepSecrets !== true;
  const start = parts.scheduler.now();
  const recorded = recordedOptions(options, redact);
  const header = (part: number): string => {
    const line: RecordingHeader = { type: 'header', format: recordingFormat, version: recordingVersion, controller: options.name, start, part, options: recorded };
    return JSON.stringify(line);
  };
  const file = rotatingFile(record.path, header, parts.logger, record);
  let unwritable = 0;
  const subscription = timeline.subscribe({
    next: (entry) => {
      let line: string;
      try {
        line = JSON.stringify(redact ? redactEntry(entry) : entry);
      } catch (err) {
        if (unwritable++ === 0) parts.logger.warn({ err: String(err), type: entry.type }, 'record: a timeline entry is not JSON; skipped');
        return;
      }
      file.write(line);
    },
    error: (err: unknown) => parts.logger.warn({ err: String(err) }, 'record: the timeline ended with an error'),
  });
  return {
    stop: async () => {
      subscription.unsubscribe();
      await file.close();
    },
    stats: () => file.stats(),
  };
}

/** How read-your-own-writes was set, for replay to set it the same way. */
function recordedReadYourWrites(option: ControllerOptions<KubeObject>['readYourWrites']): Pick<RecordedOptions, 'readYourWrites'> {
  const on = readYourWritesOption(option);
  if (on === undefined) return {};
  const timeout = on.timeout ?? DEFAULT_OWN_WRITE_TIMEOUT;
  return { readYourWrites: Number.isFinite(timeout) ? { timeout } : {} };
}
