import type { KubeObject, ObjectKey } from '../types.js';

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
  /** Which entry this is. */
  readonly type: 'informer';
  /** The store's name of the resource (`deployments.apps`, `configmaps`). */
  readonly resource: string;
  /** The `ListWatchEvent`'s type, or `Failure`. */
  readonly event: 'Restart' | 'Listed' | 'Synced' | 'Added' | 'Modified' | 'Deleted' | 'Bookmark' | 'Failure';
  /** The object's key, for the events that carry an object. */
  readonly key?: ObjectKey;
  /** The object's resourceVersion; for `Synced` and `Bookmark`, the list's or the bookmark's. */
  readonly resourceVersion?: string;
  /** The object as received (after the informer's transform). */
  readonly object?: KubeObject;
  /** For a `Failure`: what failed and why (`list: ...`, `watch: ...`, or the informer's final error). */
  readonly error?: string;
  /** For a `Failure`: the HTTP status of the answer, if one came. */
  readonly code?: number;
  /** For a `Failure` the source retries on its own: ms until it tries again (unset when the informer failed for good). */
  readonly retryIn?: number;
}

/**
 * Why a key was triggered: a delta of the primary resource (`for`), a
 * delta of an owned object mapped to its owner (`owns`), a delta of a
 * watched resource mapped by the watch's `map` (`watches`), a periodic
 * `resync`, or a key or object one of the controller's `triggers` emitted
 * (`trigger`: a channel, a timer, a webhook from outside the cluster).
 * `resource` and `objectKey` name the object whose delta it was; for a
 * `trigger`, `resource` is the trigger's name, `objectKey` the key it
 * emitted and `delta` is `Sync` (it carries no change).
 */
export interface TriggerCause {
  /** How the delta came to the key. */
  readonly via: 'for' | 'owns' | 'watches' | 'resync' | 'trigger';
  /** The store's name of the resource whose delta it was; for a `trigger`, the trigger's name. */
  readonly resource: string;
  /** The delta's type (`Sync` for a `trigger`). */
  readonly delta: 'Added' | 'Updated' | 'Deleted' | 'Sync';
  /** The key of the object whose delta it was (an owned object's, a watched one's, or the key itself). */
  readonly objectKey: ObjectKey;
  /** Set when the delta is part of the informer's state replayed to a new run of the queue (`initial: true`): the start, or leadership regained. */
  readonly initial?: boolean;
}

/**
 * Why a run ran (`ctx.cause`): the trigger that came last before it, or a
 * retry (after a failure) or requeue (after a `requeue` result) the queue
 * scheduled on its own with no trigger since.
 */
export type RunCause = TriggerCause | { readonly via: 'retry' | 'requeue' };

/** A primary key was triggered, and why. */
export interface TriggerEntry extends TimelineStamp {
  /** Which entry this is. */
  readonly type: 'trigger';
  /** The primary key triggered. */
  readonly key: ObjectKey;
  /** Why. */
  readonly cause: TriggerCause;
}

/**
 * A key moved in the workqueue: `waiting` for a free worker, `delayed`
 * until a retry or requeue comes due (`delay` ms, `reason` `error`,
 * `requeue` or `requeueAfter`), or `idle` (done, nothing pending). Its move
 * to running is its `run-start`: a run starts exactly when its key leaves
 * the queue for a worker, so one entry says both.
 */
export interface QueueEntry extends TimelineStamp {
  /** Which entry this is. */
  readonly type: 'queue';
  /** The key that moved. */
  readonly key: ObjectKey;
  /** Where it is now. */
  readonly state: 'waiting' | 'delayed' | 'idle';
  /** For `delayed`: ms until its rerun. */
  readonly delay?: number;
  /** For `delayed`: what asked for the rerun. */
  readonly reason?: 'error' | 'requeue' | 'requeueAfter';
}

/** A reconcile of `key` started, and with it the key is running (no queue entry says so apart); `attempt` counts from 1 and grows with each retry after a failure. */
export interface RunStartEntry extends TimelineStamp {
  /** Which entry this is. */
  readonly type: 'run-start';
  /** The key reconciled. */
  readonly key: ObjectKey;
  /** 1 for a first run, n + 1 for the n-th retry in a row (the run's `ctx.attempt` + 1). */
  readonly attempt: number;
  /** The run's OpenTelemetry trace ID (32 hex digits), when the controller traces its runs (docs/tracing.md). */
  readonly traceId?: string;
}

/** A reconcile of `key` ended, with its outcome (`ReconcileOutcome`'s `result`), after `duration` ms. */
export interface RunEndEntry extends TimelineStamp {
  /** Which entry this is. */
  readonly type: 'run-end';
  /** The key reconciled. */
  readonly key: ObjectKey;
  /** The attempt, as its `run-start` said. */
  readonly attempt: number;
  /** How long the run took (ms, the controller's clock). */
  readonly duration: number;
  /** The outcome's `result`. */
  readonly result: 'success' | 'error' | 'requeue' | 'requeue_after' | 'dropped';
  /** The failure's message, for `error` and `dropped`. */
  readonly error?: string;
  /** The `requeueAfter` (ms) the run asked for, if it did. */
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
  /** Which entry this is. */
  readonly type: 'write';
  /** The key of the run that made the request. */
  readonly key: ObjectKey;
  /** The client method called (`get`, `create`, `createOrUpdate`, `patchMerge`, `remove`, ...). */
  readonly verb: string;
  /** The kind addressed, qualified by its API group as kubectl spells it (`Deployment.apps`, `ConfigMap` for the core group): the client resolves the resource itself. */
  readonly resource: string;
  /** The key of the object addressed (none for a `list` or `resource`). */
  readonly objectKey?: ObjectKey;
  /** The HTTP status: 200, 201 for a create, 404 for a `remove` of an object already gone, the error's status for a failure, 0 when no answer came. */
  readonly code: number;
  /** The answer: what the method resolved to, or for a failure the server's Status, if it sent one. */
  readonly body?: unknown;
  /** The error's message, when the request failed (then `body` is the server's Status, if it sent one). */
  readonly error?: string;
}

/** An Event a reconcile recorded through `ctx.recorder`. */
export interface EventEntry extends TimelineStamp {
  /** Which entry this is. */
  readonly type: 'event';
  /** The key of the run that recorded it. */
  readonly key: ObjectKey;
  /** `Normal`, or `Warning`. */
  readonly eventType: 'Normal' | 'Warning';
  /** The Event's reason. */
  readonly reason: string;
  /** The Event's note, or its action when it has no note. */
  readonly message: string;
  /** The Event's `action`; `message` is its note, or the action when it has none. */
  readonly action?: string;
  /** The key of the object the Event is about (`regarding`), which need not be the run's own. */
  readonly regarding?: ObjectKey;
}

/** The controller started or stopped leading (always `leading: true` first when there is no leader election). */
export interface LeadershipEntry extends TimelineStamp {
  /** Which entry this is. */
  readonly type: 'leadership';
  /** Whether this replica leads now. */
  readonly leading: boolean;
  /** This replica's identity (its leader election identity). */
  readonly identity: string;
}
