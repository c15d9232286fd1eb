import { mergeMap, type OperatorFunction } from 'rxjs';
import { isDelta, type Delta, type KubeObject, type ListMarker, type ObjectKey } from '../types.js';

/** What a key mapping may return for one delta: one key, several, or none. */
export type KeysOf = Iterable<ObjectKey> | ObjectKey | undefined | null;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return 'an empty string';
  return typeof value === 'object' ? 'an object that is not iterable' : `${typeof value} ${String(value)}`;
}

function keysFrom(mapped: KeysOf, key: ObjectKey): ObjectKey[] {
  if (mapped === undefined || mapped === null) return [];
  if (typeof mapped === 'string' && mapped !== '') return [mapped];
  if (typeof mapped === 'object' && Symbol.iterator in mapped) {
    const keys = [...mapped];
    for (const k of keys) {
      if (typeof k !== 'string' || k === '') {
        throw new TypeError(`mapToKeys: the function gave ${describe(k)} among the keys for "${key}"; expected object keys`);
      }
    }
    return keys;
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
 * errors the stream with a message naming the delta's key, as does an
 * exception thrown by `fn`.
 */
export function mapToKeys<D extends Delta = Delta>(fn: (delta: D) => KeysOf): OperatorFunction<D | ListMarker, ObjectKey> {
  if (typeof fn !== 'function') throw new TypeError(`mapToKeys needs a function, got ${typeof fn}`);
  return mergeMap((event) => (isDelta(event) ? keysFrom(fn(event as D), (event as D).key) : []));
}

/** The owner kind whose keys `mapToOwners` produces. */
export interface OwnerKind {
  /** The API group of the owner: `'apps'`, `'example.com'`, or `''` for the core group. */
  group: string;
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
 *   or of another kind or group, trigger nothing.
 * - A cluster-scoped object cannot have a namespaced owner (Kubernetes
 *   garbage collection treats such a reference as unresolvable): that
 *   reference triggers nothing rather than a key of no object.
 */
export function mapToOwners({ group, kind, clusterScoped = false }: OwnerKind): OperatorFunction<Delta | ListMarker, ObjectKey> {
  if (typeof group !== 'string') throw new TypeError(`mapToOwners: group must be a string ('' for the core group), got ${typeof group}`);
  if (typeof kind !== 'string' || kind === '') throw new TypeError('mapToOwners: kind must be a non-empty string');
  const ownersOf = (object: KubeObject | undefined, into: ObjectKey[]): void => {
    const refs = object?.metadata.ownerReferences;
    if (!Array.isArray(refs)) return;
    const namespace = object?.metadata.namespace;
    for (const ref of refs) {
      if (ref.controller !== true || ref.kind !== kind || typeof ref.apiVersion !== 'string') continue;
      if (groupOf(ref.apiVersion) !== group || typeof ref.name !== 'string' || ref.name === '') continue;
      if (!clusterScoped && !namespace) continue;
      const key = clusterScoped ? ref.name : `${namespace}/${ref.name}`;
      if (!into.includes(key)) into.push(key);
    }
  };
  return mapToKeys((delta: Delta) => {
    const keys: ObjectKey[] = [];
    ownersOf(delta.object, keys);
    if (delta.type === 'Updated' || delta.type === 'Sync') ownersOf(delta.old, keys);
    return keys;
  });
}
