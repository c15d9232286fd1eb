import { type KubeObject, joinKey } from '../types.js';
import type { Logger } from '../logger.js';
import { toStorage, toVersion } from './api/conversion.js';
import { crdValidationErrors } from './api/crd.js';
import { dataSizeErrors } from './api/dataFields.js';
import { CrdController } from './controllers/crdController.js';
import { deletionPlan, type DeleteOptions } from './writes/deletion.js';
import { FieldsV1Cache } from './writes/fieldsV1Cache.js';
import { GarbageCollector } from './controllers/garbageCollector.js';
import { labelSelectorFromObject, type LabelSelectorObject } from './selectors/labelSelector.js';
import { cloneJson, deepFreeze } from '../util/json.js';
import { NamespaceController } from './controllers/namespaceController.js';
import { kubeTime } from '../util/time.js';
import { ObjectStore, StoredObject, type ChangeEvent } from './storage/objectStore.js';
import { ResourceRegistry } from './api/registry.js';
import { ServiceAllocator } from './defaults/serviceAllocator.js';
import { SelectorError } from './selectors/selectorError.js';
import { apiVersionOf, type ResourceType } from './api/resourceType.js';
import { alreadyExists, ApiError, forbidden, invalid, notFound } from './api/statusError.js';
import { recordManagedFields } from './writes/serverSideApply.js';
import { roleRefUpdateErrors } from './auth/roleRefUpdate.js';
import { WatchHub } from './watch/watchHub.js';
import { contentChanged, prepareCreate, prepareUpdate, type WriteContext } from './writes/writes.js';

const servicesKey = '/services';

/** The namespaces kube refuses to delete. */
const immortalNamespaces = new Set(['default', 'kube-system', 'kube-public']);

/**
 * The state of the embedded cluster and every write to it. Each public
 * write runs to completion, then lets the controllers that kube runs beside
 * its API server (garbage collector, namespace and CRD lifecycle) react to
 * what changed, so a response is sent once the cluster has settled.
 */

export interface WriteOptions extends WriteContext {
  dryRun?: boolean;
  /** The requester's own check of what it stores (kube's RBAC storage refusing escalation), run before validation. */
  guard?: WriteGuard;
}

/** Throws when the requester may not store `object` (`live`: the stored object, on an update). */
export type WriteGuard = (type: ResourceType, object: KubeObject, live: KubeObject | undefined) => void;

/** How a cluster keeps time and makes identities, and how strict it is about namespaces. */
export interface ClusterOptions {
  /** Changes kept for watch resume and consistent paging (see `ObjectStore`). */
  historyWindow: number;
  logger: Logger;
  /** The clock of every timestamp it writes, ms since the epoch (default `Date.now`; virtual time in marble tests). */
  now?: () => number;
  /** Makes the uid of each created object (default random UUIDs; counted ones give reproducible tests). */
  uid?: () => string;
  /**
   * Runs follow-up work on a later turn, as kube's asynchronous controllers
   * do (default `setImmediate`); returns how to cancel it.
   */
  later?: (run: () => void) => () => void;
  /** Whether a namespaced object needs its Namespace to exist, as kube's NamespaceLifecycle admission says (default true). */
  requireNamespaces?: boolean;
  /** The IPv4 CIDR Services' cluster IPs come from (default `10.0.0.0/24`, as kube-apiserver's `--service-cluster-ip-range`). */
  serviceCidr?: string;
}

function onNextTurn(run: () => void): () => void {
  const immediate = setImmediate(run);
  return () => clearImmediate(immediate);
}

/** The result of a write, as the request's version shows it. */
export interface WriteResult {
  stored: StoredObject;
  /** True when the object was created (201). */
  created?: boolean;
}

export interface DeleteResult {
  stored: StoredObject;
  /** True when the object is gone; false when it waits for finalizers. */
  deleted: boolean;
}

/** Something that reacts to committed changes by queueing follow-up writes. */
export interface Reactor {
  onChange(event: ChangeEvent): void;
}

const maxSettleSteps = 1_000_000;

export class Cluster {
  readonly registry = new ResourceRegistry();
  readonly store: ObjectStore;
  readonly hub = new WatchHub();
  /** The managedFields of stored objects, decoded and encoded once (see fieldsV1Cache.ts). */
  readonly fieldsCache = new FieldsV1Cache();
  /** The cluster IPs and node ports of the stored Services. */
  readonly services: ServiceAllocator;
  private readonly queue: (() => void)[] = [];
  private settling = false;
  private readonly reactors: Reactor[];
  private cancelDeferred: (() => void) | undefined;
  private readonly deferredTasks: (() => void)[] = [];
  private readonly logger: Logger;
  /** The cluster's clock, ms since the epoch. */
  readonly now: () => number;
  private readonly uid: (() => string) | undefined;
  private readonly later: (run: () => void) => () => void;
  private readonly requireNamespaces: boolean;

  constructor(options: ClusterOptions) {
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.uid = options.uid;
    this.later = options.later ?? onNextTurn;
    this.requireNamespaces = options.requireNamespaces ?? true;
    this.store = new ObjectStore(options.historyWindow);
    this.services = new ServiceAllocator(options.serviceCidr === undefined ? {} : { serviceCidr: options.serviceCidr });
    this.reactors = [new GarbageCollector(this), new NamespaceController(this), new CrdController(this)];
    this.store.subscribe((event) => {
      if (event.storageKey === servicesKey) this.services.observe(event.prev?.object, event.type === 'DELETED' ? undefined : event.current.object);
      this.hub.dispatch(event);
      for (const reactor of this.reactors) reactor.onChange(event);
    });
  }

  /** Queues a follow-up write, run before the current request answers. */
  enqueue(task: () => void): void {
    this.queue.push(task);
  }

  /** Queues a follow-up write for the next turn of the event loop (kube's controllers are asynchronous). */
  defer(task: () => void): void {
    this.deferredTasks.push(task);
    this.cancelDeferred ??= this.later(() => {
      this.cancelDeferred = undefined;
      const tasks = this.deferredTasks.splice(0);
      for (const t of tasks) this.enqueue(t);
      this.settle();
    });
  }

  /** Runs queued follow-ups until none is left. */
  settle(): void {
    if (this.settling) return;
    this.settling = true;
    try {
      for (let steps = 0; this.queue.length > 0; steps++) {
        if (steps >= maxSettleSteps) {
          this.logger.error({ pending: this.queue.length }, 'apiserver: controllers did not settle; dropping follow-up work');
          this.queue.length = 0;
          break;
        }
        const task = this.queue.shift() as () => void;
        try {
          task();
        } catch (error) {
          // A follow-up can race with the object it acts on (already gone, changed): kube's controllers retry; ours re-run on the next change.
          if (!(error instanceof ApiError)) this.logger.error({ err: error }, 'apiserver: controller step failed');
        }
      }
    } finally {
      this.settling = false;
    }
  }

  close(): void {
    this.cancelDeferred?.();
    this.cancelDeferred = undefined;
    this.deferredTasks.length = 0;
    this.queue.length = 0;
  }

  private settled<T>(op: () => T): T {
    const result = op();
    this.settle();
    return result;
  }

  gr(type: ResourceType): { group: string; resource: string } {
    return { group: type.group, resource: type.resource };
  }

  /** The stored object, or 404 NotFound. */
  get(type: ResourceType, namespace: string | undefined, name: string): StoredObject {
    const found = this.store.get(type.storageKey, joinKey(type.namespaced ? namespace : undefined, name));
    if (found === undefined) throw notFound(this.gr(type), name);
    return found;
  }

  find(type: ResourceType, namespace: string | undefined, name: string): StoredObject | undefined {
    return this.store.get(type.storageKey, joinKey(type.namespaced ? namespace : undefined, name));
  }

  /** The stored objects of a resource, in one namespace when given, in storage order and in `type`'s version; frozen. */
  objects(type: ResourceType, namespace?: string): KubeObject[] {
    const { keys, objects } = this.store.current(type.storageKey);
    const prefix = type.namespaced && namespace !== undefined ? `${namespace}/` : undefined;
    const out: KubeObject[] = [];
    for (const key of keys) {
      if (prefix !== undefined && !key.startsWith(prefix)) continue;
      out.push(deepFreeze(toVersion(type, (objects.get(key) as StoredObject).object)));
    }
    return out;
  }

  namespaceType(): ResourceType {
    return this.registry.lookup('', 'v1', 'namespaces') as ResourceType;
  }

  /** The time of a write, as kube writes `metav1.Time`. */
  timestamp(): string {
    return kubeTime(this.now());
  }

  private checkNamespace(type: ResourceType, namespace: string | undefined): void {
    if (!type.namespaced || namespace === undefined || !this.requireNamespaces) return;
    const ns = this.find(this.namespaceType(), undefined, namespace);
    if (ns === undefined) throw notFound({ group: '', resource: 'namespaces' }, namespace);
    if (ns.object.metadata.deletionTimestamp !== undefined) {
      const error = forbidden(
        this.gr(type),
        '',
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      );
      error.details?.causes?.push({ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' });
      throw error;
    }
  }

  private checkCrdActive(type: ResourceType): void {
    if (type.builtin) return;
    const crdType = this.registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions') as ResourceType;
    const crd = this.find(crdType, undefined, `${type.resource}.${type.group}`);
    if (crd?.object.metadata.deletionTimestamp !== undefined) {
      throw new ApiError(405, 'MethodNotAllowed', 'create not allowed while custom resource definition is terminating');
    }
  }

  /** What the service registry allocates (cluster IPs, node ports) for a Service about to be stored. */
  private allocate(type: ResourceType, object: KubeObject, live?: KubeObject): boolean {
    if (type.storageKey !== servicesKey || Object.isFrozen((object as unknown as { spec?: unknown }).spec)) return false;
    this.services.allocate(object, live);
    // An update that only left out what was allocated (a PUT of the manifest) is then a no-op, as kube finds it.
    return true;
  }

  private validate(type: ResourceType, object: KubeObject, live?: KubeObject): void {
    const errors = [...dataSizeErrors(type, object), ...(live === undefined ? [] : roleRefUpdateErrors(type, object, live))];
    if (errors.length > 0) throw invalid({ group: type.group, kind: type.kind }, object.metadata.name ?? '', errors);
    if (type.builtin && type.group === 'apiextensions.k8s.io') {
      const errors = crdValidationErrors(object);
      if (errors.length > 0) throw invalid({ group: type.group, kind: type.kind }, object.metadata.name ?? '', errors);
    }
    if (type.builtin && type.scale !== undefined) {
      // The /scale subresource reports this selector: one that is no label selector is never stored, as in kube.
      const selector = (object as unknown as { spec?: { selector?: unknown } }).spec?.selector;
      if (selector === undefined || selector === null) return;
      try {
        labelSelectorFromObject(selector as LabelSelectorObject);
      } catch (error) {
        if (!(error instanceof SelectorError)) throw error;
        throw invalid({ group: type.group, kind: type.kind }, object.metadata.name ?? '', [
          { field: 'spec.selector', type: 'Invalid value', value: selector, detail: error.reason },
        ]);
      }
    }
  }

  private toStored(type: ResourceType, object: KubeObject): KubeObject {
    return toStorage(type, object, this.registry.storageApiVersion(type.storageKey) ?? apiVersionOf(type));
  }

  private dryRunResult(object: KubeObject): StoredObject {
    return new StoredObject(JSON.stringify(object), this.store.resourceVersion, object);
  }

  create(type: ResourceType, namespace: string | undefined, body: unknown, options: WriteOptions): WriteResult {
    return this.settled(() => this.createNow(type, namespace, body, options));
  }

  createNow(type: ResourceType, namespace: string | undefined, body: unknown, options: WriteOptions): WriteResult {
    const uid = options.uid ?? this.uid?.();
    const object = prepareCreate(type, body, type.namespaced ? namespace : undefined, { ...options, ...(uid !== undefined ? { uid } : {}), fieldsCache: this.fieldsCache });
    options.guard?.(type, object, undefined);
    this.allocate(type, object);
    this.validate(type, object);
    const name = object.metadata.name as string;
    this.checkNamespace(type, object.metadata.namespace);
    this.checkCrdActive(type);
    const key = joinKey(object.metadata.namespace, name);
    if (this.store.get(type.storageKey, key) !== undefined) throw alreadyExists(this.gr(type), name);
    if (options.dryRun) return { stored: this.dryRunResult(object), created: true };
    const event = this.store.commit(type.storageKey, key, this.toStored(type, object));
    return { stored: event.current, created: true };
  }

  /**
   * Replaces an object. `body` is in `type`'s version. An update that
   * removes the last finalizer of an object being deleted deletes it.
   */
  update(type: ResourceType, namespace: string | undefined, name: string, body: unknown, options: WriteOptions): WriteResult {
    return this.settled(() => this.updateNow(type, namespace, name, body, options));
  }

  updateNow(type: ResourceType, namespace: string | undefined, name: string, body: unknown, options: WriteOptions): WriteResult {
    const live = this.get(type, namespace, name);
    const liveObject = toVersion(type, live.object);
    const next = prepareUpdate(type, liveObject, body, { namespace: type.namespaced ? namespace : undefined, name }, { ...options, fieldsCache: this.fieldsCache });
    if (next === undefined) return { stored: live };
    options.guard?.(type, next, liveObject);
    if (this.allocate(type, next, liveObject) && !contentChanged(liveObject, next)) return { stored: live };
    this.validate(type, next, liveObject);
    if (options.dryRun) return { stored: this.dryRunResult(next) };
    return { stored: this.commitUpdate(type, live, this.toStored(type, next)) };
  }

  /** Stores a new state of an existing object; one being deleted with no finalizer left goes away. */
  commitUpdate(type: ResourceType, live: StoredObject, next: KubeObject): StoredObject {
    const key = joinKey(live.object.metadata.namespace, live.object.metadata.name as string);
    const finalizing = next.metadata.deletionTimestamp !== undefined && (next.metadata.finalizers ?? []).length === 0 && !namespaceHeld(next);
    if (finalizing) {
      this.store.commit(type.storageKey, key, next);
      return this.store.commit(type.storageKey, key, undefined).current;
    }
    return this.store.commit(type.storageKey, key, next).current;
  }

  /** Writes a change computed from the live object (controllers' read-modify-write, no conflict possible). */
  mutate(type: ResourceType, live: StoredObject, change: (draft: KubeObject) => void, manager: string): StoredObject {
    const draft = cloneJson(toVersion(type, live.object));
    change(draft);
    const next = prepareUpdate(type, toVersion(type, live.object), draft, { namespace: live.object.metadata.namespace, name: live.object.metadata.name as string }, {
      manager,
      now: this.timestamp(),
      ownsBody: true,
      fieldsCache: this.fieldsCache,
    });
    if (next === undefined) return live;
    return this.commitUpdate(type, live, this.toStored(type, next));
  }

  /** Like `mutate`, through the /status subresource rules. */
  mutateStatus(type: ResourceType, live: StoredObject, status: unknown, manager: string): StoredObject {
    const liveObject = toVersion(type, live.object);
    const draft = { ...liveObject, metadata: { ...liveObject.metadata }, status };
    const next = prepareUpdate(type, liveObject, draft, { namespace: live.object.metadata.namespace, name: live.object.metadata.name as string }, {
      manager,
      now: this.timestamp(),
      subresource: 'status',
      ownsBody: true,
      fieldsCache: this.fieldsCache,
    });
    if (next === undefined) return live;
    return this.commitUpdate(type, live, this.toStored(type, next));
  }

  /** The `/finalize` subresource of Namespaces: the only way to change spec.finalizers. */
  finalizeNamespace(live: StoredObject, finalizers: readonly string[], manager: string): StoredObject {
    const next = cloneJson(live.object) as KubeObject & { spec?: { finalizers?: string[] } };
    const spec = { ...(next.spec ?? {}) };
    if (finalizers.length > 0) spec.finalizers = [...finalizers];
    else delete spec.finalizers;
    next.spec = spec;
    if (!contentChanged(live.object, next)) return live;
    const now = this.timestamp();
    const recorded = recordManagedFields({ before: live.object, after: next, manager, operation: 'Update', subresource: 'finalize', now, fieldsCache: this.fieldsCache });
    return this.commitUpdate(this.namespaceType(), live, recorded as KubeObject);
  }

  delete(type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions): DeleteResult {
    return this.settled(() => this.deleteNow(type, namespace, name, options));
  }

  deleteNow(type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions): DeleteResult {
    const live = this.get(type, namespace, name);
    if (type.builtin && type.group === '' && type.resource === 'namespaces' && immortalNamespaces.has(name)) {
      // kube's NamespaceLifecycle admission keeps these for ever.
      throw forbidden(this.gr(type), name, 'this namespace may not be deleted');
    }
    const plan = deletionPlan(type, live.object, options, this.timestamp());
    if (options.dryRun) return { stored: plan.pending === undefined ? live : this.dryRunResult(plan.pending), deleted: plan.pending === undefined };
    const key = joinKey(live.object.metadata.namespace, name);
    if (plan.pending === undefined) {
      return { stored: this.store.commit(type.storageKey, key, undefined).current, deleted: true };
    }
    if (plan.unchanged) return { stored: live, deleted: false };
    return { stored: this.store.commit(type.storageKey, key, plan.pending).current, deleted: false };
  }

  /**
   * Server-side writes for tests and benchmarks: create, or replace whatever
   * is stored (no precondition), status included. With `keepIdentity`, a new
   * object keeps the uid and creationTimestamp the body carries (a test
   * seeding owners and their dependents).
   */
  put(type: ResourceType, body: KubeObject, manager: string, options: { keepIdentity?: boolean; ownWrite?: boolean } = {}): StoredObject {
    return this.settled(() => {
      const namespace = type.namespaced ? (body.metadata?.namespace ?? 'default') : undefined;
      const name = body.metadata?.name;
      const live = name === undefined ? undefined : this.find(type, namespace, name);
      const write: WriteOptions = { manager, now: this.timestamp(), ...(options.ownWrite === true ? { ownWrite: true } : {}) };
      let stored: StoredObject;
      if (live === undefined) {
        const { uid, creationTimestamp } = options.keepIdentity ? (body.metadata ?? {}) : {};
        stored = this.createNow(type, namespace, body, { ...write, ...(uid ? { uid } : {}), ...(creationTimestamp ? { creationTimestamp } : {}) }).stored;
      }
      else {
        const unconditional = { ...body, metadata: { ...body.metadata, resourceVersion: live.object.metadata.resourceVersion } };
        stored = this.updateNow(type, namespace, name as string, unconditional, write).stored;
      }
      const status = (body as unknown as { status?: unknown }).status;
      const current = this.find(type, namespace, name ?? (stored.object.metadata.name as string));
      if (type.status && status !== undefined && current !== undefined) stored = this.mutateStatus(type, current, status, manager);
      return stored;
    });
  }
}

/** A Namespace stays until its spec.finalizers (the namespace controller's) are gone too. */
export function namespaceHeld(object: KubeObject): boolean {
  if (object.kind !== 'Namespace' || object.apiVersion !== 'v1') return false;
  const finalizers = (object as unknown as { spec?: { finalizers?: unknown } }).spec?.finalizers;
  return Array.isArray(finalizers) && finalizers.length > 0;
}
