import type { TimelineEntry } from '../../timeline.js';

/**
 * The flight recorder's file format: newline-delimited JSON, one object a
 * line. Every file of a recording (the current one and each rotated one)
 * starts with a `RecordingHeader`; then come `TimelineEntry`s as the
 * controller's `timeline` emitted them, in order. A reader skips entry
 * types it does not know, as the timeline's own rule says.
 */

/** The format's name in every header, so that a stray JSON-lines file is told apart from a recording. */
export const recordingFormat = 'rxkube-recording';

/** The version this code writes and reads; a reader refuses any other. */
export const recordingVersion = 1;

/** A watched resource as a recording keeps it: enough to list it again and to serve it to a replayed client. */
export interface RecordedResource {
  readonly group?: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly metadataOnly?: boolean;
}

/** What replay needs of the recorded controller's options (functions such as `map` and `predicates` cannot be written down). */
export interface RecordedOptions {
  readonly for: RecordedResource;
  readonly owns: readonly RecordedResource[];
  readonly watches: readonly RecordedResource[];
  readonly concurrency: number;
  readonly timeout?: number;
  readonly maxRetries?: number;
  readonly resyncPeriod?: number;
  /** Whether Secrets' `data` and `stringData` were replaced by `(redacted)`. */
  readonly redactSecrets: boolean;
}

/** The first line of every file of a recording. */
export interface RecordingHeader {
  readonly type: 'header';
  readonly format: typeof recordingFormat;
  readonly version: number;
  /** The recorded controller's name. */
  readonly controller: string;
  /** When the recording started (the controller's scheduler time, ms since the epoch); the same in every file of one recording. */
  readonly start: number;
  /** Which file of the recording this is: 0 for the first, one more after each rotation. */
  readonly part: number;
  readonly options: RecordedOptions;
}

/** A recording as read back: its header, and its entries in order. */
export interface Recording {
  /** The header of its first file. */
  readonly header: RecordingHeader;
  /** Every entry, oldest first, across the rotated files. */
  readonly entries: readonly TimelineEntry[];
  /** The files read, oldest first. */
  readonly files: readonly string[];
  /** What the reader tolerated: a partial last line, a first part rotated away. */
  readonly warnings: readonly string[];
}
