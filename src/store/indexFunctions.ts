import type { KubeObject } from '../types.js';

/**
 * Maps an object to the values it is indexed under. An object may sit under
 * several values (all its owners, say) or none.
 *
 * The type of a method, so that index functions of a resource typed for
 * its objects (`(pa: PodAutoscaler) => …`) pass where a resource of any
 * objects is taken (method parameters are compared both ways, as `Typed`'s).
 */
export type IndexFunc<T extends KubeObject = KubeObject> = { index(object: T): readonly string[] }['index'];

/** Index functions by index name. */
export type Indexers<T extends KubeObject = KubeObject> = Record<string, IndexFunc<T>>;

/** The name of the index every store keeps: objects by namespace ("" for cluster-scoped). */
export const NAMESPACE_INDEX = 'namespace';

/** Indexes an object under its namespace; cluster-scoped objects under "". */
export function byNamespace(object: KubeObject): readonly string[] {
  return [object.metadata.namespace ?? ''];
}

/**
 * Indexes an object under the uids of its owners, so a controller can find
 * what an owner owns without scanning the store.
 */
export function byOwnerUid(object: KubeObject): readonly string[] {
  const refs: unknown = object.metadata.ownerReferences;
  if (!Array.isArray(refs) || refs.length === 0) return [];
  // A reference without a string uid (a corrupt object) points at no owner.
  const uids: string[] = [];
  for (const ref of refs as unknown[]) {
    const uid = ref !== null && typeof ref === 'object' ? (ref as { uid?: unknown }).uid : undefined;
    if (typeof uid === 'string' && uid !== '') uids.push(uid);
  }
  return uids;
}

/** Indexes an object under the value of one of its labels; unlabelled objects under nothing. */
export function byLabel(label: string): IndexFunc {
  return (object) => {
    const value: unknown = object.metadata.labels?.[label];
    return typeof value === 'string' ? [value] : [];
  };
}
