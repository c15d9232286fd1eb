import type { Observable, SchedulerLike } from 'rxjs';
import type { Logger } from '../../logger.js';
import type { TimelineEntry } from '../timeline.js';
import { recordingFormat, recordingVersion, type RecordedOptions, type RecordingHeader } from './format.js';
import { redactEntry } from '../redactSecrets.js';
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

/**
 * Writes a controller's timeline (its name and options as `recordedOptions`
 * gives them) to `record.path` as the flight recorder's
 * format (see `format.ts`): a header, then one entry a line, Secrets
 * redacted unless `keepSecrets`. Subscribe before the controller starts,
 * so that the informers' first lists are in it. Writing happens in the
 * background (see `rotatingFile`); nothing here throws into the
 * controller: an entry that cannot be written is logged and skipped.
 */
export function recordTimeline(
  timeline: Observable<TimelineEntry>,
  controller: { name: string; options: Omit<RecordedOptions, 'redactSecrets'> },
  record: RecordOptions,
  parts: { scheduler: SchedulerLike; logger: Logger },
): TimelineRecording {
  if (typeof record.path !== 'string' || record.path === '') throw new TypeError('record: needs a file path');
  const redact = record.keepSecrets !== true;
  const start = parts.scheduler.now();
  const recorded: RecordedOptions = { ...controller.options, redactSecrets: redact };
  const header = (part: number): string => {
    const line: RecordingHeader = { type: 'header', format: recordingFormat, version: recordingVersion, controller: controller.name, start, part, options: recorded };
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
