import type { Registry } from 'prom-client';
import type { Observable } from 'rxjs';
import type { TimelineEntry } from '../observe/timeline.js';
import type { ReconcileOutcome } from '../operators/reconcileByKey.js';
import type { ShardState } from '../sinks/leader/shardMembership.js';
import type { ControllerMetrics } from '../sinks/metrics/controllerMetrics.js';
import type { Lister } from '../store/store.js';
import type { KubeObject } from '../types.js';
import type { ControllerStores, ExtraWatch, WatchedResource } from './controllerOptions.js';
import type { WatchHandle } from './dynamicWatches.js';

/** A controller: an Observable of reconcile outcomes, plus what a host process wants to read. */
export interface Controller<T extends KubeObject = KubeObject> extends Observable<ReconcileOutcome> {
  /** The controller's name. */
  readonly name: string;
  /** The primary store. */
  readonly store: Lister<T>;
  /** Every store, by resource name. */
  readonly stores: ControllerStores;
  /** The controller-runtime metrics it updates. */
  readonly metrics: ControllerMetrics;
  /** The prom-client Registry the metrics are on. */
  readonly registry: Registry;
  /** Every store has synced, and the controller is running (false before it starts and after it ends). */
  synced(): boolean;
  /** True while this replica may reconcile: always without leader election, while running. */
  leading(): boolean;
  /**
   * For `/readyz`: running, synced, no informer failing (a 403 being
   * retried, say), and under leader election either leading or standing by.
   */
  ready(): boolean;
  /** Why `ready()` is false, one line per cause (a resource's failure, the controller's end); empty when ready. */
  notReady(): string[];
  /**
   * What the controller does, as it does it (`TimelineEntry`, each stamped
   * with the scheduler's `now()`): informer events (with the objects
   * received) and failures, triggers and their causes, queue transitions,
   * runs, the requests of `ctx.client` with their answers, the Events of
   * `ctx.recorder`, leadership. Hot: subscribing starts nothing, and shows
   * what happens from then on (a run already under way shows no writes).
   * Costs one check per event while nobody subscribes. A callback given to
   * `subscribe` that throws is logged; the controller goes on.
   */
  readonly timeline: Observable<TimelineEntry>;
  /** With `sharding`: this replica's slots and the live members as it last saw them; undefined otherwise or before the start. */
  shards(): ShardState | undefined;
  /**
   * Watches one more resource from now on, as `watches` does, until the
   * handle's `remove()` (docs/dynamic-watches.md): its informer starts
   * (now if the controller runs, else when it starts), its store joins
   * `ctx.stores`, and its objects' keys, mapped by `watch.map`, are
   * triggered, its initial list at `priority.initial`. Throws if the
   * controller already watches that resource, or reconciles several clusters.
   */
  watch(watch: ExtraWatch): WatchHandle;
  /** Owns one more resource from now on, as `owns` does, until the handle's `remove()`; see `watch()`. */
  own(resource: WatchedResource): WatchHandle;
}
