import { defer, map, type OperatorFunction } from 'rxjs';
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
  return (source) =>
    defer(() => {
      const store = options.store ?? new Store<T>(options);
      const lister = store.lister;
      return source.pipe(
        map((event): StoreEvent<T> => {
          store.apply(event);
          return withStore(event, lister);
        }),
      );
    });
}

// Built field by field rather than spread: events come in a handful of
// shapes, and a spread over them falls off V8's fast path (it was most of the
// cost of this operator in bench/store.ts).
function withStore<T extends KubeObject>(event: DeltaEvent<T>, store: Lister<T>): StoreEvent<T> {
  if (!isDelta(event)) return { type: event.type, resourceVersion: event.resourceVersion, store };
  const out: Delta<T> & { store: Lister<T> } = { type: event.type, key: event.key, object: event.object, store };
  if (event.old !== undefined) out.old = event.old;
  if (event.initial !== undefined) out.initial = event.initial;
  if (event.finalStateUnknown !== undefined) out.finalStateUnknown = event.finalStateUnknown;
  return out;
}
