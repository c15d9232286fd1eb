import { map, mergeMap, takeUntil, type Observable } from 'rxjs';
import type { Informer, InformerHealth, InformerListener } from '../../informers/informerFactory.js';
import type { StoreEvent } from '../../store/indexer.js';
import type { Lister } from '../../store/store.js';
import { isDelta, type ObjectKey, type ResourceRef } from '../../types.js';
import { clusterKey } from './clusterKeys.js';
import type { JoinedCluster } from './clusterSet.js';

/** One cluster's informer of a resource, as `clusterInformer` reads it. */
export type InformerOf<P> = (cluster: JoinedCluster<P>) => Informer;

/** `cluster/key` split at the first `/`, or undefined when `key` names no cluster. */
function parts(key: ObjectKey): { cluster: string; key: ObjectKey } | undefined {
  const slash = typeof key === 'string' ? key.indexOf('/') : -1;
  return slash <= 0 ? undefined : { cluster: key.slice(0, slash), key: key.slice(slash + 1) };
}

/**
 * One resource's stores of every joined cluster as one read-only `Lister`
 * whose keys carry the cluster (`cluster/namespace/name`): what
 * `Controller.stores` and the live view read. A cluster's objects are in it
 * while the cluster is joined. It is synced when every joined cluster's
 * store is; `resourceVersion` is undefined, as clusters' versions do not
 * compare.
 */
export function clusterLister<P>(clusters: () => readonly JoinedCluster<P>[], find: (name: string) => JoinedCluster<P> | undefined, informerOf: InformerOf<P>): Lister {
  const storeOf = (key: ObjectKey) => {
    const at = parts(key);
    const cluster = at === undefined ? undefined : find(at.cluster);
    return cluster === undefined || at === undefined ? undefined : { store: informerOf(cluster).store, key: at.key };
  };
  const every = <R>(read: (store: Lister, name: string) => R[]): R[] => clusters().flatMap((cluster) => read(informerOf(cluster).store, cluster.name));
  return {
    get: (key) => {
      const at = storeOf(key);
      return at?.store.get(at.key);
    },
    has: (key) => {
      const at = storeOf(key);
      return at?.store.has(at.key) ?? false;
    },
    list: () => every((store) => store.list()),
    keys: () => every((store, name) => store.keys().map((key) => `${name}/${key}`)),
    get size() {
      return clusters().reduce((sum, cluster) => sum + informerOf(cluster).store.size, 0);
    },
    byIndex: (index, value) => every((store) => store.byIndex(index, value)),
    indexKeys: (index, value) => every((store, name) => store.indexKeys(index, value).map((key) => `${name}/${key}`)),
    listIndexValues: (index) => [...new Set(every((store) => store.listIndexValues(index)))],
    get synced() {
      return clusters().every((cluster) => informerOf(cluster).store.synced);
    },
    resourceVersion: undefined,
  };
}

/** The worst health of the clusters' informers, its reason naming the cluster. */
function worstHealth<P>(clusters: readonly JoinedCluster<P>[], informerOf: InformerOf<P>): InformerHealth {
  let worst: InformerHealth = { state: 'ok' };
  for (const cluster of clusters) {
    const health = informerOf(cluster).health();
    if (health.state === 'ok' || worst.state === 'failed') continue;
    worst = { state: health.state, reason: `cluster "${cluster.name}": ${health.reason}` };
  }
  return worst;
}

/**
 * One resource's informers of every joined cluster as one `Informer`:
 * its events are every cluster's while it is joined (keys with the
 * cluster, the store `clusterLister`), its health the worst of theirs,
 * and its listeners hear every cluster's informer, failures named by
 * cluster. Subscribing it subscribes each cluster's informer (starting its
 * list-watch) until that cluster leaves.
 */
export function clusterInformer<P>(
  resource: ResourceRef,
  set: { clusters: Observable<JoinedCluster<P>>; all(): JoinedCluster<P>[]; get(name: string): JoinedCluster<P> | undefined },
  informerOf: InformerOf<P>,
): Informer {
  const store = clusterLister(() => set.all(), (name) => set.get(name), informerOf);
  const events: Observable<StoreEvent> = set.clusters.pipe(
    mergeMap((cluster) =>
      informerOf(cluster).events.pipe(
        map((event): StoreEvent => (isDelta(event) ? { ...event, key: clusterKey(cluster.name, event.key), store } : { ...event, store })),
        takeUntil(cluster.left),
      ),
    ),
  );
  return {
    resource,
    events,
    store,
    health: () => worstHealth(set.all(), informerOf),
    listen: (listener: InformerListener) => {
      const stops = new Map<string, () => void>();
      const subscription = set.clusters.subscribe({
        next: (cluster) => {
          const stop = informerOf(cluster).listen({
            event: (event) => listener.event(event),
            failure: (failure) => listener.failure({ ...failure, reason: `cluster "${cluster.name}": ${failure.reason}` }),
          });
          stops.set(cluster.name, stop);
          cluster.left.subscribe(() => {
            stop();
            stops.delete(cluster.name);
          });
        },
        // The source of clusters failing fails the run through the events; listening just ends.
        error: () => {},
      });
      return () => {
        subscription.unsubscribe();
        for (const stop of stops.values()) stop();
        stops.clear();
      };
    },
  };
}
