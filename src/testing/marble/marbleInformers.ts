import { KubeConfig } from '@kubernetes/client-node';
import { defer, map, tap, type Observable, type SchedulerLike } from 'rxjs';
import type { Logger } from '../../logger.js';
import { deltas } from '../../operators/deltas.js';
import { resync } from '../../operators/resync.js';
import { InformerFactory, type Informer, type InformerOptions } from '../../sources/informers.js';
import { collectionPath, resourceName, type ResourceRef } from '../../sources/resource.js';
import { replay, shareSource } from '../../sources/shareSource.js';
import type { Indexers } from '../../store/indexFunctions.js';
import { indexer, type StoreEvent } from '../../store/indexer.js';
import { Store, listerView, type Lister } from '../../store/store.js';
import type { KubeObject, ListWatchEvent } from '../../types.js';

/** Where an informer's list-watch events come from in a test: a marble diagram, or a memory client's watch. */
export type InformerInput = (
  resource: ResourceRef,
  selectors: { labelSelector?: string; fieldSelector?: string },
) => Observable<ListWatchEvent>;

/**
 * An `InformerFactory` whose informers read `input` instead of opening a
 * list-watch, so that `controller()` runs unchanged in a test: the same
 * `deltas()`, `indexer()`, `shareSource()` and resync as a real informer,
 * fed from marble diagrams or an in-memory cluster.
 *
 * One informer per resource and selectors, as the real factory shares
 * them; indexes asked for by later callers join those of the first until
 * it starts. An input that completes is a finished watch: its informer
 * keeps the last state, and a later subscriber gets that state (and then
 * completion) rather than a second run of the input.
 */
export class MarbleInformers extends InformerFactory {
  private readonly made = new Map<string, MarbleInformer<KubeObject>>();

  constructor(
    private readonly input: InformerInput,
    private readonly settings: { scheduler: SchedulerLike; logger?: Logger },
  ) {
    super(new KubeConfig());
  }

  override informer<T extends KubeObject = KubeObject>(resource: ResourceRef, options: InformerOptions<T> = {}): Informer<T> {
    const id = [collectionPath(resource), options.labelSelector ?? '', options.fieldSelector ?? ''].join('?');
    const existing = this.made.get(id) as MarbleInformer<T> | undefined;
    if (existing !== undefined) {
      existing.join(options.indexers);
      return existing;
    }
    const made = new MarbleInformer<T>(resource, options, () => this.input(resource, options) as Observable<ListWatchEvent<T>>, this.settings);
    this.made.set(id, made as unknown as MarbleInformer<KubeObject>);
    return made;
  }

  /** The resources informers were asked for, by name (`deployments.apps`). */
  resourceNames(): string[] {
    return [...new Set([...this.made.values()].map((i) => resourceName(i.resource)))];
  }
}

class MarbleInformer<T extends KubeObject> implements Informer<T> {
  readonly events: Observable<StoreEvent<T>>;
  readonly store: Lister<T>;
  private current: Store<T>;
  private indexers: Indexers<T>;
  private started = false;
  private finished = false;
  private readonly logger: Logger | undefined;

  constructor(
    readonly resource: ResourceRef,
    options: InformerOptions<T>,
    input: () => Observable<ListWatchEvent<T>>,
    settings: { scheduler: SchedulerLike; logger?: Logger },
  ) {
    this.indexers = { ...options.indexers };
    this.logger = settings.logger;
    this.current = this.newStore();
    const transform = options.transform;
    const source = defer(() => {
      this.started = true;
      this.current = this.newStore();
      const raw = transform === undefined ? input() : input().pipe(map((event) => ('object' in event ? { ...event, object: transform(event.object) } : event)));
      const events = raw.pipe(deltas<T>({ logger: settings.logger }), indexer<T>({ store: this.current }));
      return options.resyncPeriod ? events.pipe(resync<T>(options.resyncPeriod, { scheduler: settings.scheduler })) : events;
    }).pipe(tap({ complete: () => (this.finished = true) }));
    const shared = source.pipe(shareSource<T>());
    this.events = defer(() => (this.finished ? replay(this.current.lister) : shared));
    this.store = listerView(() => this.current);
  }

  join(indexers: Indexers<T> | undefined): void {
    const extra = Object.keys(indexers ?? {}).filter((name) => this.indexers[name] !== indexers?.[name]);
    if (extra.length === 0) return;
    if (this.started) throw new Error(`cannot add indexes ${extra.join(', ')} to the informer for ${collectionPath(this.resource)}: it has already started`);
    this.indexers = { ...this.indexers, ...indexers };
    this.current = this.newStore();
  }

  private newStore(): Store<T> {
    return new Store<T>({ indexers: this.indexers, ...(this.logger ? { logger: this.logger } : {}) });
  }
}
