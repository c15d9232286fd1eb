import type { KubeObject, ObjectKey } from './types.js';

/**
 * What a controller does, as one stream: the entries its `timeline` emits.
 * The live view, the flight recorder and `replay` read this one stream
 * (DESIGN invariant 24). Every entry carries `at`, the controller's
 * scheduler time (ms since the epoch) at the moment it happened, and
 * `controller`, the controller's name; entries come in the order things
 * happened. Readers must ignore entry types they do not know: new ones may
 * be added.
 */
export type TimelineEntry =
  | InformerEntry
  | TriggerEntry
  | QueueEntry
  | RunStartEntry
  | RunEndEntry
  | WriteEntry
  | EventEntry
  | LeadershipEntry;

/** What every timeline entry carries. */
export interface TimelineStamp {
  /** Scheduler time, ms since the epoch. */
  readonly at: number;
  /** The controller's name. */
  readonly controller: string;
}

/**
 * An informer saw something: one `ListWatchEvent` of one of the
 * controller's resources (`resource` is its store's name, `deployments.apps`),
 * or a failure of its list or watch (`Failure`, with the error's message;
 * the source retries on its own). `object` is the object as received
 * (after the informer's transform), for `Listed`, `Added`, `Modified` and
 * `Deleted`: the recorder keeps it, the live view shows it.
 */
export interface InformerEntry extends TimelineStamp {
  readonly type: 'informer';
  readonly resource: string;
  readonly event: 'Restart' | 'Listed' | 'Synced' | 'Added' | 'Modified' | 'Deleted' | 'Bookmark' | 'Failure';
  readonly key?: ObjectKey;
  readonly resourceVersion?: string;
  readonly object?: KubeObject;
  readonly error?: string;
}

/**
 * Why a key was triggered: a delta of the primary resource (`for`), a
 * delta of an owned object mapped to its owner (`owns`), a delta of a
 * watched resource mapped by the watch's `map` (`watches`), or a periodic
 * `resync`. `resource` and `objectKey` name the object whose delta it was.
 */
export interface TriggerCause {
  readonly via: 'for' | 'owns' | 'watches' | 'resync';
  readonly resource: string;
  readonly delta: 'Added' | 'Updated' | 'Deleted' | 'Sync';
  readonly objectKey: ObjectKey;
}

/** A primary key was triggered, and why. */
export interface TriggerEntry extends TimelineStamp {
  readonly type: 'trigger';
  readonly key: ObjectKey;
  readonly cause: TriggerCause;
}

/**
 * A key moved in the workqueue: `waiting` for a free worker, `running`,
 * `delayed` until a retry or requeue comes due (`delay` ms, `reason`
 * `error`, `requeue` or `requeueAfter`), or `idle` (done, nothing pending).
 */
export interface QueueEntry extends TimelineStamp {
  readonly type: 'queue';
  readonly key: ObjectKey;
  readonly state: 'waiting' | 'running' | 'delayed' | 'idle';
  readonly delay?: number;
  readonly reason?: 'error' | 'requeue' | 'requeueAfter';
}

/** A reconcile of `key` started; `attempt` counts from 1 and grows with each retry after a failure. */
export interface RunStartEntry extends TimelineStamp {
  readonly type: 'run-start';
  readonly key: ObjectKey;
  readonly attempt: number;
}

/** A reconcile of `key` ended, with its outcome (`ReconcileOutcome`'s `result`), after `duration` ms. */
export interface RunEndEntry extends TimelineStamp {
  readonly type: 'run-end';
  readonly key: ObjectKey;
  readonly attempt: number;
  readonly duration: number;
  readonly result: 'success' | 'error' | 'requeue' | 'requeue_after' | 'dropped';
  readonly error?: string;
  readonly requeueAfter?: number;
}

/**
 * A request a reconcile made through `ctx.client`, and its answer: `key`
 * is the reconcile's key (the run that made it), `verb` the client's
 * (`get`, `list`, `create`, `update`, `patch`, `apply`, `delete`, ...),
 * `resource` and `objectKey` what it addressed, `code` the HTTP status (0
 * when no answer came). `body` is the answer's body, for `replay`.
 */
export interface WriteEntry extends TimelineStamp {
  readonly type: 'write';
  readonly key: ObjectKey;
  readonly verb: string;
  readonly resource: string;
  readonly objectKey?: ObjectKey;
  readonly code: number;
  readonly body?: unknown;
}

/** An Event a reconcile recorded through `ctx.recorder`. */
export interface EventEntry extends TimelineStamp {
  readonly type: 'event';
  readonly key: ObjectKey;
  readonly eventType: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** The controller started or stopped leading (always `leading: true` first when there is no leader election). */
export interface LeadershipEntry extends TimelineStamp {
  readonly type: 'leadership';
  readonly leading: boolean;
  readonly identity: string;
}
