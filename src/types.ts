/**
 * The core vocabulary shared by every part of rxkube: objects, keys, what a
 * source emits and what the deltas operator makes of it.
 */

/** An owner reference, as `metadata.ownerReferences[]` holds it. */
export interface OwnerReference {
  /** The owner's `apiVersion` (`apps/v1`). */
  apiVersion: string;
  /** The owner's kind (`Deployment`). */
  kind: string;
  /** The owner's name, in the same namespace as the object (or cluster-scoped). */
  name: string;
  /** The owner's uid: a new object of the same name is another owner. */
  uid: string;
  /** True on the one owner that controls the object (at most one per object). */
  controller?: boolean;
  /** With foreground deletion, the owner is not deleted before this object. */
  blockOwnerDeletion?: boolean;
}

/** The metadata fields a controller reads; the server may send more. */
export interface ObjectMeta {
  /** The object's name, unique per kind and namespace. */
  name?: string;
  /** A prefix the server completes into a unique `name` on create. */
  generateName?: string;
  /** The namespace; absent for cluster-scoped objects. */
  namespace?: string;
  /** Set by the server on create; tells apart two objects that had the same name. */
  uid?: string;
  /** The version of this state, set by the server on every write; an opaque string to compare for equality only. */
  resourceVersion?: string;
  /** Bumped by the server when the spec changes (not for metadata or status writes, in most kinds). */
  generation?: number;
  /** When the object was created (RFC 3339). */
  creationTimestamp?: string;
  /** Set when a delete was asked for while finalizers remain: the object goes once they are removed. */
  deletionTimestamp?: string;
  /** The grace period of the pending delete, in seconds. */
  deletionGracePeriodSeconds?: number;
  /** Labels: what label selectors match. */
  labels?: Record<string, string>;
  /** Annotations: free-form data of tools and controllers. */
  annotations?: Record<string, string>;
  /** The objects this one belongs to; garbage collection deletes it after them. */
  ownerReferences?: OwnerReference[];
  /** Keys that hold off deletion until the controllers that set them remove them. */
  finalizers?: string[];
  /** Server-side apply's record of which manager owns which field (`dropManagedFields` drops it from caches). */
  managedFields?: unknown[];
}

/**
 * Any Kubernetes object. The typed ones fit it: the built-in kinds of
 * `rxkube/kinds` (`Deployment`), a defined custom resource's objects
 * (`ObjectOf<typeof PodAutoscaler>`).
 */
export interface KubeObject {
  /** The group and version (`apps/v1`, `v1`); lists leave it out of their items. */
  apiVersion?: string;
  /** The kind (`Deployment`); lists leave it out of their items. */
  kind?: string;
  /** Name, namespace, labels and the other fields every object has. */
  metadata: ObjectMeta;
}

/**
 * Carries the type of the objects a resource or reference names, for the
 * type checker alone: nothing sets `objectType` at run time. A
 * `TypedResource<Deployment>` (such as `deployments` of `rxkube/kinds`) is
 * one, so `controller({ for: deployments })` types the reconcile's objects
 * as `Deployment`, and `client.get({ ...deployments, namespace, name })`
 * returns one.
 */
export interface Typed<T extends KubeObject> {
  /**
   * Never set: only its type counts, as `T`. A method, so that a resource
   * typed for one kind of object still passes where one typed for another
   * is asked for (method parameters are compared both ways), as untyped
   * resources always did.
   */
  objectType?(object: T): void;
}

/**
 * `"namespace/name"`, or `"name"` for a cluster-scoped object: the same keys as
 * client-go's `MetaNamespaceKeyFunc`, so keys read the same in logs of both.
 */
export type ObjectKey = string;

/** Thrown for an object that cannot be keyed or stored; the message names the fault. */
export class InvalidObjectError extends Error {
  /** Always `InvalidObjectError`. */
  override readonly name = 'InvalidObjectError';
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * The key of an object. Rejects objects without `metadata.name` rather than
 * keying them as `"undefined"`, which would merge unrelated objects into one
 * cache entry.
 */
export function objectKey(obj: KubeObject): ObjectKey {
  if (obj === null || typeof obj !== 'object') {
    throw new InvalidObjectError(`cannot key ${describe(obj)}: expected a Kubernetes object with metadata.name`);
  }
  const meta: unknown = (obj as { metadata?: unknown }).metadata;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) {
    throw new InvalidObjectError(`cannot key ${kindOf(obj)}object: metadata is missing (got ${describe(meta)})`);
  }
  const { name, namespace } = meta as { name?: unknown; namespace?: unknown };
  if (typeof name !== 'string' || name === '') {
    const where = typeof namespace === 'string' && namespace !== '' ? ` in namespace "${namespace}"` : '';
    throw new InvalidObjectError(
      `cannot key ${kindOf(obj)}object${where}: metadata.name is ${name === '' ? 'empty' : 'missing'}`,
    );
  }
  // A "/" would make the key ambiguous: cluster-scoped "a/b" and "b" in namespace "a" would
  // share one cache entry. Kubernetes never issues such names, so one is a corrupt object.
  if (name.includes('/')) throw new InvalidObjectError(`cannot key ${kindOf(obj)}"${name}": metadata.name contains "/"`);
  if (namespace === undefined || namespace === null || namespace === '') return name;
  if (typeof namespace !== 'string') {
    throw new InvalidObjectError(`cannot key ${kindOf(obj)}"${name}": metadata.namespace is ${describe(namespace)}, not a string`);
  }
  if (namespace.includes('/')) {
    throw new InvalidObjectError(`cannot key ${kindOf(obj)}"${name}": metadata.namespace "${namespace}" contains "/"`);
  }
  return joinKey(namespace, name);
}

/** The kind, as an error of `objectKey` names it; read only for an error (through a compact view, each read is a proxy's). */
function kindOf(obj: KubeObject): string {
  return typeof obj.kind === 'string' ? `${obj.kind} ` : '';
}

/**
 * The key of a name in a namespace (none, or '', for cluster-scoped): the
 * one place the key format is written. Unchecked, for callers that have
 * validated the name already (the embedded API server's storage);
 * `objectKey` checks, then calls it.
 */
export function joinKey(namespace: string | undefined, name: string): ObjectKey {
  if (namespace === undefined || namespace === '') return name;
  const key = `${namespace}/${name}`;
  // V8 makes a joined string as a pair of its parts; every Map that looks the
  // key up (deltas, the store, the workqueue) would then compare it part by
  // part. Reading one character makes it one flat string, once: `deltas()`
  // spent a tenth less of its time (a CPU profile's share, 10,000 pods).
  key.charCodeAt(0);
  return key;
}

/** Splits a key into its namespace (undefined for cluster-scoped) and name. */
export function splitKey(key: ObjectKey): { namespace: string | undefined; name: string } {
  if (typeof key !== 'string' || key === '') {
    throw new InvalidObjectError(`cannot split key ${JSON.stringify(key)}: expected "namespace/name" or "name"`);
  }
  const slash = key.indexOf('/');
  if (slash === -1) return { namespace: undefined, name: key };
  if (slash === 0 || slash === key.length - 1 || key.indexOf('/', slash + 1) !== -1) {
    throw new InvalidObjectError(`cannot split key "${key}": expected "namespace/name" or "name"`);
  }
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * What a source emits. A list is `Restart`, then one `Listed` per object as
 * its page arrives, then `Synced`; a watch follows with `Added`, `Modified`,
 * `Deleted` and `Bookmark`. A new `Restart` means a re-list: objects not
 * listed again before its `Synced` are gone.
 */
export type ListWatchEvent<T extends KubeObject = KubeObject> =
  | { type: 'Restart' }
  | { type: 'Listed'; object: T }
  | { type: 'Synced'; resourceVersion: string }
  | { type: 'Added' | 'Modified' | 'Deleted'; object: T }
  | { type: 'Bookmark'; resourceVersion: string };

/** What a delta says happened to its key: first seen, changed, gone, or re-sent unchanged by a resync. */
export type DeltaType = 'Added' | 'Updated' | 'Deleted' | 'Sync';

/** One change to one key, as the store applies it and controllers see it. */
export interface Delta<T extends KubeObject = KubeObject> {
  /** What happened to the key. */
  type: DeltaType;
  /** The object's key (`namespace/name` or `name`). */
  key: ObjectKey;
  /** The new object; for `Deleted`, the last state known. */
  object: T;
  /** For `Updated` and `Sync`: the object the store held before. */
  old?: T;
  /** Set on deltas that come from the first list, before the first `Synced`. */
  initial?: boolean;
  /**
   * Set on a `Deleted` found by a re-list rather than seen on the watch:
   * `object` is the last state known, not the final one (client-go's
   * `DeletedFinalStateUnknown`).
   */
  finalStateUnknown?: boolean;
}

/**
 * Markers that travel with deltas: `Synced` closes a list (the store is
 * complete), `Bookmark` advances the resourceVersion with no change.
 */
export interface ListMarker {
  /** `Synced` after a complete list, `Bookmark` for a watch bookmark. */
  type: 'Synced' | 'Bookmark';
  /** The resourceVersion the list or bookmark is at. */
  resourceVersion: string;
}

/** What the `deltas` operator emits. */
export type DeltaEvent<T extends KubeObject = KubeObject> = Delta<T> | ListMarker;

/** Narrows a `DeltaEvent` to a `Delta`. */
export function isDelta<E extends { type: string }>(event: E): event is Exclude<E, { type: ListMarker['type'] }> {
  return event.type !== 'Synced' && event.type !== 'Bookmark';
}

/**
 * Which collection a source lists and watches: a resource of an API group
 * version, in one namespace or across all of them.
 */
export interface ResourceRef {
  /** The API group; "" (or omitted) for the core group (`/api/v1`). */
  group?: string;
  /** The API version (`v1`). */
  version: string;
  /** The plural resource name, as in the URL: `pods`, `deployments`. */
  resource: string;
  /** One namespace; omitted for all namespaces or a cluster-scoped resource. */
  namespace?: string;
}

/** The collection's URL path: `/api/v1/namespaces/ns/pods`, `/apis/apps/v1/deployments`. */
export function collectionPath(ref: ResourceRef): string {
  const base = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  const ns = ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : '';
  return `${base}${ns}/${ref.resource}`;
}

/** How a resource reads in messages and metric labels: `deployments.apps` or `pods`. */
export function resourceName(ref: ResourceRef): string {
  return ref.group ? `${ref.resource}.${ref.group}` : ref.resource;
}

/** `pods in namespace "x"` or `pods in all namespaces`, for error messages. */
export function describeResource(ref: ResourceRef): string {
  return `${resourceName(ref)} ${ref.namespace ? `in namespace "${ref.namespace}"` : 'in all namespaces'}`;
}

/** One cause of a `Status` (a field that failed validation, a field manager conflict). */
export interface StatusCause {
  /** Why, in one word (`FieldValueInvalid`, `FieldManagerConflict`). */
  reason?: string;
  /** What is wrong, for people. */
  message?: string;
  /** The field concerned (`spec.replicas`). */
  field?: string;
}

/** `Status.details`: which object the error is about and, for some errors, why and when to retry. */
export interface StatusDetails {
  /** The name of the object concerned. */
  name?: string;
  /** The API group of the object concerned. */
  group?: string;
  /** The kind (or resource) of the object concerned. */
  kind?: string;
  /** The uid of the object concerned. */
  uid?: string;
  /** The individual causes, one per field for an `Invalid`. */
  causes?: StatusCause[];
  /** For 429 and some 5xx: seconds to wait before retrying. */
  retryAfterSeconds?: number;
}

/** The `Status` object an API server sends with an error. */
export interface KubeStatus {
  /** Always `v1`. */
  apiVersion?: string;
  /** Always `Status`. */
  kind?: string;
  /** `Failure` for errors (`Success` for some deletes). */
  status?: string;
  /** What went wrong, for people. */
  message?: string;
  /** The machine-readable cause: `NotFound`, `Conflict`, `AlreadyExists`, `Invalid`, `Expired`, ... */
  reason?: string;
  /** The object concerned, field causes, when to retry. */
  details?: StatusDetails;
  /** The HTTP status code. */
  code?: number;
}

/** One HTTP request to the API server, as a `RequestObserver` is told of it. */
export interface ObservedRequest {
  /** The HTTP method: `GET`, `POST`, `PUT`, `PATCH`, `DELETE`. */
  method: string;
  /** `host:port` of the server, as in its URL. */
  host: string;
  /**
   * Whether its latency counts (client-go's `rest_client_request_duration_seconds`):
   * true for a request read to its end, false for a watch, whose answer never ends.
   */
  timed: boolean;
}

/**
 * Told of every HTTP request rxkube sends to the API server, by the sinks'
 * transport and by list-watch sources alike, for client-go's
 * `rest_client_*` metrics: `request` is called as a request goes out, and
 * returns what to call once when it is answered: with the HTTP status, or
 * 0 when no answer came (refused, reset, aborted). A timed request is
 * answered once its body has been read; a watch once its head came.
 */
export interface RequestObserver {
  /** Called as a request goes out; call what it returns once, with the HTTP status or 0 when no answer came. */
  request(request: ObservedRequest): (code: number) => void;
}
