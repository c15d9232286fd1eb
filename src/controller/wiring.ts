import { filter, first, map, merge, startWith, type Observable, type SchedulerLike } from 'rxjs';
import type { InformerFactory, Informer } from '../informers/informerFactory.js';
import type { Logger } from '../logger.js';
import { mapToKeys, mapToOwners } from '../operators/owners.js';
import { filterDeltas } from '../operators/predicates.js';
import type { ReconcileContext } from '../operators/reconciler.js';
import type { KubeClient } from '../sinks/client/kubeClient.js';
import type { EventRecorder } from '../sinks/events/eventRecorder.js';
import type { Indexers } from '../store/indexFunctions.js';
import type { StoreEvent } from '../store/indexer.js';
import { isDelta, resourceName, splitKey, type KubeObject, type ObjectKey } from '../types.js';
import type { ControllerContext, ControllerOptions, ControllerStores, WatchedResource } from './controller.js';

/**
 * What a controller is made of besides its queue: the informers of what it
 * is `for`, `owns` and `watches`, their stores, the keys their changes
 * trigger, and the context each reconcile gets.
 */
export interface Wiring<T extends KubeObject> {
  readonly primary: Informer<T>;
  readonly all: readonly { resource: WatchedResource; informer: Informer }[];
  readonly stores: ControllerStores;
  /** Every store has synced. */
  synced(): boolean;
  /** Why the informers are not all well, one line per resource: not synced yet, or a source failing or failed. */
  problems(): string[];
  /** Emits once, when every store has synced (at once if they have). */
  readonly whenSynced: Observable<unknown>;
  /**
   * Every change that concerns a primary key, as that key. Subscribed anew
   * each time the replica starts leading: the informers replay their state
   * to a new subscriber, so every key comes through once, then the changes.
   */
  readonly triggers: Observable<ObjectKey>;
}

function selectors(resource: WatchedResource): Pick<WatchedResource, 'labelSelector' | 'fieldSelector' | 'shardSelector'> {
  return {
    ...(resource.labelSelector !== undefined ? { labelSelector: resource.labelSelector } : {}),
    ...(resource.fieldSelector !== undefined ? { fieldSelector: resource.fieldSelector } : {}),
    ...(resource.shardSelector !== undefined ? { shardSelector: resource.shardSelector } : {}),
  };
}

function informerOptions(resource: WatchedResource) {
  return {
    ...selectors(resource),
    ...(resource.indexers ? { indexers: resource.indexers } : {}),
    ...(resource.metadataOnly === true ? { metadataOnly: true } : {}),
  };
}

/** What is wrong with one informer, if anything: its source failing (with why), or not synced yet. */
function problemOf(resource: WatchedResource, informer: Informer): string | undefined {
  const health = informer.health();
  const name = resourceName(resource);
  if (health.state !== 'ok') return `${name}: ${health.state === 'failed' ? 'failed' : 'not answering'}: ${health.reason}`;
  if (!informer.store.synced) return `${name}: not synced yet (no complete list so far)`;
  return undefined;
}

/** A function that errors name: `mapToKeys` names the function it calls in what it throws. */
function named<F extends (...args: never[]) => unknown>(name: string, fn: F): F {
  return Object.defineProperty(fn, 'name', { value: name });
}

export function wire<T extends KubeObject>(options: ControllerOptions<T>, informers: InformerFactory): Wiring<T> {
  const primary = informers.informer<T>(options.for, {
    ...selectors(options.for),
    ...(options.for.indexers ? { indexers: options.for.indexers as Indexers<T> } : {}),
    ...(options.for.metadataOnly === true ? { metadataOnly: true } : {}),
    ...(options.resyncPeriod ? { resyncPeriod: options.resyncPeriod } : {}),
  });
  const owned = (options.owns ?? []).map((resource) => ({ resource, informer: informers.informer(resource, informerOptions(resource)) }));
  const watched = (options.watches ?? []).map((watch) => ({ watch, informer: informers.informer(watch.resource, informerOptions(watch.resource)) }));
  const all = [
    { resource: options.for, informer: primary as unknown as Informer },
    ...owned,
    ...watched.map(({ watch, informer }) => ({ resource: watch.resource, informer })),
  ];
  const stores: ControllerStores = Object.freeze(Object.fromEntries(all.map(({ resource, informer }) => [resourceName(resource), informer.store])));
  const synced = () => all.every(({ informer }) => informer.store.synced);
  const ownerKind = { group: options.for.group ?? '', kind: options.for.kind };
  const primaryChanges = primary.events.pipe(
    options.predicates ? filterDeltas<T>(options.predicates) : (source: Observable<StoreEvent<T>>) => source,
    filter(isDelta),
    map((delta) => delta.key),
  );
  return {
    primary,
    all,
    stores,
    synced,
    problems: () => all.flatMap(({ resource, informer }) => problemOf(resource, informer) ?? []),
    whenSynced: merge(...all.map(({ informer }) => informer.events)).pipe(startWith(null), map(synced), first(Boolean)),
    triggers: merge(
      primaryChanges,
      ...owned.map(({ informer }) => informer.events.pipe(mapToOwners(ownerKind))),
      ...watched.map(({ watch, informer }, i) =>
        informer.events.pipe(mapToKeys(named(`watches[${i}].map (${resourceName(watch.resource)})`, (delta) => watch.map(delta, stores)))),
      ),
    ),
  };
}

/** The context of one reconcile: the queue's (signal, attempt, key) and what the controller adds. */
export function reconcileContext<T extends KubeObject>(
  ctx: ReconcileContext,
  wiring: Wiring<T>,
  parts: { client: KubeClient; recorder: EventRecorder; logger: Logger; scheduler: SchedulerLike },
): ControllerContext<T> {
  const { namespace, name } = splitKey(ctx.key);
  return {
    get signal() {
      return ctx.signal;
    },
    attempt: ctx.attempt,
    key: ctx.key,
    namespace,
    name,
    object: wiring.primary.store.get(ctx.key),
    store: wiring.primary.store,
    stores: wiring.stores,
    client: parts.client,
    recorder: parts.recorder,
    logger: parts.logger,
    now: () => parts.scheduler.now(),
  };
}
