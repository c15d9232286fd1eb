import type { Observable, SchedulerLike } from 'rxjs';
import type { Logger } from '../logger.js';
import { runParts, type RunParts } from '../observe/timelineClient.js';
import type { TimelineHub } from '../observe/timelineHub.js';
import type { RunCause } from '../observe/timeline.js';
import type { RunTracing } from '../observe/tracing/controllerTracing.js';
import type { ReconcileContext, Reconciler, ReconcileResult } from '../operators/reconciler.js';
import type { KubeClient } from '../sinks/client/kubeClient.js';
import type { EventRecorder } from '../sinks/events/eventRecorder.js';
import type { Lister } from '../store/store.js';
import type { KubeObject, ObjectKey, Typed } from '../types.js';
import type { ControllerOptions, ControllerStores, WatchedResource } from './controllerOptions.js';
import { OwnWritesClient } from './ownWritesClient.js';
import type { ReadYourWrites } from './readYourWrites.js';
import { reconcileContext, type Wiring } from './wiring.js';

/** What a controller's reconcile gets besides the key. */
export interface ControllerContext<T extends KubeObject = KubeObject> extends ReconcileContext {
  /** With `clusters`: the key's cluster, whose objects `store`, `stores` and `client` reach. */
  readonly cluster?: string;
  /** The namespace of the key; undefined for a cluster-scoped object. */
  readonly namespace: string | undefined;
  /** The name of the key. */
  readonly name: string;
  /** The object as the cache held it when the run started; undefined once it is gone. */
  readonly object: T | undefined;
  /** The primary resource's store. */
  readonly store: Lister<T>;
  /** Every store of the controller, by resource name. */
  readonly stores: ControllerStores;
  /**
   * The store of one resource of `for`, `owns` or `watches`, typed as the
   * resource is (`ctx.lister(deployments)` is a `Lister<Deployment>`).
   * Throws, naming the resources there are, for one the controller does not watch.
   */
  lister<U extends KubeObject = KubeObject>(resource: WatchedResource & Typed<U>): Lister<U>;
  /** Writes, and strongly consistent reads, straight to the API server. */
  readonly client: KubeClient;
  /** Records Events; never throws, never blocks. */
  readonly recorder: EventRecorder;
  /** The controller's logger, for the reconcile's own lines. */
  readonly logger: Logger;
  /**
   * Why this run ran: the trigger that came last before it (`via` `for`,
   * `owns`, `watches`, `resync` or `trigger`, with the resource, delta and
   * object), or a `retry` or `requeue` the queue scheduled on its own.
   * Known while the controller traces its runs or someone reads its
   * `timeline` (it is built from the timeline's entries, which cost nothing
   * until read); undefined otherwise. See docs/tracing.md.
   */
  readonly cause?: RunCause | undefined;
  /**
   * The controller's clock (its scheduler's `now()`, ms since the epoch):
   * stamp times with it (condition transitions, say) so that a reconcile
   * run in virtual time stays reproducible.
   */
  now(): number;
}

/**
 * A controller's reconcile: brings the object of `key` in line with what it should be.
 * It returns nothing or a `ReconcileResult`, as a value, a promise (which may also resolve
 * to an observable) or an Observable; a throw, rejection or error is retried after the rate limiter's delay.
 */
export type ControllerReconciler<T extends KubeObject> = (
  key: ObjectKey,
  ctx: ControllerContext<T>,
) => ReconcileResult | void | Observable<ReconcileResult | void> | Promise<ReconcileResult | void | Observable<ReconcileResult | void>>;

/**
 * The reconcile the queue runs: the controller's, given its context. A
 * run's client and recorder are the controller's own (`own`), or, while
 * someone reads the timeline, ones that tell it of each request and
 * Event; with read-your-own-writes, the client also records what the run
 * wrote, and the hold keeps the key back until the caches have seen it.
 */
export function contextReconcile<T extends KubeObject>(
  options: ControllerOptions<T>,
  parts: { hub: TimelineHub; wiring: Wiring<T>; ryow: ReadYourWrites | undefined; tracing: RunTracing | undefined; own: RunParts; logger: Logger; scheduler: SchedulerLike },
): Reconciler {
  const { hub, wiring, ryow, tracing, own, logger, scheduler } = parts;
  const withParts = (key: ObjectKey, ctx: ReconcileContext) => {
    const run = runParts(hub, key, own);
    const traced = tracing === undefined ? run.client : tracing.client(key, run.client);
    const client = ryow === undefined ? traced : new OwnWritesClient(traced, ryow.writes, key);
    return options.reconcile(key, reconcileContext(ctx, wiring, { ...run, client, logger, scheduler, cause: hub.causeOf(key) }));
  };
  return ryow === undefined ? withParts : ryow.hold.reconcile(withParts);
}
