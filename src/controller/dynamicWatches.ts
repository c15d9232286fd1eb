import { catchError, defer, from, ignoreElements, merge, mergeMap, type Observable, ReplaySubject, Subject, takeUntil, tap, throwError } from 'rxjs';
import type { Informer, InformerFactory } from '../informers/informerFactory.js';
import { mapToKeys, mapToOwners } from '../operators/owners.js';
import type { KeyTrigger } from '../operators/reconcileByKey.js';
import type { StoreEvent } from '../store/indexer.js';
import type { Lister } from '../store/store.js';
import { resourceName, type KubeObject, type ObjectKey } from '../types.js';
import type { ExtraWatch, WatchedResource } from './controllerOptions.js';
import { withPriority, type Prioritize } from './priorities.js';
import { informerOptions, problemOf, traced, type TriggerTrace } from './wiring.js';

/** A watch added to a running controller (`ctl.watch()`, `ctl.own()`); `remove()` takes it away again. */
export interface WatchHandle {
  /** The resource it watches, as `ctx.stores` names it (`deployments.apps`). */
  readonly resource: string;
  /** Whether `remove()` has been called. */
  readonly removed: boolean;
  /**
   * Stops the watch: its keys stop at once, its informer is let go (its
   * watch closes unless another controller shares it) and its store
   * leaves `ctx.stores`. No key is reconciled for the removal. Calling it
   * again does nothing.
   */
  remove(): void;
}

/** One added watch: its informer, the keys its events give, and when it was removed. */
interface Entry {
  readonly name: string;
  readonly resource: WatchedResource;
  readonly informer: Informer;
  readonly keys: (events: Observable<StoreEvent>) => Observable<KeyTrigger>;
  readonly removed: ReplaySubject<void>;
}

/** What the added watches need of the controller. */
export interface DynamicWatchParts {
  controller: string;
  informers: InformerFactory;
  /** The controller's stores, by resource name: added watches put theirs here, and take it out when removed. */
  stores: Record<string, Lister>;
  /** The primary resource's group and kind, for owner references. */
  owner: { group: string; kind: string };
  priority: Prioritize;
  trace: TriggerTrace | undefined;
  /** Told of the size of an added watch's store after each of its events (`rxkube_store_objects`). */
  storeSize?: (resource: string, size: number) => void;
}

/** Attaches a listener (the timeline's) to one added watch; returns what detaches it. */
export type AttachToWatch = (watch: { resource: WatchedResource; informer: Informer }) => () => void;

/**
 * The `owns` and `watches` added to a controller after it was made. Each
 * lives from `own()`/`watch()` to its handle's `remove()`, across the
 * controller's runs: `warm` keeps its informer running for as long as the
 * controller runs (leading or not), `triggers` gives its keys while the
 * controller reconciles, each until its removal. Composition only: an
 * added watch is the same informer and the same key mapping as one given
 * to `controller()`.
 */
export class DynamicWatches {
  private readonly entries = new Set<Entry>();
  private readonly added = new Subject<Entry>();
  /** The listeners attached through `listen`, each with what detaches it from each watch. */
  private readonly attached = new Set<{ attach: AttachToWatch; detach: Map<Entry, () => void> }>();

  constructor(private readonly parts: DynamicWatchParts) {}

  /**
   * `triggers` with the added watches' keys merged in; those end when
   * `triggers` ends, so that scripted watches that end (a test's) still
   * end the run.
   */
  withTriggers(triggers: Observable<KeyTrigger>): Observable<KeyTrigger> {
    return defer(() => {
      const ended = new ReplaySubject<void>(1);
      return merge(this.triggers.pipe(takeUntil(ended)), triggers.pipe(tap({ complete: () => ended.next() })));
    });
  }

  /** Reconcile the controller owner of each object of `resource`, as `owns` does. */
  own(resource: WatchedResource): WatchHandle {
    const name = this.claim(resource);
    const { owner, priority, trace } = this.parts;
    return this.add(name, resource, (events) =>
      events.pipe(
        withPriority(
          (e) => traced(e, mapToOwners(owner), trace, 'owns', name),
          (event, key) => priority.delta(event, key, resource.priority),
        ),
      ),
    );
  }

  /** Reconcile the keys `watch.map` gives for each change of `watch.resource`, as `watches` does. */
  watch(watch: ExtraWatch): WatchHandle {
    if (typeof watch?.map !== 'function') throw new TypeError(`controller "${this.parts.controller}": watch() needs a map function`);
    const name = this.claim(watch.resource);
    const { stores, priority, trace } = this.parts;
    const map = Object.defineProperty((delta: Parameters<ExtraWatch['map']>[0]) => watch.map(delta, stores), 'name', { value: `watch(${name}).map` });
    return this.add(name, watch.resource, (events) =>
      events.pipe(
        withPriority(
          (e) => traced(e, mapToKeys(map), trace, 'watches', name),
          (event, key: ObjectKey) => priority.delta(event, key, watch.priority ?? watch.resource.priority),
        ),
      ),
    );
  }

  /** The keys of every added watch, from its informer's current state on, each until it is removed. */
  readonly triggers: Observable<KeyTrigger> = defer(() => merge(from([...this.entries]), this.added)).pipe(
    mergeMap((entry) => entry.keys(entry.informer.events).pipe(takeUntil(entry.removed))),
  );

  /** Runs the informer of every added watch until it is removed; errors, naming it, when one fails for good. */
  readonly warm: Observable<never> = defer(() => merge(from([...this.entries]), this.added)).pipe(
    mergeMap((entry) =>
      entry.informer.events.pipe(
        tap((event) => this.parts.storeSize?.(entry.name, event.store.size)),
        ignoreElements(),
        takeUntil(entry.removed),
        catchError((err: unknown) => throwError(() => new Error(`controller "${this.parts.controller}": the added watch of ${entry.name} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err }))),
      ),
    ),
  );

  /**
   * Attaches `attach` to every added watch, now and as they are added,
   * and detaches it from each as it is removed, until the function
   * returned is called (the timeline listens to informers so, while read).
   */
  listen(attach: AttachToWatch): () => void {
    const listener = { attach, detach: new Map<Entry, () => void>() };
    for (const entry of this.entries) listener.detach.set(entry, attach(entry));
    this.attached.add(listener);
    return () => {
      this.attached.delete(listener);
      for (const detach of listener.detach.values()) detach();
      listener.detach.clear();
    };
  }

  /** What is wrong with the added watches' informers, as `Wiring.problems()` says it. */
  problems(): string[] {
    return [...this.entries].flatMap((entry) => problemOf(entry.resource, entry.informer) ?? []);
  }

  private claim(resource: WatchedResource): string {
    if (resource === undefined || typeof resource.resource !== 'string' || typeof resource.kind !== 'string') {
      throw new TypeError(`controller "${this.parts.controller}": a watched resource needs version, resource and kind`);
    }
    const name = resourceName(resource);
    if (Object.hasOwn(this.parts.stores, name)) throw new Error(`controller "${this.parts.controller}" already watches ${name}: remove that watch first`);
    return name;
  }

  private add(name: string, resource: WatchedResource, keys: Entry['keys']): WatchHandle {
    const informer = this.parts.informers.informer<KubeObject>(resource, informerOptions(resource));
    const entry: Entry = { name, resource, informer, keys, removed: new ReplaySubject<void>(1) };
    // Defined, not assigned: a resource named `__proto__` is data here too.
    Object.defineProperty(this.parts.stores, name, { value: informer.store, enumerable: true, configurable: true, writable: true });
    this.entries.add(entry);
    for (const listener of this.attached) listener.detach.set(entry, listener.attach(entry));
    this.added.next(entry);
    const entries = this.entries;
    const stores = this.parts.stores;
    const factory = this.parts.informers;
    const attached = this.attached;
    return {
      resource: name,
      get removed() {
        return !entries.has(entry);
      },
      remove() {
        if (!entries.delete(entry)) return;
        // Keys first, then the informer: what its store lets go of on the way out reaches no reconcile.
        entry.removed.next();
        entry.removed.complete();
        for (const listener of attached) {
          listener.detach.get(entry)?.();
          listener.detach.delete(entry);
        }
        if (stores[name] === informer.store) delete stores[name];
        // Unsubscribed by now (takeUntil is synchronous): unless another controller shares it, its objects go too.
        factory.release(informer);
      },
    };
  }
}
