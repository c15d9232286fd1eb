import { filter, type Observable } from 'rxjs';
import { isDelta, type Delta, type KubeObject, type ListMarker } from '../types.js';

/**
 * Decides whether a delta is worth a reconcile (controller-runtime's
 * predicates, as plain functions). Pure and synchronous; a predicate that
 * throws errors the stream it filters (see `filterDeltas`).
 */
export type Predicate<T extends KubeObject = KubeObject> = (delta: Delta<T>) => boolean;

/**
 * What a predicate threw, and where it sat: the combinators around it,
 * outermost first, so that one failing predicate deep in `and(…, or(…))`
 * can be found from the message alone.
 */
class PredicateError extends Error {
  override readonly name = 'PredicateError';

  constructor(
    readonly where: readonly string[],
    readonly culprit: string,
    readonly about: string,
    cause: unknown,
  ) {
    super(`${where.join(' > ')}: ${culprit} threw on ${about}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** Asks `predicate` about `delta`; what it throws comes out as a `PredicateError` that says `where` it sat. */
function ask<T extends KubeObject>(predicate: Predicate<T>, delta: Delta<T>, where: string): boolean {
  try {
    return predicate(delta);
  } catch (err) {
    if (err instanceof PredicateError) throw new PredicateError([where, ...err.where], err.culprit, err.about, err.cause);
    const culprit = predicate.name === '' ? 'the predicate' : `predicate "${predicate.name}"`;
    throw new PredicateError([where], culprit, `${String(delta.type)} "${String(delta.key)}"`, err);
  }
}

/**
 * Builds a predicate that compares `old` with `object`. Created and deleted
 * objects always pass, as controller-runtime's built-in predicates let every
 * Create and Delete event through. An `Updated` or `Sync` without `old` has
 * nothing to compare with and passes: one reconcile too many is harmless, a
 * lost one is not.
 */
function changed(differ: (old: KubeObject, now: KubeObject) => boolean): Predicate {
  return (delta) => {
    if (delta.type === 'Added' || delta.type === 'Deleted') return true;
    return delta.old === undefined || differ(delta.old, delta.object);
  };
}

/** Equal as label or annotation maps: the same keys with the same values; absent is the same as empty. */
function sameStrings(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  if (a === b) return true;
  const aKeys = a === undefined ? [] : Object.keys(a);
  const bKeys = b === undefined ? [] : Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((k) => b !== undefined && Object.hasOwn(b, k) && b[k] === a?.[k]);
}

/**
 * Passes updates that change `metadata.generation`, which the API server
 * bumps on changes to the spec only: status and metadata writes (including
 * the controller's own status updates) do not pass. The usual predicate of
 * a controller for its primary resource (controller-runtime's
 * `GenerationChangedPredicate`).
 *
 * Caveats: objects of kinds that have no generation (ConfigMaps, Secrets)
 * never pass an update; and `Sync` deltas (a periodic resync,
 * or an unchanged object seen again in a re-list) carry the same object as
 * `old`, so they never pass either, as controller-runtime's predicate drops
 * resync events. Let resyncs through with `or(generationChanged, isSync)`.
 */
export const generationChanged: Predicate = changed((old, now) => old.metadata.generation !== now.metadata.generation);

/**
 * Passes updates with a new `metadata.resourceVersion`, that is, any real
 * write; drops `Sync` deltas, whose resourceVersion is by definition the one
 * stored (controller-runtime's `ResourceVersionChangedPredicate`).
 */
export const resourceVersionChanged: Predicate = changed(
  (old, now) => old.metadata.resourceVersion !== now.metadata.resourceVersion,
);

/** Passes updates that add, remove or change a label (controller-runtime's `LabelChangedPredicate`). */
export const labelsChanged: Predicate = changed((old, now) => !sameStrings(old.metadata.labels, now.metadata.labels));

/** Passes updates that add, remove or change an annotation (controller-runtime's `AnnotationChangedPredicate`). */
export const annotationsChanged: Predicate = changed(
  (old, now) => !sameStrings(old.metadata.annotations, now.metadata.annotations),
);

/** True for `Sync` deltas: a periodic resync, or an object seen unchanged in a re-list. */
export const isSync: Predicate = (delta) => delta.type === 'Sync';

function requirePredicates(name: string, predicates: unknown[]): void {
  predicates.forEach((p, i) => {
    if (typeof p !== 'function') throw new TypeError(`${name}: argument ${i} is not a predicate function (got ${typeof p})`);
  });
}

/**
 * Passes what every predicate passes; with none, everything. Asks them in
 * order and stops at the first that drops the delta.
 *
 * Edge case: a predicate that throws makes the combined one throw an Error
 * that names `and`, the predicate's position (and name, if it has one) and
 * the delta, with the thrown value as `cause`; combinators around this one
 * add themselves to the front of the message.
 */
export function and<T extends KubeObject = KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  requirePredicates('and', predicates);
  return (delta) => {
    for (let i = 0; i < predicates.length; i++) {
      if (!ask(predicates[i] as Predicate<T>, delta, `and argument ${i}`)) return false;
    }
    return true;
  };
}

/**
 * Passes what any predicate passes; with none, nothing. Asks them in order
 * and stops at the first that passes the delta. A throw is reported as by
 * `and`, naming `or`.
 */
export function or<T extends KubeObject = KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  requirePredicates('or', predicates);
  return (delta) => {
    for (let i = 0; i < predicates.length; i++) {
      if (ask(predicates[i] as Predicate<T>, delta, `or argument ${i}`)) return true;
    }
    return false;
  };
}

/**
 * Passes what the predicate drops. Beware: the built-in predicates pass
 * `Added` and `Deleted`, so their negation drops them; `filterDeltas` never
 * asks a predicate about those two, so there it makes no difference. A
 * throw is reported as by `and`, naming `not`.
 */
export function not<T extends KubeObject = KubeObject>(predicate: Predicate<T>): Predicate<T> {
  requirePredicates('not', [predicate]);
  return (delta) => !ask(predicate, delta, 'not');
}

/**
 * Filters deltas by a predicate, where it matters: `Updated` and `Sync`
 * deltas pass only if the predicate passes them; `Added` and `Deleted`
 * deltas always pass (a controller must see objects come and go, whatever
 * changed), and so do list markers (`Synced`, `Bookmark`). Works on what the
 * `deltas` operator emits and on deltas with more attached (the `indexer`'s
 * store events); each event comes out as it went in.
 *
 * ```
 * filterDeltas(generationChanged)
 * in:  ─Added(g1)─Updated(g1→g1)─Updated(g1→g2)─Sync(g2)─Synced─Deleted(g2)─
 * out: ─Added(g1)────────────────Updated(g1→g2)──────────Synced─Deleted(g2)─
 * ```
 *
 * Edge case: a predicate that throws errors the output, in place of the
 * delta it was asked about, with an Error naming `filterDeltas`, the
 * combinators the predicate sat in, the predicate (by name, if it has one)
 * and the delta, the thrown value as `cause`; it is asked nothing more.
 */
export function filterDeltas<T extends KubeObject = KubeObject>(
  predicate: Predicate<T>,
): <E extends Delta<T> | ListMarker>(source: Observable<E>) => Observable<E> {
  requirePredicates('filterDeltas', [predicate]);
  return (source) =>
    source.pipe(
      filter((event) => {
        if (!isDelta(event) || event.type === 'Added' || event.type === 'Deleted') return true;
        return ask(predicate, event as Delta<T>, 'filterDeltas');
      }),
    );
}
