import { type KubeObject, splitKey } from '../../types.js';
import type { Cluster, Reactor } from '../cluster.js';
import { foregroundFinalizer, orphanFinalizer } from '../writes/deletion.js';
import type { ChangeEvent, ObjectLocation, StoredObject } from '../storage/objectStore.js';
import type { ResourceType } from '../api/resourceType.js';

/**
 * Kube's garbage collector, over ownerReferences matched by uid:
 * - an object whose owners are all gone is deleted (in the background);
 *   one with some owners left loses its references to the missing ones;
 * - an owner deleted with `Foreground` (finalizer `foregroundDeletion`)
 *   has its dependents deleted, and goes once no dependent that has
 *   `blockOwnerDeletion: true` is left;
 * - an owner deleted with `Orphan` (finalizer `orphan`) has its references
 *   removed from its dependents, then goes.
 * Objects created with references to owners that do not exist are collected
 * on the next turn of the event loop, as kube's asynchronous collector would.
 */
const manager = 'kube-controller-manager';

function ownerUids(object: KubeObject | undefined): string[] {
  return (object?.metadata.ownerReferences ?? []).map((ref) => ref.uid).filter((uid) => typeof uid === 'string');
}

function setOwnerReferences(draft: KubeObject, refs: NonNullable<KubeObject['metadata']['ownerReferences']>): void {
  if (refs.length === 0) delete draft.metadata.ownerReferences;
  else draft.metadata.ownerReferences = refs;
}

export class GarbageCollector implements Reactor {
  constructor(private readonly cluster: Cluster) {}

  onChange(event: ChangeEvent): void {
    const object = event.current.object;
    const uid = object.metadata.uid;
    const here: ObjectLocation = { storageKey: event.storageKey, key: event.key };
    if (event.type === 'DELETED' && uid !== undefined) {
      for (const dependent of this.cluster.store.dependentsOf(uid)) this.cluster.enqueue(() => this.collect(dependent));
    }
    if (event.type !== 'DELETED' && object.metadata.deletionTimestamp !== undefined) {
      const finalizers = object.metadata.finalizers ?? [];
      if (finalizers.includes(foregroundFinalizer)) this.cluster.enqueue(() => this.foreground(here));
      if (finalizers.includes(orphanFinalizer)) this.cluster.enqueue(() => this.orphan(here));
    }
    // A dependent that changes or goes may be the last one a foreground deletion waits for.
    for (const owner of new Set([...ownerUids(event.prev?.object), ...ownerUids(object)])) {
      const at = this.cluster.store.byUidLookup(owner);
      if (at !== undefined) this.cluster.enqueue(() => this.foreground(at));
    }
    if (event.type === 'ADDED' && ownerUids(object).length > 0) this.cluster.defer(() => this.collect(here));
  }

  private lookup(at: ObjectLocation): { stored: StoredObject; namespace: string | undefined; name: string } | undefined {
    const stored = this.cluster.store.get(at.storageKey, at.key);
    if (stored === undefined) return undefined;
    const { namespace, name } = splitKey(at.key);
    return { stored, namespace, name };
  }

  private exists(uid: string): boolean {
    return this.cluster.store.byUidLookup(uid) !== undefined;
  }

  /** Deletes a dependent whose owners are all gone, or drops its references to the missing ones. */
  private collect(at: ObjectLocation): void {
    const found = this.lookup(at);
    const type = this.cluster.registry.typeForStorage(at.storageKey);
    if (found === undefined || type === undefined) return;
    const refs = found.stored.object.metadata.ownerReferences ?? [];
    if (refs.length === 0) return;
    const alive = refs.filter((ref) => this.exists(ref.uid));
    if (alive.length === refs.length) return;
    if (alive.length === 0) {
      if (found.stored.object.metadata.deletionTimestamp !== undefined) return;
      this.cluster.deleteNow(type, found.namespace, found.name, { propagationPolicy: 'Background' });
      return;
    }
    const keep = new Set(alive.map((ref) => ref.uid));
    this.cluster.mutate(type, found.stored, (draft) => {
      setOwnerReferences(draft, (draft.metadata.ownerReferences ?? []).filter((ref) => keep.has(ref.uid)));
    }, manager);
  }

  private dependents(uid: string): { at: ObjectLocation; stored: StoredObject; namespace: string | undefined; name: string }[] {
    const out = [];
    for (const at of this.cluster.store.dependentsOf(uid)) {
      const found = this.lookup(at);
      if (found !== undefined) out.push({ at, ...found });
    }
    return out;
  }

  /** The owner at `at` when it is being deleted and holds `finalizer`: what foreground and orphan deletion act on. */
  private deletingOwner(at: ObjectLocation, finalizer: string): { type: ResourceType; uid: string } | undefined {
    const owner = this.lookup(at);
    const type = this.cluster.registry.typeForStorage(at.storageKey);
    if (owner === undefined || type === undefined) return undefined;
    const meta = owner.stored.object.metadata;
    if (meta.deletionTimestamp === undefined || !(meta.finalizers ?? []).includes(finalizer)) return undefined;
    return { type, uid: meta.uid as string };
  }

  /** Removes `finalizer` from the object at `at`, which deletes it when it was the last one. */
  private release(at: ObjectLocation, type: ResourceType, finalizer: string): void {
    const current = this.lookup(at);
    if (current === undefined) return;
    this.cluster.mutate(type, current.stored, (draft) => {
      draft.metadata.finalizers = (draft.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    }, manager);
  }

  private foreground(at: ObjectLocation): void {
    const owner = this.deletingOwner(at, foregroundFinalizer);
    if (owner === undefined) return;
    const { type, uid } = owner;
    for (const dependent of this.dependents(uid)) {
      const dependentType = this.cluster.registry.typeForStorage(dependent.at.storageKey);
      if (dependentType === undefined || dependent.stored.object.metadata.deletionTimestamp !== undefined) continue;
      this.cluster.deleteNow(dependentType, dependent.namespace, dependent.name, { propagationPolicy: 'Foreground' });
    }
    const blocking = this.dependents(uid).filter((d) =>
      (d.stored.object.metadata.ownerReferences ?? []).some((ref) => ref.uid === uid && ref.blockOwnerDeletion === true),
    );
    if (blocking.length === 0) this.release(at, type, foregroundFinalizer);
  }

  private orphan(at: ObjectLocation): void {
    const owner = this.deletingOwner(at, orphanFinalizer);
    if (owner === undefined) return;
    const { type, uid } = owner;
    for (const dependent of this.dependents(uid)) {
      const dependentType = this.cluster.registry.typeForStorage(dependent.at.storageKey);
      if (dependentType === undefined) continue;
      this.cluster.mutate(dependentType, dependent.stored, (draft) => {
        setOwnerReferences(draft, (draft.metadata.ownerReferences ?? []).filter((ref) => ref.uid !== uid));
      }, manager);
    }
    this.release(at, type, orphanFinalizer);
  }
}
