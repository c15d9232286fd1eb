import type { KubeConfig } from '@kubernetes/client-node';
import { defer, finalize, isObservable, tap, type Observable } from 'rxjs';
import { ShardIdentities } from './shardIdentity.js';
import { deltas } from '../operators/deltas.js';
import { resync } from '../operators/resync.js';
import type { Indexers } from '../store/indexFunctions.js';
import { indexer, type StoreEvent } from '../store/indexer.js';
import { Store, listerView, type Lister } from '../store/store.js';
import { type KubeObject, type ListWatchEvent, collectionPath, describeResource, resourceName, type ResourceRef } from '../types.js';
import { listWatch, type ListWatchMonitor, type ListWatchOptions } from '../sources/listWatch.js';
import type { Logger } from '../logger.js';
import { replay, shareSource } from './shareSource.js';

/** One shared list-watch and its store. */
export interface Informer<T extends KubeObject = KubeObject> {
  /** The resource it lists and watches. */
  readonly resource: ResourceRef;
  /**
   * Every delta after the store applied it. Subscribing starts the
   * list-watch if no one else has; late subscribers get the current state
   * first (see `shareSource`). When the last one leaves, the watch closes.
   */
  readonly events: Observable<StoreEvent<T>>;
  /** The store, readable at any time; empty while no one is subscribed. */
  readonly store: Lister<T>;
  /**
   * Whether its source is getting answers: `failing` while it retries a
   * failure (a 403 before RBAC is granted, a server that is down), `failed`
   * once its events ended with an error; `ok` otherwise, and before it starts.
   */
  health(): InformerHealth;
  /**
   * Tells `listener` of what the informer receives, for as long as it
   * listens (until the function returned is called): every event of its
   * source as it arrives (after the transform, before the store applies
   * it) and every failure of its list or watch. Listening starts nothing;
   * an informer no one listens to pays one check per event. A listener that
   * throws is logged and otherwise ignored.
   */
  listen(listener: InformerListener<T>): () => void;
}

/** What an informer's `listen` tells. */
export interface InformerListener<T extends KubeObject = KubeObject> {
  /** One event of the source, as received. */
  event(event: ListWatchEvent<T>): void;
  /**
   * The source failed: `retryInMs` is set when it retries on its own (a 403
   * before RBAC is granted, a server that is down), unset when the
   * informer's events ended with this error. `code` is the HTTP status, if one came.
   */
  failure(failure: { reason: string; code?: number; retryInMs?: number }): void;
}

/** An informer's health; `reason` says what failed, in words for a `/readyz` answer or a log. */
export type InformerHealth = { state: 'ok' } | { state: 'failing' | 'failed'; reason: string };

/**
 * What an informer lists and watches and what its store indexes: the selectors (a `shardSelector`
 * too, for a sharded replica's share: see `listWatch`), a transform, indexes, a resync period.
 */
export interface InformerOptions<T extends KubeObject>
  extends Pick<ListWatchOptions<T>, 'labelSelector' | 'fieldSelector' | 'shardSelector' | 'transform' | 'metadataOnly'> {
  /** Extra indexes; informers of one resource merge theirs, as long as none has started. */
  indexers?: Indexers<T>;
  /** client-go's resyncPeriod: re-emit every stored key as a `Sync` this often (ms); off by default. */
  resyncPeriod?: number;
}

/**
 * Where an informer's events come from: `listWatch` by default. Tests give
 * marble diagrams or an in-memory cluster instead, and the informer around
 * them (deltas, store, sharing, resync) stays the real one.
 */
export type InformerSource = <T extends KubeObject>(resource: ResourceRef, options: SourceOptions<T>) => Observable<ListWatchEvent<T>>;

/** What an informer's own options say of its source. */
export type SourceOptions<T extends KubeObject> = Pick<ListWatchOptions<T>, 'labelSelector' | 'fieldSelector' | 'shardSelector' | 'transform' | 'metadataOnly'>;

/** Options every informer of a factory shares: transport, timing, logging, metrics. */
export type InformerFactoryOptions = Omit<ListWatchOptions<KubeObject>, 'labelSelector' | 'fieldSelector' | 'shardSelector' | 'transform' | 'metadataOnly'> & {
  /**
   * Instead of `listWatch` on the factory's kubeConfig. Called each time an
   * informer starts; if it throws or returns no Observable, that informer's
   * events error with a message naming this option and the resource.
   */
  source?: InformerSource;
};

/**
 * Hands out one informer per resource, namespace and selectors, so that
 * controllers in one process that watch the same things share one watch
 * and one store, as client-go's SharedInformerFactory does. Each factory
 * is its own world: two factories share nothing.
 */
export class InformerFactory {
  private readonly informers = new Map<string, SharedInformer<KubeObject>>();
  private readonly shards = new ShardIdentities();

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly options: InformerFactoryOptions = {},
  ) {}

  /** The informer of `resource` with these selectors: the one already made, or a new one (not started until subscribed). */
  informer<T extends KubeObject = KubeObject>(resource: ResourceRef, options: InformerOptions<T> = {}): Informer<T> {
    // A metadata-only informer holds other objects than a full one: they share nothing.
    const id = [
      collectionPath(resource),
      options.labelSelector ?? '',
      options.fieldSelector ?? '',
      options.metadataOnly === true ? 'metadata' : '',
      this.shards.of(options.shardSelector),
    ].join('?');
    let shared = this.informers.get(id) as SharedInformer<T> | undefined;
    if (shared === undefined) {
      shared = new SharedInformer<T>(this.kubeConfig, resource, options, this.options as InformerFactoryOptions);
      this.informers.set(id, shared as unknown as SharedInformer<KubeObject>);
    } else {
      shared.join(options);
    }
    return shared;
  }

  /**
   * Lets go of the objects of `informer` if no one subscribes to it any
   * more (a watch removed from a running controller): its store is emptied
   * at once instead of holding the last state until the next start. One
   * still subscribed, or made by another factory, is left as it is.
   * Returns whether it was emptied.
   */
  release(informer: Informer): boolean {
    // Only its own: another factory's informer is that factory's to let go.
    return informer instanceof SharedInformer && [...this.informers.values()].includes(informer as SharedInformer<KubeObject>) && informer.release();
  }

  /** The resources informers were asked for, by name (`deployments.apps`), each once. */
  resourceNames(): string[] {
    return [...new Set([...this.informers.values()].map((informer) => resourceName(informer.resource)))];
  }
}

const OK: InformerHealth = Object.freeze({ state: 'ok' });

class SharedInformer<T extends KubeObject> implements Informer<T> {
  readonly events: Observable<StoreEvent<T>>;
  readonly store: Lister<T>;
  private current: Store<T>;
  private indexers: Indexers<T>;
  private started = false;
  private finished = false;
  private currentHealth: InformerHealth = OK;
  private listeners: InformerListener<T>[] = [];
  private subscribers = 0;
  private readonly logger: Logger | undefined;

  constructor(
    kubeConfig: KubeConfig,
    readonly resource: ResourceRef,
    private readonly options: InformerOptions<T>,
    factoryOptions: InformerFactoryOptions,
  ) {
    this.indexers = { ...options.indexers };
    this.logger = factoryOptions.logger;
    this.current = this.newStore();
    const monitor = this.healthMonitor(factoryOptions.monitor);
    const open: InformerSource =
      factoryOptions.source === undefined
        ? <U extends KubeObject>(r: ResourceRef, o: SourceOptions<U>) => listWatch<U>(kubeConfig, r, { ...(factoryOptions as ListWatchOptions<U>), monitor, ...o })
        : checkedSource(factoryOptions.source);
    const source = defer(() => {
      this.started = true;
      this.currentHealth = OK;
      // Each run of the list-watch fills a fresh store: the old one may hold
      // objects deleted while no one watched, which no tombstone would reach.
      this.current = this.newStore();
      const events = open<T>(resource, pickListOptions(options)).pipe(
        tap(this.tell),
        deltas<T>({ logger: factoryOptions.logger }),
        indexer<T>({ store: this.current }),
      );
      return options.resyncPeriod ? events.pipe(resync<T>(options.resyncPeriod, { scheduler: factoryOptions.scheduler })) : events;
    }).pipe(
      tap({
        complete: () => (this.finished = true),
        error: (err: unknown) => {
          const reason = err instanceof Error ? err.message : String(err);
          this.currentHealth = { state: 'failed', reason };
          this.notify((listener) => listener.failure({ reason }));
        },
      }),
    );
    const shared = source.pipe(shareSource<T>());
    // A source that completed (an aborted signal, a scripted test watch) is a
    // finished run: later subscribers get its last state, not a second run.
    this.events = defer(() => {
      this.subscribers++;
      return (this.finished ? replay(this.current.lister) : shared).pipe(finalize(() => this.subscribers--));
    });
    this.store = listerView(() => this.current);
  }

  /** Empties the store of an informer no one subscribes to; see `InformerFactory.release`. */
  release(): boolean {
    if (this.subscribers > 0) return false;
    this.current = this.newStore();
    return true;
  }

  health(): InformerHealth {
    return this.currentHealth;
  }

  listen(listener: InformerListener<T>): () => void {
    // Copied on change, never in place: a listener that leaves while events are told does not skip its neighbour.
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  private readonly tell = (event: ListWatchEvent<T>): void => {
    if (this.listeners.length > 0) this.notify((listener) => listener.event(event));
  };

  private notify(call: (listener: InformerListener<T>) => void): void {
    for (const listener of this.listeners) {
      try {
        call(listener);
      } catch (err) {
        this.logger?.error({ resource: resourceName(this.resource), err: err instanceof Error ? err.message : String(err) }, 'an informer listener threw');
      }
    }
  }

  /** The factory's monitor, told too of this informer's source failing and recovering. */
  private healthMonitor(shared: ListWatchMonitor | undefined): ListWatchMonitor {
    return {
      ...shared,
      retry: (info) => {
        if (this.listeners.length > 0) {
          this.notify((listener) => listener.failure({ reason: `${info.verb}: ${info.reason}`, ...(info.code !== undefined ? { code: info.code } : {}), retryInMs: info.delayMs }));
        }
        shared?.retry?.(info);
      },
      status: (resource, status) => {
        if (this.currentHealth.state !== 'failed') this.currentHealth = status.healthy ? OK : { state: 'failing', reason: `${status.verb} failing: ${status.reason}` };
        shared?.status?.(resource, status);
      },
    };
  }

  join(options: InformerOptions<T>): void {
    if (options.transform !== undefined && options.transform !== this.options.transform) {
      throw new Error(
        `an informer for ${collectionPath(this.resource)} already exists with another transform; ` +
          'informers of one resource and selectors share one transform',
      );
    }
    const extra = Object.keys(options.indexers ?? {}).filter((name) => this.indexers[name] !== options.indexers?.[name]);
    if (extra.length === 0) return;
    if (this.started) {
      throw new Error(`cannot add indexes ${extra.join(', ')} to the informer for ${collectionPath(this.resource)}: it has already started`);
    }
    this.indexers = { ...this.indexers, ...options.indexers };
    this.current = this.newStore();
  }

  private newStore(): Store<T> {
    return new Store<T>({ indexers: this.indexers });
  }
}

/**
 * A caller's `source`, made to say so when it fails: what it throws, or a
 * value that is not an Observable, errors the informer's events with an
 * Error naming the `source` option and the resource (the thrown value as
 * `cause`), rather than a bare exception from deep inside the informer.
 */
function checkedSource(source: InformerSource): InformerSource {
  return <T extends KubeObject>(resource: ResourceRef, options: SourceOptions<T>) => {
    let opened: unknown;
    try {
      opened = source<T>(resource, options);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new Error(`InformerFactory: the source option threw for ${describeResource(resource)}: ${message}`, { cause: err });
    }
    if (!isObservable(opened)) {
      throw new TypeError(
        `InformerFactory: the source option returned ${opened === null ? 'null' : typeof opened} for ${describeResource(resource)}; expected an Observable`,
      );
    }
    return opened as Observable<ListWatchEvent<T>>;
  };
}

function pickListOptions<T extends KubeObject>(options: InformerOptions<T>): ListWatchOptions<T> {
  const picked: ListWatchOptions<T> = {};
  if (options.labelSelector !== undefined) picked.labelSelector = options.labelSelector;
  if (options.fieldSelector !== undefined) picked.fieldSelector = options.fieldSelector;
  if (options.shardSelector !== undefined) picked.shardSelector = options.shardSelector;
  if (options.transform !== undefined) picked.transform = options.transform;
  if (options.metadataOnly === true) picked.metadataOnly = true;
  return picked;
}
