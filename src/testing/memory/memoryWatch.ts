import { Observable, Subscription, asyncScheduler, type SchedulerLike } from 'rxjs';
import { toVersion } from '../../apiserver/api/conversion.js';
import { ApiError } from '../../apiserver/api/statusError.js';
import type { Cluster } from '../../apiserver/cluster.js';
import { matchesFilter, parseFilter } from '../../apiserver/selectors/selectors.js';
import type { ChangeEvent, StoredObject } from '../../apiserver/storage/objectStore.js';
import type { KubeObject, ListWatchEvent, ResourceRef } from '../../types.js';
import { typeOfResource } from './memoryResources.js';
import type { ShardSelector } from '../../util/shardSelector.js';

export interface MemoryWatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Only this share (KEP-5866), filtered as a server with `ShardedListAndWatch` filters it. */
  shard?: ShardSelector;
  /** Where events are delivered (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /** Ms between a write and its watch event (default 0: the next action of the scheduler, never inside the write). */
  latency?: number;
}

/**
 * A list-watch of a resource of the in-memory cluster, as a source emits
 * it: a list of what is stored now (`Restart`, one `Listed` per object,
 * `Synced`), then `Added`/`Modified`/`Deleted` for each committed change.
 * With selectors (kube's grammar), an object that starts matching is
 * `Added` and one that stops is `Deleted`, as kube's watch cache reports
 * them.
 *
 * Events are delivered on `scheduler` after `latency`, never during the
 * write that caused them: a reconcile's write comes back to the store as an
 * event a moment later, as from a real API server. The objects are the
 * stored ones, frozen: code that changes an object from the cache (a bug
 * the real cache would not reveal) fails at once.
 */
export function memoryWatch<T extends KubeObject = KubeObject>(
  cluster: Cluster,
  ref: ResourceRef,
  options: MemoryWatchOptions = {},
): Observable<ListWatchEvent<T>> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const latency = options.latency ?? 0;
  return new Observable<ListWatchEvent<T>>((subscriber) => {
    let type;
    let filter;
    try {
      type = typeOfResource(cluster.registry, ref, options);
      filter = { ...parseFilter(type, options.labelSelector ?? null, options.fieldSelector ?? null), shard: options.shard };
    } catch (err) {
      subscriber.error(err instanceof ApiError ? new Error(`cannot watch ${ref.resource}: ${err.message}`) : err);
      return;
    }
    const served = type;
    const view = (stored: StoredObject): T => toVersion(served, stored.object) as T;
    const selected = (object: KubeObject | undefined): object is KubeObject =>
      object !== undefined && (ref.namespace === undefined || object.metadata.namespace === ref.namespace) && matchesFilter(filter, object);

    subscriber.next({ type: 'Restart' });
    for (const object of cluster.objects(served, ref.namespace)) {
      if (selected(object)) subscriber.next({ type: 'Listed', object: object as T });
    }
    subscriber.next({ type: 'Synced', resourceVersion: String(cluster.store.resourceVersion) });

    const pending = new Subscription();
    const deliver = (event: ListWatchEvent<T>): void => {
      const delivery: Subscription = scheduler.schedule(() => {
        pending.remove(delivery);
        subscriber.next(event);
      }, latency);
      pending.add(delivery);
    };
    const stop = cluster.store.subscribe((change: ChangeEvent) => {
      if (change.storageKey !== served.storageKey) return;
      const object = view(change.current);
      const was = change.prev !== undefined && selected(view(change.prev));
      const is = change.type !== 'DELETED' && selected(object);
      if (is) deliver({ type: was ? 'Modified' : 'Added', object });
      else if (was) deliver({ type: 'Deleted', object });
    });
    return () => {
      stop();
      pending.unsubscribe();
    };
  });
}
