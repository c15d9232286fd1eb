/** Storage keys of objects: `namespace/name`, or `name` for cluster-scoped ones (sorted as etcd sorts its keys). */
export function storeKey(namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`;
}

export function splitStoreKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash === -1 ? { namespace: undefined, name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
