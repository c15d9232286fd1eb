import { EMPTY, Observable, concat, defer, finalize, share, tap, type MonoTypeOperatorFunction } from 'rxjs';
import type { Lister } from '../store/store.js';
import type { StoreEvent } from '../store/indexer.js';
import type { KubeObject } from '../types.js';

/**
 * Shares one informer (a list-watch through `deltas()` and `indexer()`)
 * among any number of subscribers, the way client-go shares one informer
 * per resource among controllers: one watch, one store.
 *
 * A subscriber that joins late gets the current state first, as if it had
 * been there from the start: an `Added` (`initial: true`) for every stored
 * object, then `Synced` if the store has synced, then the live events. The
 * replay and the switch to live events happen in one synchronous step, so
 * no event falls between them.
 *
 * ```
 * source:  ─a─b─S──────c────
 * first:   ─a─b─S──────c────
 * late:           ^(abS)─c──     (joins after S: replayed a, b, Synced)
 * ```
 *
 * When the last subscriber leaves, the source is unsubscribed (its watch
 * closed); the next subscriber starts it afresh.
 */
export function shareSource<T extends KubeObject = KubeObject>(): MonoTypeOperatorFunction<StoreEvent<T>> {
  return (source) => {
    let store: Lister<T> | undefined;
    const live = source.pipe(
      tap((event) => {
        store = event.store;
      }),
      finalize(() => {
        store = undefined;
      }),
      share(),
    );
    return defer(() => (store === undefined ? live : concat(replay(store), live)));
  };
}

/** The store's contents as the events a subscriber present from the start would have seen. */
export function replay<T extends KubeObject>(store: Lister<T>): Observable<StoreEvent<T>> {
  if (store.size === 0 && !store.synced) return EMPTY;
  return new Observable<StoreEvent<T>>((subscriber) => {
    for (const key of store.keys()) {
      if (subscriber.closed) return;
      const object = store.get(key);
      if (object !== undefined) subscriber.next({ type: 'Added', key, object, initial: true, store });
    }
    if (store.synced) subscriber.next({ type: 'Synced', resourceVersion: store.resourceVersion ?? '', store });
    subscriber.complete();
  });
}
