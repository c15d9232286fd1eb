import { joinKey, type KubeObject } from '../../types.js';
import { foregroundFinalizer, orphanFinalizer, deletionPlan, type DeleteOptions } from '../../apiserver/writes/deletion.js';
import { cloneJson, deepFreeze } from '../../util/json.js';
import { kubeTime } from '../../util/time.js';
import type { ResourceType } from '../../apiserver/api/resourceType.js';
import { alreadyExists, notFound } from '../../apiserver/api/statusError.js';
import { prepareCreate, prepareUpdate } from '../../apiserver/writes/writes.js';
import type { MemoryKinds } from './memoryKinds.js';

/** A committed change, as a watch reports it. */
export interface MemoryChange {
  type: 'Added' | 'Modified' | 'Deleted';
  /** The stored object after the change (for `Deleted`: its last state). Frozen. */
  object: KubeObject;
  /** The state before, for `Modified` and `Deleted`. */
  old?: KubeObject;
  resource: ResourceType;
}

export interface MemoryWriteOptions {
  manager: string;
  /** For `put`: identity the stated object already carries, kept instead of set anew. */
  keep?: { uid?: string; creationTimestamp?: string };
  subresource?: 'status';
  /** managedFields already computed (server-side apply). */
  managedFieldsDone?: boolean;
}

/** The key of an object inside one resource's map: `namespace/name`, or `name` when cluster-scoped. */
export function memoryKey(type: ResourceType, namespace: string | undefined, name: string): string {
  return joinKey(type.namespaced ? namespace : undefined, name);
}

/**
 * The state of an in-memory cluster: objects by resource and key, a
 * resourceVersion counter, and what every write does to an object. Writes
 * are those of the embedded API server (`prepareCreate`, `prepareUpdate`,
 * `deletionPlan`: server-set metadata, the `/status` split, `generation`
 * bumps, optimistic concurrency, no-op detection, managedFields), run
 * synchronously, with the time read from `now` (virtual time in tests) and
 * uids counted rather than random, so a test sees the same objects on
 * every run.
 *
 * What it leaves out (see `memoryClient` for the list): namespaces need not
 * exist, no admission or schema validation, and the garbage collector runs
 * inside the delete that triggers it.
 *
 * Errors are the API server's `ApiError`s (a Status with code and reason);
 * the client turns them into `KubeApiError`s. Stored objects are frozen;
 * callers get copies.
 */
export class MemoryCluster {
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private readonly listeners = new Set<(change: MemoryChange) => void>();
  private version = 0;
  private uids = 0;

  constructor(
    readonly kinds: MemoryKinds,
    private readonly now: () => number,
  ) {}

  /** The time of a write, as kube writes `metav1.Time`. */
  timestamp(): string {
    return kubeTime(this.now());
  }

  /** The last resourceVersion handed out. */
  get resourceVersion(): string {
    return String(this.version);
  }

  /** Tells `listener` of every committed change; returns the function that stops it. */
  listen(listener: (change: MemoryChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private bucket(type: ResourceType): Map<string, KubeObject> {
    let bucket = this.objects.get(type.storageKey);
    if (bucket === undefined) this.objects.set(type.storageKey, (bucket = new Map()));
    return bucket;
  }

  find(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(type.storageKey)?.get(memoryKey(type, namespace, name));
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const found = this.find(type, namespace, name);
    if (found === undefined) throw notFound({ group: type.group, resource: type.resource }, name);
    return found;
  }

  /** The stored objects of a resource (in one namespace, or all), by key order. */
  list(type: ResourceType, namespace?: string): KubeObject[] {
    const bucket = this.objects.get(type.storageKey);
    if (bucket === undefined) return [];
    return [...bucket.entries()]
      .filter(([, o]) => namespace === undefined || !type.namespaced || o.metadata.namespace === namespace)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => o);
  }

  private emit(change: MemoryChange): void {
    for (const listener of [...this.listeners]) listener(change);
  }

  private commit(type: ResourceType, object: KubeObject, old: KubeObject | undefined): KubeObject {
    this.version += 1;
    const stored = deepFreeze({ ...object, metadata: { ...object.metadata, resourceVersion: String(this.version) } });
    this.bucket(type).set(memoryKey(type, stored.metadata.namespace, stored.metadata.name as string), stored);
    this.emit(old === undefined ? { type: 'Added', object: stored, resource: type } : { type: 'Modified', object: stored, old, resource: type });
    return stored;
  }

  private drop(type: ResourceType, live: KubeObject): KubeObject {
    this.version += 1;
    const last = deepFreeze({ ...live, metadata: { ...live.metadata, resourceVersion: String(this.version) } });
    this.bucket(type).delete(memoryKey(type, live.metadata.namespace, live.metadata.name as string));
    this.emit({ type: 'Deleted', object: last, old: live, resource: type });
    this.collectDependents(live.metadata.uid);
    return last;
  }

  private nextUid(): string {
    this.uids += 1;
    return `00000000-0000-4000-8000-${this.uids.toString(16).padStart(12, '0')}`;
  }

  /** POST: a new object, with server-set metadata; 409 AlreadyExists when the name is taken. */
  create(type: ResourceType, body: unknown, options: MemoryWriteOptions): KubeObject {
    const namespace = (body as KubeObject | undefined)?.metadata?.namespace;
    const object = prepareCreate(type, body, type.namespaced ? namespace : undefined, { manager: options.manager, now: this.timestamp(), ...(options.managedFieldsDone ? { managedFieldsDone: true } : {}) });
    object.metadata.uid = options.keep?.uid || this.nextUid();
    if (options.keep?.creationTimestamp) object.metadata.creationTimestamp = options.keep.creationTimestamp;
    const name = object.metadata.name as string;
    if (this.find(type, object.metadata.namespace, name) !== undefined) {
      throw alreadyExists({ group: type.group, resource: type.resource }, name);
    }
    return this.commit(type, object, undefined);
  }

  /**
   * PUT (or the write behind a patch or an apply): a new state of an
   * existing object, guarded by its resourceVersion. A write that changes
   * nothing stores nothing and returns the live object. Removing the last
   * finalizer of an object being deleted deletes it.
   */
  update(type: ResourceType, body: unknown, options: MemoryWriteOptions): KubeObject {
    const meta = (body as KubeObject | undefined)?.metadata;
    const name = typeof meta?.name === 'string' ? meta.name : '';
    const live = this.get(type, meta?.namespace, name);
    const next = prepareUpdate(type, live, body, { namespace: type.namespaced ? live.metadata.namespace : undefined, name }, {
      manager: options.manager,
      now: this.timestamp(),
      ...(options.subresource ? { subresource: options.subresource } : {}),
      ...(options.managedFieldsDone ? { managedFieldsDone: true } : {}),
    });
    if (next === undefined) return live;
    const stored = this.commit(type, next, live);
    if (stored.metadata.deletionTimestamp !== undefined && (stored.metadata.finalizers ?? []).length === 0) return this.drop(type, stored);
    return stored;
  }

  /**
   * DELETE: removes the object at once, or, while it has finalizers, marks
   * it with `deletionTimestamp` and keeps it (a repeated delete changes
   * nothing). Preconditions that do not hold are 409 Conflict.
   */
  delete(type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions = {}): { object: KubeObject; deleted: boolean } {
    const live = this.get(type, namespace, name);
    const plan = deletionPlan(type, live, options, this.timestamp());
    if (plan.pending === undefined) return { object: this.drop(type, live), deleted: true };
    if (plan.unchanged) return { object: live, deleted: false };
    let stored = this.commit(type, plan.pending, live);
    // kube's garbage collector acts on these two finalizers; here it does so at once.
    for (const finalizer of [orphanFinalizer, foregroundFinalizer]) {
      if (!(stored.metadata.finalizers ?? []).includes(finalizer)) continue;
      for (const { type: dependentType, object } of this.dependentsOf(live.metadata.uid)) {
        if (finalizer === orphanFinalizer) this.dropOwners(dependentType, object, new Set([live.metadata.uid as string]));
        else if (object.metadata.deletionTimestamp === undefined) this.delete(dependentType, object.metadata.namespace, object.metadata.name as string, { propagationPolicy: 'Foreground' });
      }
      const current = this.find(type, namespace, name);
      if (current === undefined) return { object: stored, deleted: true };
      const draft = cloneJson(current);
      draft.metadata.finalizers = (draft.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      stored = this.update(type, draft, { manager: 'kube-controller-manager' });
    }
    const deleted = this.find(type, namespace, name) === undefined;
    return { object: stored, deleted };
  }

  /**
   * Stores an object as a test states it (`seed`): created when new, else
   * replaced without a precondition; its status is kept (written as
   * through `/status`), and so are a uid and creationTimestamp it carries.
   */
  put(type: ResourceType, body: KubeObject, manager: string): KubeObject {
    const name = body.metadata?.name ?? '';
    const live = this.find(type, body.metadata?.namespace, name);
    let stored: KubeObject;
    if (live === undefined) {
      const { uid, creationTimestamp } = body.metadata ?? {};
      stored = this.create(type, body, { manager, keep: { ...(uid ? { uid } : {}), ...(creationTimestamp ? { creationTimestamp } : {}) } });
    } else {
      stored = this.update(type, { ...body, metadata: { ...body.metadata, resourceVersion: live.metadata.resourceVersion } }, { manager });
    }
    const status = (body as { status?: unknown }).status;
    if (type.status && status !== undefined) {
      stored = this.update(type, { ...stored, status }, { manager, subresource: 'status' });
    }
    return stored;
  }

  /**
   * Sets or removes an object exactly as given, without a change event: for
   * a scripted watch, whose events say what the server holds. Keeps the
   * resourceVersion counter ahead of numeric versions it is given.
   */
  mirror(type: ResourceType, object: KubeObject, gone: boolean): void {
    const key = memoryKey(type, object.metadata.namespace, object.metadata.name as string);
    if (gone) {
      this.bucket(type).delete(key);
      return;
    }
    const rv = Number(object.metadata.resourceVersion);
    if (Number.isSafeInteger(rv) && rv > this.version) this.version = rv;
    this.bucket(type).set(key, deepFreeze(cloneJson(object)));
  }

  private *everything(): Generator<{ type: ResourceType; object: KubeObject }> {
    for (const bucket of this.objects.values()) {
      for (const object of bucket.values()) {
        const type = this.typeOf(object);
        if (type !== undefined) yield { type, object };
      }
    }
  }

  private typeOf(object: KubeObject): ResourceType | undefined {
    try {
      return this.kinds.byKind(object.apiVersion ?? '', object.kind ?? '');
    } catch {
      return undefined;
    }
  }

  private dependentsOf(uid: string | undefined): { type: ResourceType; object: KubeObject }[] {
    if (uid === undefined) return [];
    return [...this.everything()].filter(({ object }) => (object.metadata.ownerReferences ?? []).some((ref) => ref.uid === uid));
  }

  private exists(uid: string): boolean {
    for (const { object } of this.everything()) if (object.metadata.uid === uid) return true;
    return false;
  }

  private dropOwners(type: ResourceType, object: KubeObject, uids: ReadonlySet<string>): void {
    const draft = cloneJson(object);
    const refs = (draft.metadata.ownerReferences ?? []).filter((ref) => !uids.has(ref.uid));
    if (refs.length === 0) delete draft.metadata.ownerReferences;
    else draft.metadata.ownerReferences = refs;
    this.update(type, draft, { manager: 'kube-controller-manager' });
  }

  /** The garbage collector: dependents whose owners are all gone are deleted; others lose references to the missing ones. */
  private collectDependents(uid: string | undefined): void {
    for (const { type, object } of this.dependentsOf(uid)) {
      const current = this.find(type, object.metadata.namespace, object.metadata.name as string);
      if (current === undefined) continue;
      const refs = current.metadata.ownerReferences ?? [];
      const dead = new Set(refs.filter((ref) => !this.exists(ref.uid)).map((ref) => ref.uid));
      if (dead.size === 0) continue;
      if (dead.size < refs.length) this.dropOwners(type, current, dead);
      else if (current.metadata.deletionTimestamp === undefined) {
        this.delete(type, current.metadata.namespace, current.metadata.name as string, { propagationPolicy: 'Background' });
      }
    }
  }
}

