import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../types.js';
import { cloneJson, isPlainObject, jsonEqual } from '../../util/json.js';
import { shareUnchanged } from './shareUnchanged.js';
import { jsonKind } from './jsonValue.js';
import { applyCrdSchema, crdVersionSchema } from '../api/crdSchema.js';
import { dropGoEmptyFields, pruneUnknownFields } from '../api/builtinFields.js';
import { byteFieldError, mergeStringData } from '../api/dataFields.js';
import { defaultBuiltin } from '../defaults/builtinDefaults.js';
import type { FieldsV1Cache } from './fieldsV1Cache.js';
import { generateName, metadataErrors } from './objectMeta.js';
import { apiVersionOf, type ResourceType } from '../api/resourceType.js';
import { recordManagedFields } from './serverSideApply.js';
import { TypedValueError } from './structuredMerge.js';
import { badRequest, conflict, invalid, type FieldError } from '../api/statusError.js';

/**
 * What create and update do to an object before it is stored, following the
 * kube-apiserver registry strategies: server-set metadata, the `/status`
 * split, `generation` bumps on spec changes only, optimistic concurrency on
 * `resourceVersion`, and no-op detection.
 */

export interface WriteContext {
  /** The field manager recorded in managedFields. */
  manager: string;
  /** Timestamp of this write (RFC 3339). */
  now: string;
  /** 'status' for writes through the `/status` subresource. */
  subresource?: 'status';
  /** Set when managedFields were already computed (server-side apply). */
  managedFieldsDone?: boolean;
  /** Set when the body is a fresh value nobody else holds (just parsed): it is then changed in place, not copied. */
  ownsBody?: boolean;
  /** What to do with fields the kind's schema does not declare: `Strict` rejects, `Warn` (default) and `Ignore` prune. */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /**
   * The body is a patch's result: under Strict, kube answers an unknown field with a 422 on the
   * field `patch`, showing this value (the patch, or the patched object, as kube prints it); an
   * apply (`'apply'`) gets a 400 that does not name the kind.
   */
  fromPatch?: { readonly value: () => string } | 'apply';
  /** Collects the warnings of this write (sent as `Warning` headers). */
  warnings?: string[];
  /**
   * The server wrote this body itself (its default namespaces): it declares no unknown field, so
   * it is not checked, and starting a server never reads the schemas.
   */
  ownWrite?: boolean;
  /** The server's cache of decoded and encoded managedFields. */
  fieldsCache?: FieldsV1Cache;
  /** For a create: the uid to give the object (default a random UUID). */
  uid?: string;
  /** For a create: its creationTimestamp, when not `now` (an object restored as it was). */
  creationTimestamp?: string;
}

type Plain = Record<string, unknown>;

function kindOf(type: ResourceType): { group: string; kind: string } {
  return { group: type.group, kind: type.kind };
}

function excerpt(body: unknown): string {
  const text = JSON.stringify(body) ?? String(body);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/**
 * A mutable copy of a request body checked against the URL it was sent to:
 * kind and apiVersion (defaulted for built-ins, required for custom
 * resources as kube's unstructured decoder requires them), and namespace.
 */
export function decodeBody(type: ResourceType, body: unknown, urlNamespace: string | undefined, owned = false): KubeObject {
  if (!isPlainObject(body)) {
    throw badRequest(`the body of the request must be a JSON object describing a ${type.kind}, got ${excerpt(body)}`);
  }
  const obj = (owned ? body : cloneJson(body)) as Plain;
  const apiVersion = apiVersionOf(type);
  if (obj.kind === undefined || obj.kind === '') {
    if (!type.builtin) throw badRequest(`Object 'Kind' is missing in '${excerpt(body)}'`);
    obj.kind = type.kind;
  }
  if (obj.apiVersion === undefined || obj.apiVersion === '') obj.apiVersion = apiVersion;
  if (obj.apiVersion !== apiVersion) {
    throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersion})`);
  }
  if (obj.kind !== type.kind) {
    throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${type.kind}) of ${type.resource}`);
  }
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
  if (!isPlainObject(obj.metadata)) throw badRequest(`metadata must be an object, got ${excerpt(obj.metadata)}`);
  const meta = obj.metadata as Plain;
  checkMetadataTypes(type, meta);
  if (type.namespaced) {
    if (meta.namespace === undefined || meta.namespace === '') meta.namespace = urlNamespace;
    else if (meta.namespace !== urlNamespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
  } else {
    delete meta.namespace;
  }
  return obj as unknown as KubeObject;
}

/** The scalar fields of ObjectMeta with their Go types. */
const metadataFieldTypes: Readonly<Record<string, 'string' | 'int64'>> = {
  name: 'string',
  generateName: 'string',
  namespace: 'string',
  selfLink: 'string',
  uid: 'string',
  resourceVersion: 'string',
  creationTimestamp: 'string',
  deletionTimestamp: 'string',
  generation: 'int64',
  deletionGracePeriodSeconds: 'int64',
};

/**
 * A metadata field of the wrong JSON type fails kube's decoding of the whole body (400, in the
 * words of Go's decoder); a null one decodes as unset.
 */
function checkMetadataTypes(type: ResourceType, meta: Plain): void {
  for (const [field, goType] of Object.entries(metadataFieldTypes)) {
    const value = meta[field];
    if (value === undefined) continue;
    if (value === null) {
      delete meta[field];
      continue;
    }
    const fits = goType === 'string' ? typeof value === 'string' : typeof value === 'number' && Number.isSafeInteger(value);
    if (fits) continue;
    const got = typeof value === 'number' && goType === 'int64' ? `number ${value}` : jsonKind(value);
    throw badRequest(
      `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: ` +
        `json: cannot unmarshal ${got} into Go struct field ObjectMeta.metadata.${field} of type ${goType}`,
    );
  }
}

/**
 * Managed fields for a create or update. A list that does not fit the kind's structure (a
 * container that is a number, say) fails kube's typed decoding of the body: 400, not a 500.
 */
function recordWriteFields(type: ResourceType, options: Parameters<typeof recordManagedFields>[0]): KubeObject {
  try {
    return recordManagedFields(options) as KubeObject;
  } catch (error) {
    if (!(error instanceof TypedValueError)) throw error;
    throw badRequest(`${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: ${error.message}`);
  }
}

function invalidIf(type: ResourceType, name: string, errors: FieldError[]): void {
  if (errors.length > 0) throw invalid(kindOf(type), name, errors);
}

/** The status a built-in gets when created, as its registry strategy sets it. */
function initialStatus(type: ResourceType): Plain | undefined {
  if (!type.builtin || type.group !== '') return undefined;
  if (type.resource === 'pods') return { phase: 'Pending', qosClass: 'BestEffort' };
  if (type.resource === 'namespaces') return { phase: 'Active' };
  return undefined;
}

/**
 * Prunes, defaults and checks a custom resource against its schema (see crdSchema.ts); `live` is the
 * stored object on an update, for CEL's `oldSelf` and ratcheting. Unknown fields under `Strict` fail
 * decoding, before validation, as in kube.
 */
function applySchema(type: ResourceType, obj: KubeObject, ctx: WriteContext, live?: KubeObject): void {
  if (type.builtin || type.schema === undefined) return;
  const outcome = applyCrdSchema(obj as unknown as Plain, type.compiledSchema ?? crdVersionSchema(type.schema), live);
  if (outcome.unknown.length > 0 && ctx.fieldValidation !== 'Ignore') {
    const messages = outcome.unknown.map((path) => `unknown field "${path.replace(/^\./, '')}"`);
    if (ctx.fieldValidation === 'Strict') throw strictDecodingError(type, messages, ctx);
    ctx.warnings?.push(...messages);
  }
  invalidIf(type, obj.metadata.name ?? '', outcome.errors);
  ctx.warnings?.push(...outcome.warnings);
}

/**
 * Drops the fields a built-in's Go type does not declare, as kube's decoder does, and warns of
 * them (`Warn`, the default), rejects the write (`Strict`) or says nothing (`Ignore`), in kube's
 * words: `unknown field "spec.foo"`; `Deployment in version "v1" cannot be handled as a
 * Deployment: strict decoding error: ...` (400) for a create or update, `"" is invalid: patch:
 * Invalid value: "...": strict decoding error: ...` (422) for a patch.
 */
export function checkBuiltinFields(type: ResourceType, obj: object, ctx: WriteContext): void {
  if (!type.builtin || ctx.ownWrite === true) return;
  // Go's decoding fails on a `[]byte` field that is no base64 before strictness is looked at.
  const undecodable = byteFieldError(type, obj as KubeObject);
  if (undecodable !== undefined) throw decodingError(type, undecodable, ctx);
  // An applied configuration keeps its empty maps and lists: kube merges it as it is.
  const unknown = pruneUnknownFields(type, obj, ctx.fromPatch !== 'apply');
  if (unknown.length === 0 || ctx.fieldValidation === 'Ignore') return;
  const messages = unknown.map((path) => `unknown field ${JSON.stringify(path)}`);
  if (ctx.fieldValidation === 'Strict') throw strictDecodingError(type, messages, ctx);
  ctx.warnings?.push(...messages);
}

/** Kube's answer to unknown fields under Strict, built-in or custom alike: worded by what was written. */
function strictDecodingError(type: ResourceType, messages: readonly string[], ctx: WriteContext): Error {
  return decodingError(type, `strict decoding error: ${messages.join(', ')}`, ctx);
}

/** Kube's answer to a body its decoder refuses (`detail`), worded by what was written. */
function decodingError(type: ResourceType, detail: string, ctx: WriteContext): Error {
  if (ctx.fromPatch === undefined) return badRequest(`${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: ${detail}`);
  if (ctx.fromPatch === 'apply') return badRequest(detail);
  return invalid({ group: '', kind: '' }, '', [{ field: 'patch', type: 'Invalid value', value: ctx.fromPatch.value(), detail }]);
}

/** Drops empty metadata maps and lists, which kube's JSON leaves out. */
function normalizeMetadata(obj: KubeObject): void {
  const meta = obj.metadata as Plain;
  for (const key of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    const value = meta[key];
    if (value === null || (Array.isArray(value) && value.length === 0) || (isPlainObject(value) && Object.keys(value).length === 0)) {
      delete meta[key];
    }
  }
}

/** The object a create stores (without its resourceVersion, which the store assigns). */
export function prepareCreate(type: ResourceType, body: unknown, urlNamespace: string | undefined, ctx: WriteContext): KubeObject {
  const obj = decodeBody(type, body, urlNamespace, ctx.ownsBody === true);
  if (!ctx.managedFieldsDone) checkBuiltinFields(type, obj, ctx);
  else if (type.builtin) dropGoEmptyFields(type, obj);
  mergeStringData(type, obj);
  const meta = obj.metadata;
  if ((meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string' && meta.generateName !== '') {
    meta.name = generateName(meta.generateName);
  }
  invalidIf(type, meta.name ?? '', metadataErrors(type, meta));
  normalizeMetadata(obj);
  meta.uid = ctx.uid ?? randomUUID();
  meta.creationTimestamp = ctx.creationTimestamp ?? ctx.now;
  if (tracksGeneration(type)) meta.generation = 1;
  else delete meta.generation;
  delete meta.resourceVersion;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete (meta as Plain).selfLink;
  const plain = obj as unknown as Plain;
  if (type.status) {
    const status = initialStatus(type);
    if (status === undefined) delete plain.status;
    else plain.status = status;
  }
  defaultBuiltin(type, plain, true);
  applySchema(type, obj, ctx);
  if (ctx.managedFieldsDone) return obj;
  return recordWriteFields(type, {
    before: undefined,
    after: obj,
    manager: ctx.manager,
    operation: 'Update',
    now: ctx.now,
    kind: kindOf(type),
    resetFields: resetFieldsFor(type, undefined, obj),
    fieldsCache: ctx.fieldsCache,
  }) as KubeObject;
}

const nonSpecKeys = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/**
 * The top-level fields a write through this endpoint cannot change, which
 * field ownership must not record (kube's "reset fields"): `status` through
 * the main endpoint of a type with a status subresource; everything but
 * `status` through `/status`.
 */
export function resetFieldsFor(type: ResourceType, subresource: string | undefined, ...objects: readonly object[]): string[] {
  if (subresource === 'status') {
    const keys = new Set<string>();
    for (const o of objects) for (const key of Object.keys(o)) if (!nonSpecKeys.has(key)) keys.add(key);
    return [...keys];
  }
  return type.status ? ['status'] : [];
}

/**
 * The built-in resources whose registry strategy sets `metadata.generation` (1 on create, +1 on
 * each change outside metadata and status), by `group/resource`, as in kube 1.32.
 */
const generationTracked = new Set([
  'apps/deployments',
  'apps/statefulsets',
  'apps/daemonsets',
  'apps/replicasets',
  'batch/jobs',
  'batch/cronjobs',
  'networking.k8s.io/ingresses',
  'networking.k8s.io/ingressclasses',
  'networking.k8s.io/networkpolicies',
  'policy/poddisruptionbudgets',
  'admissionregistration.k8s.io/mutatingwebhookconfigurations',
  'admissionregistration.k8s.io/validatingwebhookconfigurations',
  'admissionregistration.k8s.io/validatingadmissionpolicies',
  'admissionregistration.k8s.io/validatingadmissionpolicybindings',
  'apiextensions.k8s.io/customresourcedefinitions',
  'discovery.k8s.io/endpointslices',
]);

/**
 * Whether objects of a type carry `metadata.generation`: custom resources, and the built-ins
 * listed above. A ConfigMap, Secret, Service, Pod (1.32), Namespace, Event, Lease, RBAC object,
 * StorageClass or ControllerRevision has none.
 */
export function tracksGeneration(type: ResourceType): boolean {
  if (!type.builtin) return true;
  return generationTracked.has(`${type.group}/${type.resource}`);
}

/** Whether anything outside metadata and status differs: the rule for bumping `generation`. */
export function specChanged(a: KubeObject, b: KubeObject): boolean {
  const ra = a as unknown as Plain;
  const rb = b as unknown as Plain;
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
  for (const key of keys) {
    if (nonSpecKeys.has(key)) continue;
    if (!jsonEqual(ra[key], rb[key])) return true;
  }
  return false;
}

/** Whether two states of an object differ in anything but resourceVersion and managedFields. */
export function contentChanged(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject): Plain => {
    const { resourceVersion: _rv, managedFields: _mf, ...meta } = o.metadata;
    return { ...(o as unknown as Plain), metadata: meta };
  };
  return !jsonEqual(strip(a), strip(b));
}

/** Whether managedFields differ in more than their timestamps (a re-apply of the same fields is a no-op). */
function ownershipChanged(a: KubeObject, b: KubeObject): boolean {
  const untimed = (o: KubeObject): unknown[] =>
    (o.metadata.managedFields ?? []).map((entry) => (isPlainObject(entry) ? { ...entry, time: undefined } : entry));
  return !jsonEqual(untimed(a), untimed(b));
}

/** Server-controlled metadata that no update may change. */
function keepServerMetadata(live: KubeObject, next: KubeObject, ownManagedFields: boolean): void {
  const meta = next.metadata;
  const old = live.metadata;
  meta.name = old.name;
  if (old.namespace === undefined) delete meta.namespace;
  else meta.namespace = old.namespace;
  meta.uid = old.uid;
  meta.creationTimestamp = old.creationTimestamp;
  if (old.generation === undefined) delete meta.generation;
  else meta.generation = old.generation;
  if (old.deletionTimestamp === undefined) delete meta.deletionTimestamp;
  else meta.deletionTimestamp = old.deletionTimestamp;
  if (old.deletionGracePeriodSeconds === undefined) delete meta.deletionGracePeriodSeconds;
  else meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
  // A managedFields list sent with an update replaces the stored one ([] clears it), as in kube.
  if (!ownManagedFields && meta.managedFields === undefined && old.managedFields !== undefined) {
    meta.managedFields = old.managedFields as unknown[];
  }
  delete meta.resourceVersion;
  delete meta.generateName;
  if (old.generateName !== undefined) meta.generateName = old.generateName;
}

/** Custom resources require a resourceVersion on update; built-ins allow unconditional updates. */
function allowsUnconditionalUpdate(type: ResourceType): boolean {
  return type.builtin;
}

/**
 * The object an update stores, or undefined for a no-op (nothing but
 * resourceVersion or managedFields would change: no new version, no event).
 * `live` and `body` are in the same version's representation.
 */
export function prepareUpdate(
  type: ResourceType,
  live: KubeObject,
  body: unknown,
  url: { namespace: string | undefined; name: string },
  ctx: WriteContext,
): KubeObject | undefined {
  const obj = decodeBody(type, body, url.namespace, ctx.ownsBody === true);
  if (!ctx.managedFieldsDone && type.builtin) {
    // A top-level field identical to the stored one was checked when it was stored: shared (frozen)
    // first, the unknown-field walk skips it. Built-ins only: a custom resource's schema still
    // prunes and defaults in place below.
    shareUnchanged(obj as unknown as Plain, live as unknown as Plain);
    checkBuiltinFields(type, obj, ctx);
  } else if (type.builtin) {
    // What an apply merged: the parts it kept from the stored object are frozen and skipped.
    dropGoEmptyFields(type, obj);
  }
  mergeStringData(type, obj);
  defaultBuiltin(type, obj as unknown as Plain, false);
  const name = obj.metadata.name ?? '';
  if (name !== url.name) throw badRequest(`the name of the object (${name}) does not match the name on the URL (${url.name})`);
  const gr = { group: type.group, resource: type.resource };
  const rv = obj.metadata.resourceVersion;
  if (rv === undefined || rv === '') {
    if (!allowsUnconditionalUpdate(type)) {
      throw invalid(kindOf(type), name, [
        { field: 'metadata.resourceVersion', type: 'Invalid value', value: 0, detail: 'must be specified for an update' },
      ]);
    }
  } else if (rv !== live.metadata.resourceVersion) {
    throw conflict(gr, name);
  }
  if (obj.metadata.uid !== undefined && obj.metadata.uid !== '' && obj.metadata.uid !== live.metadata.uid) {
    throw invalid(kindOf(type), name, [
      { field: 'metadata.uid', type: 'Invalid value', value: obj.metadata.uid, detail: 'field is immutable' },
    ]);
  }

  let next: KubeObject;
  if (ctx.subresource === 'status') {
    // Through /status only the status changes; everything else stays as stored.
    // Stored objects are frozen, so their parts can be shared; only what changes is copied.
    next = { ...live, metadata: { ...live.metadata } };
    const status = (obj as unknown as Plain).status;
    if (status === undefined) delete (next as unknown as Plain).status;
    else (next as unknown as Plain).status = status;
    if (ctx.managedFieldsDone) next.metadata.managedFields = obj.metadata.managedFields;
  } else {
    next = obj;
    keepServerMetadata(live, next, ctx.managedFieldsDone === true);
    const plain = next as unknown as Plain;
    const liveStatus = (live as unknown as Plain).status;
    if (type.status) {
      // With a status subresource, the main endpoint cannot change status.
      if (liveStatus === undefined) delete plain.status;
      else plain.status = liveStatus;
    }
    if (type.builtin && type.group === '' && type.resource === 'namespaces') {
      // Namespace finalizers change only through /finalize.
      plain.spec = { ...(isPlainObject(plain.spec) ? plain.spec : {}), finalizers: (live as unknown as { spec?: { finalizers?: unknown } }).spec?.finalizers };
    }
    invalidIf(type, name, metadataErrors(type, next.metadata));
  }

  if (live.metadata.deletionTimestamp !== undefined) {
    const before = new Set(live.metadata.finalizers ?? []);
    const added = (next.metadata.finalizers ?? []).filter((f) => !before.has(f));
    if (added.length > 0) {
      throw invalid(kindOf(type), name, [
        {
          field: 'metadata.finalizers',
          type: 'Forbidden',
          detail: `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
        },
      ]);
    }
  }
  normalizeMetadata(next);
  applySchema(type, next, ctx, live);
  shareUnchanged(next as unknown as Plain, live as unknown as Plain);
  if (tracksGeneration(type) && specChanged(live, next)) next.metadata.generation = (live.metadata.generation ?? 0) + 1;
  if (ctx.managedFieldsDone) {
    return contentChanged(live, next) || ownershipChanged(live, next) ? next : undefined;
  }
  if (!contentChanged(live, next)) return undefined;
  return recordWriteFields(type, {
    before: live,
    after: next,
    manager: ctx.manager,
    operation: 'Update',
    subresource: ctx.subresource,
    now: ctx.now,
    kind: kindOf(type),
    resetFields: resetFieldsFor(type, ctx.subresource, live, next),
    fieldsCache: ctx.fieldsCache,
  }) as KubeObject;
}
