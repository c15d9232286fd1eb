import { mergeMap, type OperatorFunction } from 'rxjs';
import { isDelta, type Delta, type KubeObject, type ListMarker, type ObjectKey, type OwnerReference } from '../types.js';

/** What a key mapping may return for one delta: one key, several, or none. */
export type KeysOf = Iterable<ObjectKey> | ObjectKey | undefined | null;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return 'an empty string';
  return typeof value === 'object' ? 'an object that is not iterable' : `${typeof value} ${String(value)}`;
}

/**
 * The keys `fn` gives for `delta`. What `fn` throws, also while its iterable
 * is read (a generator runs then), comes out as an Error that names
 * `operator`, `culprit` and the delta, the thrown value as `cause`.
 */
function keysFor<D extends Delta>(operator: string, culprit: string, fn: (delta: D) => KeysOf, delta: D): ObjectKey[] {
  let mapped: KeysOf;
  let spread: unknown[] | undefined;
  try {
    mapped = fn(delta);
    if (typeof mapped === 'object' && mapped !== null && Symbol.iterator in mapped) spread = [...mapped];
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`${operator}: ${culprit} threw on ${String(delta.type)} "${String(delta.key)}": ${message}`, { cause: err });
  }
  return keysFrom(mapped, spread, delta.key);
}

function keysFrom(mapped: KeysOf, spread: unknown[] | undefined, key: ObjectKey): ObjectKey[] {
  if (mapped === undefined || mapped === null) return [];
  if (typeof mapped === 'string' && mapped !== '') return [mapped];
  if (spread !== undefined) {
    for (const k of spread) {
      if (typeof k !== 'string' || k === '') {
        throw new TypeError(`mapToKeys: the function gave ${describe(k)} among the keys for "${key}"; expected object keys`);
      }
    }
    return spread as ObjectKey[];
  }
  throw new TypeError(
    `mapToKeys: the function returned ${describe(mapped)} for "${key}"; expected an object key, an iterable of them, or undefined`,
  );
}

/**
 * Maps each delta to the keys it should trigger: the bridge from a watched
 * resource to the keys of the resource a controller reconciles
 * (controller-runtime's `EnqueueRequestsFromMapFunc`). `fn` may return one
 * key, an iterable of keys, or `undefined`/`null` for none; list markers
 * (`Synced`, `Bookmark`) trigger nothing and are not passed to it.
 *
 * ```
 * mapToKeys((d) => d.object.metadata.labels?.app)
 * in:  ─Added(pod a, app=web)─Synced─Updated(pod b, no app)─
 * out: ─web─────────────────────────────────────────────────
 * ```
 *
 * Keys are not deduplicated here: `reconcileByKey` coalesces them. Anything
 * else returned (a number, an empty string, a non-string among the keys)
 * errors the stream with a TypeError naming the delta's key.
 *
 * Edge case: an exception thrown by `fn`, or by the iterable it returned
 * while that is read, errors the output in place of that delta's keys (none
 * of them is emitted) with an Error naming `mapToKeys`, the function (by
 * name, if it has one) and the delta, the thrown value as `cause`; `fn` is
 * called no more.
 */
export function mapToKeys<D extends Delta = Delta>(fn: (delta: D) => KeysOf): OperatorFunction<D | ListMarker, ObjectKey> {
  if (typeof fn !== 'function') throw new TypeError(`mapToKeys needs a function, got ${typeof fn}`);
  const culprit = fn.name === '' ? 'the function' : `the function "${fn.name}"`;
  // mergeMap sends a throw from here to the output's error channel.
  return mergeMap((event) => (isDelta(event) ? keysFor('mapToKeys', culprit, fn, event as D) : []));
}

/** The owner kind whose keys `mapToOwners` produces. */
export interface OwnerKind {
  /** The API group of the owner: `'apps'`, `'example.com'`, or `''` for the core group. */
  group: string;
  /** The owner's kind (`Deployment`). */
  kind: string;
  /** The owner is cluster-scoped: its key is its name alone. Default false. */
  clusterScoped?: boolean;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/**
 * Maps deltas of owned objects to the keys of their controller: the owner
 * reference with `controller: true` whose kind and API group match (any
 * version of the group). A namespaced owner lives in the namespace of what
 * it owns, so its key is the owned object's namespace and the owner's name;
 * a cluster-scoped owner's key is its name. How `Owns(&Deployment{})` of
 * controller-runtime finds what to reconcile (`EnqueueRequestForOwner` with
 * `OnlyControllerOwner`).
 *
 * ```
 * mapToOwners({ group: 'apps', kind: 'ReplicaSet' })
 * in:  ─Added(pod ns/p1, controller ReplicaSet rs1)─Updated(pod ns/p2, no owner)─Deleted(ns/p1)─
 * out: ─ns/rs1───────────────────────────────────────────────────────────────────ns/rs1────────
 * ```
 *
 * Edge cases:
 * - An `Updated` (or `Sync`) whose controller changed triggers both the new
 *   owner and the old one (from `old`), so the old owner sees it let go, as
 *   controller-runtime does. The same owner in both is triggered once.
 * - A `Deleted` triggers the owner of the last state known, also when that
 *   state is not final (`finalStateUnknown`).
 * - References that are not the controller (`controller` false or absent),
 *   or of another kind or group, trigger nothing; nor do the ones of a
 *   corrupt object that are not objects at all (null, a string).
 * - A cluster-scoped object cannot have a namespaced owner (Kubernetes
 *   garbage collection treats such a reference as unresolvable): that
 *   reference triggers nothing rather than a key of no object.
 * - A delta whose object has no `metadata` (a broken stream: `deltas` never
 *   emits one) errors the output with an Error naming `mapToOwners` and the
 *   delta.
 */
export function mapToOwners({ group, kind, clusterScoped = false }: OwnerKind): OperatorFunction<Delta | ListMarker, ObjectKey> {
  if (typeof group !== 'string') throw new TypeError(`mapToOwners: group must be a string ('' for the core group), got ${typeof group}`);
  if (typeof kind !== 'string' || kind === '') throw new TypeError('mapToOwners: kind must be a non-empty string');
  const ownersOf = (object: KubeObject | undefined, into: ObjectKey[]): void => {
    const refs = object?.metadata.ownerReferences;
    if (!Array.isArray(refs)) return;
    const namespace = object?.metadata.namespace;
    for (const ref of refs as unknown[] as (OwnerReference | null | undefined)[]) {
      // A corrupt object's reference (null, a string) points at no owner, as in `byOwnerUid`.
      if (ref === null || typeof ref !== 'object') continue;
      if (ref.controller !== true || ref.kind !== kind || typeof ref.apiVersion !== 'string') continue;
      if (groupOf(ref.apiVersion) !== group || typeof ref.name !== 'string' || ref.name === '') continue;
      if (!clusterScoped && !namespace) continue;
      const key = clusterScoped ? ref.name : `${namespace}/${ref.name}`;
      if (!into.includes(key)) into.push(key);
    }
  };
  const controllersOf = (delta: Delta): ObjectKey[] => {
    const keys: ObjectKey[] = [];
    ownersOf(delta.object, keys);
    if (delta.type === 'Updated' || delta.type === 'Sync') ownersOf(delta.old, keys);
    return keys;
  };
  return mergeMap((event) => (isDelta(event) ? keysFor('mapToOwners', 'reading the owner references', controllersOf, event) : []));
}
