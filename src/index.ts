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
export type { Delta, DeltaEvent, KubeObject, ListWatchEvent, ObjectKey, ObjectMeta, OwnerReference, ResourceRef } from './types.js';
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
export { kubeClient, type JsonPatchOperation, type KubeClient } from './sinks/client/kubeClient.js';
export { isAlreadyExists, isConflict, isForbidden, isGone, isInvalid, isNotFound, isTooManyRequests, KubeApiError } from './sinks/client/errors.js';
export { finalizer, FinalizerError } from './sinks/objects/finalizer.js';
export { setControllerReference } from './sinks/objects/ownerReferences.js';
export { findCondition, setCondition, type Condition, type ConditionUpdate } from './sinks/objects/conditions.js';
export { eventRecorder, type EventInput, type EventRecorder } from './sinks/events/eventRecorder.js';
export { controllerMetrics } from './sinks/metrics/controllerMetrics.js';
export { sourceMetrics } from './sinks/metrics/sourceMetrics.js';
export { restClientMetrics } from './sinks/metrics/restClientMetrics.js';
export { leaderMetrics } from './sinks/metrics/leaderMetrics.js';
export { startHealthServer } from './sinks/metrics/healthServer.js';
export { leaderElection } from './sinks/leader/leaderElection.js';

// Controllers.
export { controller, type Controller, type ControllerContext, type ControllerOptions, type ControllerReconciler, type ControllerStores, type WatchedResource } from './controller/controller.js';
export { runController, type RunningController } from './controller/runController.js';
export { perObjectTimer, TriggerError } from './controller/triggers.js';
export type { ControllerWebhooks } from './controller/controllerWebhooks.js';
