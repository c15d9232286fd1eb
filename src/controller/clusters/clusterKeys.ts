import { InvalidObjectError, splitKey, type ObjectKey } from '../../types.js';

/**
 * The key of an object of one of a multi-cluster controller's clusters:
 * `cluster/namespace/name`, or `cluster/name` for a cluster-scoped object.
 * A cluster's name holds no `/`, so the first `/` always ends it.
 */
export type ClusterKey = string;

/** Why a cluster's name is refused, or undefined when it is a good one. */
export function badClusterName(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return `a cluster needs a non-empty name, got ${JSON.stringify(name)}`;
  if (name.includes('/')) return `cluster name "${name}" holds a "/", which keys use to end the cluster's name`;
  return undefined;
}

/**
 * `cluster/namespace/name` (or `cluster/name`): the key of `key`
 * (`namespace/name` or `name`, as `objectKey` makes it) in `cluster`. The
 * reconcile of a controller with `clusters` gets such keys; `splitClusterKey`
 * takes them apart.
 */
export function clusterKey(cluster: string, key: ObjectKey): ClusterKey {
  const bad = badClusterName(cluster);
  if (bad !== undefined) throw new InvalidObjectError(`cannot make a cluster key: ${bad}`);
  splitKey(key);
  return `${cluster}/${key}`;
}

/**
 * The parts of a key of a multi-cluster controller: its `cluster`, the
 * object's `key` within that cluster (`namespace/name` or `name`), and
 * that key's `namespace` (undefined when cluster-scoped) and `name`.
 * Throws an `InvalidObjectError` naming a key that has no cluster.
 */
export function splitClusterKey(key: ClusterKey): { cluster: string; key: ObjectKey; namespace: string | undefined; name: string } {
  const slash = typeof key === 'string' ? key.indexOf('/') : -1;
  if (slash <= 0 || slash === key.length - 1) {
    throw new InvalidObjectError(`cannot split cluster key ${JSON.stringify(key)}: expected "cluster/namespace/name" or "cluster/name"`);
  }
  const inCluster = key.slice(slash + 1);
  let parts: { namespace: string | undefined; name: string };
  try {
    parts = splitKey(inCluster);
  } catch {
    throw new InvalidObjectError(`cannot split cluster key "${key}": expected "cluster/namespace/name" or "cluster/name"`);
  }
  return { cluster: key.slice(0, slash), key: inCluster, ...parts };
}
