/**
 * rxkube/testing: what a controller's tests use.
 *
 * Where to start: `runReconcile` runs a reconcile inside the real
 * `controller()` pipeline in virtual time, against an in-memory cluster,
 * and checks its outcomes, writes and Events against marble diagrams, or
 * loosely (`expectInOrder`, `expectNone`: order and a time window, no frames).
 * `memoryClient` and `memoryRecorder` are that cluster's client and Event
 * recorder for tests of your own; `inMemoryLeaseClient` and `pausable`
 * test leader election in virtual time; `startApiServer` runs the embedded
 * API server over real HTTP for integration tests (also `rxkube/apiserver`).
 *
 * @packageDocumentation
 */

// Reconciles in virtual time.
export { runReconcile, type ClusterChange, type ReconcileRun, type ReconcileRunHelpers, type RunReconcileOptions, type RunTimeline, type TimedOutcome } from './marble/runReconcile.js';
export type { TimeWindow } from './marble/looseExpectations.js';

// The in-memory cluster: its client, its Event recorder, its lease client.
export { memoryClient, type MemoryClient, type MemoryClientOptions } from './memory/memoryClient.js';
export type { MemoryRequest, MemoryVerb } from './memory/memoryRequest.js';
export type { MemoryResource } from './memory/memoryResources.js';
export { memoryRecorder, type MemoryRecorder, type RecordedEvent, type RefusedEvent } from './memory/memoryRecorder.js';
export { inMemoryLeaseClient, type InMemoryLeaseClient, type InMemoryLeaseClientOptions } from './memory/inMemoryLeaseClient.js';
export { LeaseClientPausedError, pausable, type PausableLeaseClient, type PauseMode } from './memory/pausable.js';
export { leaseClient, type LeaseClient } from '../sinks/leader/leaseClient.js';
export type { Fault, RequestFaults, RequestMatch } from '../apiserver/faults.js';

// A custom resource's CRD checked as the API server checks it (CEL rules compiled).
export { checkCustomResource } from './checkCustomResource.js';

// Marble diagrams, patterns, timelines and virtual time, for tests of any stream.
export { coldMarbles, hotMarbles, marbleTime, parseMarbles, type MarbleMessage, type MarbleNotification } from './marble/marbles.js';
export { matchesPattern, projectOnto, renderValue, type Pattern } from './marble/patterns.js';
export { expectTimeline, timelineRecorder, type Timeline, type TimelineView } from './marble/timeline.js';
export { runVirtualTime, type RunVirtualTimeOptions, type VirtualTimeStop } from './marble/virtualTime.js';
export { added, bookmark, deleted, list, listed, modified, restart, synced } from './marble/watchEvents.js';

// What a controller's `timeline` emits (DESIGN invariant 24): here until the lead decides where they live.
export type {
  EventEntry,
  InformerEntry,
  LeadershipEntry,
  QueueEntry,
  RunEndEntry,
  RunStartEntry,
  TimelineEntry,
  TimelineStamp,
  TriggerCause,
  TriggerEntry,
  WriteEntry,
} from '../observe/timeline.js';

// The embedded API server over HTTP, for integration tests.
export { startApiServer, type AccessSubject, type ApiServer, type ApiServerOptions } from '../apiserver/startApiServer.js';

// Webhook handlers called directly, with the reviews the API server would send.
export { admissionReview, callAdmission, callConversion, conversionReview, expectAdmission } from './webhooks/reviews.js';
export type { AdmissionExpectation, AdmissionResult, AdmissionReviewOptions } from './webhooks/reviews.js';

// Record and replay: a recording of a controller's timeline, read back and replayed in virtual time.
export { replay, type ReplayOptions, type ReplayResult } from './replay/replay.js';
export { replayReport, describeDifference, type ReplayedRunResult } from './replay/compareRuns.js';
export { UnrecordedRequestError } from './replay/replayClient.js';
export type { RunRecord, RunStep } from './replay/runSteps.js';
export { readRecording, RecordingError } from '../observe/recording/readRecording.js';
export type { Recording, RecordingHeader, RecordedOptions, RecordedResource } from '../observe/recording/format.js';
export type { MemoryWatchSelectors } from './memory/memoryClient.js';
export type { Latency } from './memory/memoryTransport.js';
