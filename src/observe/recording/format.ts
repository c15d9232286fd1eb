import type { TimelineEntry } from '../timeline.js';

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
  /** The API group; absent for the core group. */
  readonly group?: string;
  /** The API version. */
  readonly version: string;
  /** The plural resource name. */
  readonly resource: string;
  /** The kind of its objects. */
  readonly kind: string;
  /** The one namespace watched, if only one. */
  readonly namespace?: string;
  /** The label selector of its informer. */
  readonly labelSelector?: string;
  /** The field selector of its informer. */
  readonly fieldSelector?: string;
  /** Whether only its objects' metadata was watched. */
  readonly metadataOnly?: boolean;
}

/** What replay needs of the recorded controller's options (functions such as `map` and `predicates` cannot be written down). */
export interface RecordedOptions {
  /** The primary resource. */
  readonly for: RecordedResource;
  /** The owned resources. */
  readonly owns: readonly RecordedResource[];
  /** The watched resources (their maps are code: replay takes them from its options, or replays the recorded triggers). */
  readonly watches: readonly RecordedResource[];
  /** Reconciles in flight at most. */
  readonly concurrency: number;
  /** Ms a reconcile could take, if limited. */
  readonly timeout?: number;
  /** Retries before a key was dropped, if limited. */
  readonly maxRetries?: number;
  /** The primary resource's resync period (ms), if any. */
  readonly resyncPeriod?: number;
  /**
   * Read-your-own-writes, when it was on, with its timeout (ms; none for no
   * limit). Absent: off (and in recordings made before it existed).
   */
  readonly readYourWrites?: { readonly timeout?: number };
  /** Whether Secrets' `data` and `stringData` were replaced by `(redacted)`. */
  readonly redactSecrets: boolean;
}

/** The first line of every file of a recording. */
export interface RecordingHeader {
  /** Tells the header from the entries. */
  readonly type: 'header';
  /** Always `rxkube-recording`. */
  readonly format: typeof recordingFormat;
  /** The format's version (1). */
  readonly version: number;
  /** The recorded controller's name. */
  readonly controller: string;
  /** When the recording started (the controller's scheduler time, ms since the epoch); the same in every file of one recording. */
  readonly start: number;
  /** Which file of the recording this is: 0 for the first, one more after each rotation. */
  readonly part: number;
  /** What replay needs of the controller's options. */
  readonly options: RecordedOptions;
}

/** A recording as read back: its header, and its entries in order. */
export interface Recording {
  /** The header of its first file. */
  readonly header: RecordingHeader;
  /** Every entry, oldest first, across the rotated files. */
  readonly entries: readonly TimelineEntry[];
  /** Where each entry of `entries` was read (`file:line`), for messages that name it; absent for a recording made in memory. */
  readonly places?: readonly string[];
  /** The files read, oldest first. */
  readonly files: readonly string[];
  /** What the reader tolerated: a partial last line, a first part rotated away. */
  readonly warnings: readonly string[];
}
