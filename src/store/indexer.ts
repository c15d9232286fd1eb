import { Observable, type OperatorFunction } from 'rxjs';
import { isDelta, type Delta, type DeltaEvent, type KubeObject, type ListMarker } from '../types.js';
import { Store, type Lister, type StoreOptions } from './store.js';

/** A delta or marker after the store applied it, with the store to read. */
export type StoreEvent<T extends KubeObject = KubeObject> =
  | (Delta<T> & { store: Lister<T> })
  | (ListMarker & { store: Lister<T> });

/** Options of `indexer()`: extra indexes, and the store to fill. */
export interface IndexerOptions<T extends KubeObject> extends StoreOptions<T> {
  /**
   * The store to fill. By default each subscription makes its own; pass one
   * to hold a `Lister` before the stream starts (for a request handler, say).
   * A store passed in must be fed by one subscription at a time.
   */
  store?: Store<T>;
}

/**
 * The informer's cache as an operator: a fold of deltas into a `Store`
 * (a `scan` whose state is updated in place rather than copied), emitting
 * each delta after it is applied with the store's read-only `Lister`
 * attached, so later stages read the cache without a second subscription
 * and always see it at least as new as the delta in hand.
 *
 * ```
 * in:  ─Added(a)──────Updated(a)───────Synced(7)──────────Deleted(a)──
 * out: ─Added(a)+{a}──Updated(a)+{a'}──Synced(7)+synced───Deleted(a)+{}─
 * ```
 *
 * O(1) per event plus the index functions; the namespace index is always
 * kept. `synced` turns true at the first `Synced` and stays true across
 * re-lists, as client-go's HasSynced does.
 *
 * Edge case: an index function that throws (or returns no array) errors
 * the output with an `IndexFunctionError` naming the index and the key
 * (client-go's indexer panics there): the bug is in the caller's function,
 * and a cache that silently lacks index entries would mislead every reader.
 * The store is left consistent: the delta applied, the object out of that
 * index only (see `Store.apply`).
 */
export function indexer<T extends KubeObject = KubeObject>(
  options: IndexerOptions<T> = {},
): OperatorFunction<DeltaEvent<T>, StoreEvent<T>> {
  // An Observable of its own rather than `map`: one hop less on every event of a busy watch.
  return (source) =>
    new Observable<StoreEvent<T>>((subscriber) => {
      const store = options.store ?? new Store<T>(options);
      const lister = store.lister;
      return source.subscribe({
        next(event) {
          // A synchronous source goes on calling this observer after the output errored.
          if (subscriber.closed) return;
          try {
            store.apply(event);
          } catch (err) {
            subscriber.error(err);
            return;
          }
          subscriber.next(withStore(event, lister));
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
    });
}

// Each shape built in one literal, never given a field after the fact nor
// spread: a late field or a spread changes the object's hidden class, and
// V8 makes every stage downstream pay for that on every event.
function withStore<T extends KubeObject>(event: DeltaEvent<T>, store: Lister<T>): StoreEvent<T> {
  if (!isDelta(event)) return { type: event.type, resourceVersion: event.resourceVersion, store };
  const { type, key, object, old, initial, finalStateUnknown } = event;
  if (finalStateUnknown === undefined) {
    if (initial === undefined) return old === undefined ? { type, key, object, store } : { type, key, object, store, old };
    return old === undefined ? { type, key, object, store, initial } : { type, key, object, store, old, initial };
  }
  const out: Delta<T> & { store: Lister<T> } = { type, key, object, store };
  if (old !== undefined) out.old = old;
  if (initial !== undefined) out.initial = initial;
  out.finalStateUnknown = finalStateUnknown;
  return out;
}
