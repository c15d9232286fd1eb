/**
 * rxkube: Kubernetes controllers as RxJS pipelines.
 *
 * Where to start: `controller()` wires a controller from what it is `for`,
 * what it `owns` and `watches`, and its `reconcile`; `runController()` runs
 * one as a process wants (signals, health server, logs). Underneath, each
 * stage is an operator of its own: `listWatch` → `deltas` → `indexer` →
 * keys → `reconcileByKey`, with `kubeClient`, `eventRecorder`, metrics and
 * `leaderElection` as the sinks. Tests use `rxkube/testing`; the embedded
 * API server is `rxkube/apiserver`.
 *
 * @packageDocumentation
 */

// The vocabulary: objects, keys, resources, what sources and deltas emit, logging.
export { InvalidObjectError, isDelta, objectKey, splitKey } from './types.js';
export type { Delta, DeltaEvent, KubeObject, ListWatchEvent, ObjectKey, ObjectMeta, OwnerReference, ResourceRef, Typed } from './types.js';
export { createDefaultLogger, silentLogger, type Logger } from './logger.js';

// Sources: list-watch as an Observable.
export { listWatch, type ListWatchOptions } from './sources/listWatch.js';
export { ListWatchError } from './sources/listWatchError.js';
export { fromWatchEvents } from './sources/fromWatchEvents.js';
export { dropManagedFields } from './sources/transforms.js';

// Shared informers.
export { InformerFactory } from './informers/informerFactory.js';
export { shareSource } from './informers/shareSource.js';

// Operators: deltas, predicates, owners, resync, the workqueue and its rate limiters.
export { deltas } from './operators/deltas.js';
export { and, annotationsChanged, filterDeltas, generationChanged, labelsChanged, not, or, resourceVersionChanged, type Predicate } from './operators/predicates.js';
export { mapToKeys, mapToOwners } from './operators/owners.js';
export { resync } from './operators/resync.js';
export { reconcileByKey, type ReconcileOutcome } from './operators/reconcileByKey.js';
export { DEFAULT_AGING, LOW_PRIORITY, NORMAL_PRIORITY } from './operators/priorityLanes.js';
export { ReconcileTimeoutError, TerminalError } from './operators/reconciler.js';
export type { ReconcileContext, ReconcileResult, Reconciler } from './operators/reconciler.js';
export {
  bucketRateLimiter,
  defaultControllerRateLimiter,
  exponentialFailureRateLimiter,
  fastSlowRateLimiter,
  maxOfRateLimiter,
  type RateLimiter,
} from './operators/rateLimiters.js';

// The store.
export { indexer, type StoreEvent } from './store/indexer.js';
export { Store, type Lister } from './store/store.js';
export { NAMESPACE_INDEX } from './store/indexFunctions.js';

// Sinks: the client and its errors, object helpers, Events, metrics and health, leader election.
export { kubeClient, type JsonPatchOperation, type KubeClient, type ObjectRef, type ObjectTarget } from './sinks/client/kubeClient.js';
export { isAlreadyExists, isConflict, isForbidden, isGone, isInvalid, isNotFound, isTooManyRequests, KubeApiError } from './sinks/client/errors.js';
export { finalizer, FinalizerError } from './sinks/objects/finalizer.js';
export { isControlledBy, setControllerReference, setOwnerReference } from './sinks/objects/ownerReferences.js';
export { findCondition, isConditionFalse, isConditionTrue, removeCondition, setCondition, type Condition, type ConditionUpdate } from './sinks/objects/conditions.js';
export { installCrd, uninstallCrd, type CrdSource, type CrdWaitOptions } from './sinks/objects/customResourceDefinitions.js';
export {
  defineCustomResource,
  type ConversionClientConfig,
  type CustomObject,
  type CustomResource,
  type CustomResourceDefinitionObject,
  type CustomResourceOptions,
  type CustomResourceSchema,
  type CustomResourceVersion,
  type DefinedCustomResource,
  type DefinedVersion,
  type ObjectOf,
  type PrinterColumn,
  type ScaleSubresource,
  type StorageVersionOf,
} from './customResources/defineCustomResource.js';
export { Kube, type EmbeddedObject, type KubeExtensions, type ValidationRule } from './customResources/kubeSchema.js';
export { StructuralSchemaError, type JsonSchemaProps } from './customResources/structural.js';
export { eventRecorder, type EventInput, type EventRecorder } from './sinks/events/eventRecorder.js';
export { controllerMetrics } from './sinks/metrics/controllerMetrics.js';
export { sourceMetrics } from './sinks/metrics/sourceMetrics.js';
export { restClientMetrics } from './sinks/metrics/restClientMetrics.js';
export { leaderMetrics } from './sinks/metrics/leaderMetrics.js';
export { startHealthServer } from './sinks/metrics/healthServer.js';
export { leaderElection } from './sinks/leader/leaderElection.js';

// Controllers.
export { controller, type Controller, type ControllerContext, type ControllerOptions, type ControllerReconciler, type ControllerStores, type TypedResource, type WatchedResource } from './controller/controller.js';
export { runController, type RunningController } from './controller/runController.js';
export { perObjectTimer, TriggerError } from './controller/triggers.js';
export { clusterKey, splitClusterKey, type ClusterKey } from './controller/clusters/clusterKeys.js';
export type { ClusterConnection, ClusterEvent, ControllerClusters } from './controller/clusters/clusterSet.js';
export type { ControllerWebhooks } from './controller/controllerWebhooks.js';
export { runPipeline, type Pipeline, type PipelineContext, type RunningPipeline, type RunPipelineOptions } from './controller/runPipeline.js';

// Deploying: what a controller module exports for `rxkube manifests` and `rxkube run`, and the manifests as an API.
export type { ControllerDefinition, DefinedController, DefinedCrd, DefinedPipeline } from './deploy/definition.js';
export { manifests, type ManifestOptions } from './deploy/manifests.js';

// The types of the options, arguments and results above, named so that code calling these functions can name them too.
export type { ExtraWatch } from './controller/controller.js';
export type { ReadYourWritesOptions } from './controller/readYourWrites.js';
// OpenTelemetry traces of every run (docs/tracing.md).
export { TRACEPARENT_ANNOTATION, traceContextOf } from './observe/tracing/traceparent.js';
export type { TracingOptions } from './observe/tracing/controllerTracing.js';
export { exportTracesFromEnv, type TraceExport, type TraceExportOptions } from './observe/tracing/exportFromEnv.js';
export type { RunCause, TriggerCause } from './observe/timeline.js';
export type { WatchHandle } from './controller/dynamicWatches.js';
export type { ControllerPermission, PermissionVerb } from './controller/permissions.js';
export type { RecordOptions } from './observe/recording/recordTimeline.js';
export type { RunControllerOptions } from './controller/runController.js';
export type { ShardingOptions } from './controller/sharding.js';
export type { Informer, InformerFactoryOptions, InformerHealth, InformerListener, InformerOptions, InformerSource, SourceOptions } from './informers/informerFactory.js';
export type { LogFn } from './logger.js';
export type { DeltasOptions } from './operators/deltas.js';
export type { ReconcileOutcomeResult } from './operators/keyQueue.js';
export type { KeysOf, OwnerKind } from './operators/owners.js';
export type { KeyTrigger, PrioritizedKey, ReconcileOptions, WorkqueueInspector } from './operators/reconcileByKey.js';
export type { ResyncOptions } from './operators/resync.js';
export type { DelayReason, WorkqueueObserver } from './operators/workqueueObserver.js';
export type { RequestDescription } from './sinks/client/errors.js';
export type { ApplyOptions, CallOptions, KubeClientOptions, ListOptions, ListTarget, RemoveOptions, RemoveResult, WriteOptions } from './sinks/client/kubeClient.js';
export type { KubeRequest, KubeTransport } from './sinks/client/kubeTransport.js';
export type { Mutate, WriteResult } from './sinks/client/readModifyWrite.js';
export type { KindResolver, ResourceInfo } from './sinks/client/resources.js';
export type { ConflictBackoff } from './sinks/client/retryOnConflict.js';
export type { EventRecorderOptions, EventRecorderStats } from './sinks/events/eventRecorder.js';
export type { ObjectReference } from './sinks/events/objectReference.js';
export type { LeaderElectionOptions, LeaderState, LeaderStatusSink } from './sinks/leader/leaderElection.js';
export type { Lease, LeaseSpec } from './sinks/leader/leaseRecord.js';
export type { ShardLeaseClient } from './sinks/leader/shardLeaseClient.js';
export type { ShardState } from './sinks/leader/shardMembership.js';
export type { ControllerMetrics, ControllerMetricsOptions, OutcomeForMetrics } from './sinks/metrics/controllerMetrics.js';
export type { HealthCheck, HealthChecks, HealthServer, HealthServerOptions } from './sinks/metrics/healthServer.js';
export type { LeaderMetrics } from './sinks/metrics/leaderMetrics.js';
export type { LiveModelLimits } from './observe/liveView/liveModel.js';
export type { LiveViewOptions } from './observe/liveView/liveView.js';
export type { RestClientMetrics, RestClientMetricsOptions, RestRequest } from './sinks/metrics/restClientMetrics.js';
export type { SourceMetrics } from './sinks/metrics/sourceMetrics.js';
export type { WorkqueueHooks } from './sinks/metrics/workqueueMetrics.js';
export type { ConditionStatus } from './sinks/objects/conditions.js';
export type { FinalizerHandlers, FinalizerOutcome } from './sinks/objects/finalizer.js';
export type { BackoffOptions } from './sources/backoff.js';
export type { FromWatchEventsOptions, RawWatchEvent, WatchStatus } from './sources/fromWatchEvents.js';
export type { ListWatchMonitor, SourceStatus, WatchRestartReason } from './sources/listWatch.js';
export type { ShardSelection } from './sources/sourceShard.js';
export type { MalformedWatchLineError } from './sources/watchLineReader.js';
export type { IndexFunc, Indexers } from './store/indexFunctions.js';
export type { IndexerOptions } from './store/indexer.js';
export type { StoreOptions } from './store/store.js';
export type { DeltaType, KubeStatus, ListMarker, ObservedRequest, RequestObserver, StatusCause, StatusDetails } from './types.js';
export type { ShardRange } from './util/shardHash.js';
export type { ShardField } from './util/shardSelector.js';
export type { ControllerTrigger, TriggerOption } from './controller/triggers.js';
export type { PriorityOptions, TriggerKind } from './controller/priorities.js';
export type { LiveViewServerOptions } from './observe/liveView/liveViewServer.js';
export type { TriggerParts, TriggerValue } from './controller/triggers.js';
