import { Observable, Subscription, asyncScheduler, type SchedulerLike } from 'rxjs';
import type { ResourceRef, KubeObject, ListWatchEvent } from '../../types.js';
import { matchesFilter, parseFilter } from '../../apiserver/selectors/selectors.js';
import { ApiError } from '../../apiserver/api/statusError.js';
import type { MemoryChange, MemoryCluster } from './memoryCluster.js';

export interface MemoryWatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Where events are delivered (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /** Ms between a write and its watch event (default 0: the next action of the scheduler, never inside the write). */
  latency?: number;
}

/**
 * A list-watch of a resource of a memory cluster, as a source emits it: a
 * list of what is stored now (`Restart`, one `Listed` per object, `Synced`),
 * then `Added`/`Modified`/`Deleted` for each committed change. With
 * selectors (kube's grammar), an object that starts matching is `Added`
 * and one that stops is `Deleted`, as kube's watch cache reports them.
 *
 * Events are delivered on `scheduler` after `latency`, never during the
 * write that caused them: a reconcile's write comes back to the store as an
 * event a moment later, as from a real API server. The objects are the
 * stored ones, frozen: code that changes an object from the cache (a bug
 * the real cache would not reveal) fails at once.
 */
export function memoryWatch<T extends KubeObject = KubeObject>(
  cluster: MemoryCluster,
  ref: ResourceRef,
  options: MemoryWatchOptions = {},
): Observable<ListWatchEvent<T>> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const latency = options.latency ?? 0;
  return new Observable<ListWatchEvent<T>>((subscriber) => {
    let type;
    let filter;
    try {
      type = cluster.kinds.byResource(ref);
      filter = parseFilter(type, options.labelSelector ?? null, options.fieldSelector ?? null);
    } catch (err) {
      subscriber.error(err instanceof ApiError ? new Error(`cannot watch ${ref.resource}: ${err.message}`) : err);
      return;
    }
    const selected = (object: KubeObject | undefined): boolean =>
      object !== undefined && (ref.namespace === undefined || object.metadata.namespace === ref.namespace) && matchesFilter(filter, object);

    subscriber.next({ type: 'Restart' });
    for (const object of cluster.list(type, ref.namespace)) {
      if (selected(object)) subscriber.next({ type: 'Listed', object: object as T });
    }
    subscriber.next({ type: 'Synced', resourceVersion: cluster.resourceVersion });

    const pending = new Subscription();
    const deliver = (event: ListWatchEvent<T>): void => {
      const delivery: Subscription = scheduler.schedule(() => {
        pending.remove(delivery);
        subscriber.next(event);
      }, latency);
      pending.add(delivery);
    };
    const storageKey = type.storageKey;
    const stop = cluster.listen((change: MemoryChange) => {
      if (change.resource.storageKey !== storageKey) return;
      const was = change.type !== 'Added' && selected(change.old);
      const is = change.type !== 'Deleted' && selected(change.object);
      const object = change.object as T;
      if (is) deliver({ type: was ? 'Modified' : 'Added', object });
      else if (was) deliver({ type: 'Deleted', object });
    });
    return () => {
      stop();
      pending.unsubscribe();
    };
  });
}
