import type { Cluster, Reactor } from '../cluster.js';
import type { ChangeEvent } from '../storage/objectStore.js';
import { splitKey } from '../../types.js';

/**
 * Kube's namespace lifecycle: deleting a Namespace marks it Terminating
 * (it holds the `kubernetes` finalizer in spec.finalizers), deletes
 * everything in it, and once nothing is left (objects with finalizers hold
 * it) finalizes it, which removes it.
 */
const manager = 'kube-controller-manager';
const namespaceFinalizer = 'kubernetes';

export class NamespaceController implements Reactor {
  constructor(private readonly cluster: Cluster) {}

  private get namespacesKey(): string {
    return this.cluster.namespaceType().storageKey;
  }

  onChange(event: ChangeEvent): void {
    if (event.storageKey === this.namespacesKey) {
      if (event.type !== 'DELETED' && event.current.object.metadata.deletionTimestamp !== undefined) {
        const name = event.key;
        this.cluster.enqueue(() => this.clean(name));
      }
      return;
    }
    if (event.type === 'DELETED' && event.namespace !== undefined) {
      const ns = this.cluster.store.get(this.namespacesKey, event.namespace);
      if (ns?.object.metadata.deletionTimestamp !== undefined) {
        const name = event.namespace;
        this.cluster.enqueue(() => this.clean(name));
      }
    }
  }

  private clean(namespace: string): void {
    const ns = this.cluster.store.get(this.namespacesKey, namespace);
    if (ns === undefined || ns.object.metadata.deletionTimestamp === undefined) return;
    let remaining = 0;
    for (const storageKey of this.cluster.store.storageKeys()) {
      const type = this.cluster.registry.typeForStorage(storageKey);
      if (type === undefined || !type.namespaced) continue;
      for (const key of this.cluster.store.keysIn(storageKey, namespace)) {
        const stored = this.cluster.store.get(storageKey, key);
        if (stored === undefined) continue;
        if (stored.object.metadata.deletionTimestamp === undefined) {
          this.cluster.deleteNow(type, namespace, splitKey(key).name, { propagationPolicy: 'Background' });
        }
        if (this.cluster.store.get(storageKey, key) !== undefined) remaining += 1;
      }
    }
    if (remaining > 0) return;
    const current = this.cluster.store.get(this.namespacesKey, namespace);
    if (current === undefined) return;
    const spec = (current.object as unknown as { spec?: { finalizers?: string[] } }).spec ?? {};
    if (!(spec.finalizers ?? []).includes(namespaceFinalizer)) return;
    this.cluster.finalizeNamespace(current, (spec.finalizers ?? []).filter((f) => f !== namespaceFinalizer), manager);
  }
}
