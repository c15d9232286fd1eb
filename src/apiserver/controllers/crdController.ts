import { type KubeObject, splitKey } from '../../types.js';
import type { Cluster, Reactor } from '../cluster.js';
import { acceptedNames, crdResourceTypes, crdSpec, storageVersion } from '../api/crd.js';
import { crdCleanupFinalizer } from '../writes/deletion.js';
import { jsonEqual } from '../../util/json.js';
import type { ChangeEvent } from '../storage/objectStore.js';
import type { ResourceType } from '../api/resourceType.js';

/**
 * What kube's apiextensions controllers do with a CRD: serve its versions
 * as soon as it is stored, report `NamesAccepted` and `Established` in its
 * status, and when it is deleted, delete all its objects before letting it
 * go (finalizer `customresourcecleanup.apiextensions.k8s.io`), then stop
 * serving it and end its watches.
 */
const manager = 'kube-apiserver';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

export class CrdController implements Reactor {
  constructor(private readonly cluster: Cluster) {}

  private crdType(): ResourceType {
    return this.cluster.registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions') as ResourceType;
  }

  onChange(event: ChangeEvent): void {
    const crdType = this.crdType();
    if (event.storageKey === crdType.storageKey) {
      const name = event.key;
      if (event.type === 'DELETED') this.stopServing(name);
      else {
        // Served at once, like kube's discovery after the CRD write returns; status follows.
        this.serve(event.current.object);
        this.cluster.enqueue(() => this.sync(name));
      }
      return;
    }
    if (event.type === 'DELETED') {
      const type = this.cluster.registry.typeForStorage(event.storageKey);
      if (type === undefined || type.builtin) return;
      const crdName = `${type.resource}.${type.group}`;
      const crd = this.cluster.store.get(crdType.storageKey, crdName);
      if (crd?.object.metadata.deletionTimestamp !== undefined) this.cluster.enqueue(() => this.cleanUp(crdName));
    }
  }

  private serve(crd: KubeObject): void {
    const spec = crdSpec(crd);
    const version = storageVersion(spec);
    this.cluster.registry.setCrdTypes(
      crd.metadata.name as string,
      crdResourceTypes(crd, this.cluster.registry.crdTypes(crd.metadata.name as string)),
      version === undefined ? undefined : `${spec.group}/${version}`,
    );
  }

  private stopServing(name: string): void {
    const served = this.cluster.registry.crdTypes(name);
    this.cluster.registry.setCrdTypes(name, [], undefined);
    const storageKey = served[0]?.storageKey;
    if (storageKey !== undefined) for (const watcher of this.cluster.hub.of(storageKey)) watcher.stream.end();
  }

  private sync(name: string): void {
    const crdType = this.crdType();
    const live = this.cluster.store.get(crdType.storageKey, name);
    if (live === undefined) return;
    const status = this.desiredStatus(live.object);
    const stored = this.cluster.mutateStatus(crdType, live, status, manager);
    if (stored.object.metadata.deletionTimestamp !== undefined) this.cluster.enqueue(() => this.cleanUp(name));
  }

  private desiredStatus(crd: KubeObject): Record<string, unknown> {
    const spec = crdSpec(crd);
    const current = ((crd as unknown as { status?: Record<string, unknown> }).status ?? {}) as {
      conditions?: Condition[];
      storedVersions?: string[];
    };
    const previous = new Map((current.conditions ?? []).map((c) => [c.type, c]));
    const now = this.cluster.timestamp();
    const condition = (c: Condition): Condition => {
      const before = previous.get(c.type);
      const same = before !== undefined && before.status === c.status && before.reason === c.reason && before.message === c.message;
      return { ...c, lastTransitionTime: same ? before.lastTransitionTime : now };
    };
    const conditions = [
      condition({ type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }),
      condition({ type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }),
    ];
    if (crd.metadata.deletionTimestamp !== undefined) {
      conditions.push(condition({ type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }));
    }
    const storedVersions = [...(current.storedVersions ?? [])];
    const version = storageVersion(spec);
    if (version !== undefined && !storedVersions.includes(version)) storedVersions.push(version);
    const status = { acceptedNames: acceptedNames(spec), conditions, storedVersions };
    return jsonEqual(status, current) ? (current as Record<string, unknown>) : status;
  }

  private cleanUp(name: string): void {
    const crdType = this.crdType();
    const crd = this.cluster.store.get(crdType.storageKey, name);
    if (crd === undefined || crd.object.metadata.deletionTimestamp === undefined) return;
    if (!(crd.object.metadata.finalizers ?? []).includes(crdCleanupFinalizer)) return;
    const type = this.cluster.registry.crdTypes(name)[0];
    if (type !== undefined) {
      for (const key of [...this.cluster.store.current(type.storageKey).keys]) {
        const stored = this.cluster.store.get(type.storageKey, key);
        if (stored === undefined || stored.object.metadata.deletionTimestamp !== undefined) continue;
        const { namespace, name: objectName } = splitKey(key);
        this.cluster.deleteNow(type, namespace, objectName, { propagationPolicy: 'Background' });
      }
      if (this.cluster.store.count(type.storageKey) > 0) return;
    }
    const current = this.cluster.store.get(crdType.storageKey, name);
    if (current === undefined) return;
    this.cluster.mutate(crdType, current, (draft) => {
      draft.metadata.finalizers = (draft.metadata.finalizers ?? []).filter((f) => f !== crdCleanupFinalizer);
    }, manager);
  }
}
