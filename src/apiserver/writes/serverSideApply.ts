import { shapeFor } from '../api/builtinSchema.js';
import { formatPath, sameMembers, union, type FieldSet } from './fieldPath.js';
import type { FieldsV1Cache } from './fieldsV1Cache.js';
import type { GroupKind } from '../api/groupKind.js';
import { jsonEqual } from '../../util/json.js';
import { isJsonObject, type JsonObject, type JsonValue } from './jsonValue.js';
import {
  decodeManagedFields,
  describeManager,
  managerIdentity,
  stripServerFields,
  takeOwnership,
  withManagedFields,
  withoutManagedFields,
  withoutResetFields,
  type ManagerEntry,
  type Managers,
} from './managedFields.js';
import { PatchError } from './patchError.js';
import { compareValues, mergeApplied, pruneFields, toFieldSet, TypedValueError } from './structuredMerge.js';

export type { GroupKind } from '../api/groupKind.js';
export { recordManagedFields, type RecordManagedFieldsOptions } from './managedFields.js';

/** One field another manager owns and an apply would change (a Status cause of type FieldManagerConflict). */
export interface ApplyConflictCause {
  readonly type: 'FieldManagerConflict';
  /** `conflict with "manager"` (plus ` using <apiVersion>` for Update managers). */
  readonly message: string;
  /** The field, as kube prints paths: `.spec.replicas`, `.spec.containers[name="app"].image`. */
  readonly field: string;
}

/**
 * An apply without `force` that would change fields other managers own: kube answers 409
 * Conflict with this message and one cause per field.
 */
export class ApplyConflictError extends Error {
  override readonly name = 'ApplyConflictError';
  readonly code = 409;
  readonly reason = 'Conflict';

  constructor(
    message: string,
    readonly causes: readonly ApplyConflictCause[],
  ) {
    super(message);
  }
}

export interface ServerSideApplyOptions {
  /** The stored object, or undefined when the apply creates it. */
  readonly live: object | undefined;
  /** The applied configuration (the request body, parsed). */
  readonly applied: object;
  /** The `fieldManager` of the request. */
  readonly manager: string;
  readonly force: boolean;
  readonly kind: GroupKind;
  /** Built-in kinds merge their associative lists by key; custom resources treat lists as atomic. */
  readonly builtin: boolean;
  /** RFC 3339 time written on the manager's entry when the apply changes the object. */
  readonly now: string;
  /** The subresource applied to (`status`), recorded in the manager's entry. */
  readonly subresource?: string;
  /**
   * Top-level fields this endpoint does not write (kube's reset fields: `status` through the
   * main resource of a kind with a status subresource, `spec` and the rest through `/status`):
   * their live values are kept and nobody gains them.
   */
  readonly resetFields?: readonly string[];
  /** The server's cache of FieldsV1 (see fieldsV1Cache.ts). */
  readonly fieldsCache?: FieldsV1Cache;
}

/**
 * Server-side apply (`application/apply-patch+yaml`) with field ownership, as kube-apiserver's
 * field manager does it:
 * 1. An existing object without managedFields first gets a `before-first-apply` manager owning
 *    all its fields (so the first apply conflicts with what others set before tracking).
 * 2. The configuration is merged into the live object (objects by key, associative lists by
 *    their keys, set lists by value; atomic lists and values are replaced).
 * 3. The manager now owns exactly the fields of its configuration. Fields it applied before and
 *    applies no longer are removed from the object, unless another manager owns them.
 * 4. Fields other managers own whose value the apply adds or changes are conflicts: without
 *    `force` the apply fails with {@link ApplyConflictError}; with `force` the manager takes them
 *    over (they leave the other managers' sets). Fields the apply removes leave every set.
 * 5. The entry is `operation: Apply` with the configuration's apiVersion and `now` as its time
 *    (an apply that changes nothing keeps the previous time).
 *
 * A configuration carrying `metadata.managedFields` is 400; one that cannot be typed (a list item
 * without its key, duplicate keys) is a 422 (kube's 500; see patchError.ts), both as {@link PatchError}. Inputs are never
 * modified; the result shares the parts it did not change with them (read it, or copy it first).
 */
export function serverSideApply(options: ServerSideApplyOptions): { object: object } {
  const applied = options.applied as JsonObject;
  if (!isJsonObject(applied)) throw PatchError.badRequest('error decoding YAML: the applied configuration must be an object');
  if (isJsonObject(applied.metadata) && applied.metadata.managedFields !== undefined && applied.metadata.managedFields !== null) {
    throw PatchError.badRequest('metadata.managedFields must be nil');
  }
  const shape = options.builtin ? shapeFor(options.kind) : shapeFor({ group: '', kind: '' });
  const resetFields = options.resetFields ?? [];
  const liveObject = options.live as JsonObject | undefined;
  const live = withoutManagedFields(liveObject) ?? {};
  const apiVersion = typeof applied.apiVersion === 'string' ? applied.apiVersion : '';

  try {
    const managers: Managers =
      decodeManagedFields(isJsonObject(liveObject?.metadata) ? liveObject.metadata.managedFields : undefined, options.fieldsCache) ?? new Map();
    if (managers.size === 0 && liveObject !== undefined) adoptExistingFields(managers, live, shape, liveObject, options.now);

    const self = { manager: options.manager, operation: 'Apply' as const, apiVersion, ...subresourceOf(options) };
    const id = managerIdentity(self);
    const previous = managers.get(id);
    const appliedFields = stripServerFields(withoutResetFields(toFieldSet(applied, shape), resetFields));

    let merged = mergeApplied(live, applied, shape) as JsonObject;
    for (const field of resetFields) {
      if (Object.hasOwn(live, field)) merged[field] = live[field] as JsonValue;
      else delete merged[field];
    }
    // A re-apply of the same fields keeps the set itself, whose encoding is then not redone.
    const fields = previous !== undefined && sameMembers(previous.fields, appliedFields) ? previous.fields : appliedFields;
    managers.set(id, { ...self, ...(previous?.time ? { time: previous.time } : {}), fields });

    if (previous) {
      const dropped = unownedFields(previous.fields, managers);
      if (dropped.size > 0) merged = pruneFields(merged, dropped, union(...[...managers.values()].map((entry) => entry.fields)), shape) as JsonObject;
    }

    const comparison = compareValues(live, merged, shape);
    const filtered = {
      added: withoutResetFields(comparison.added, resetFields),
      modified: withoutResetFields(comparison.modified, resetFields),
      removed: withoutResetFields(comparison.removed, resetFields),
    };
    const before = new Map(managers);
    const conflicts = takeOwnership(managers, id, filtered);
    if (conflicts.size > 0 && !options.force) throw conflictError(conflicts, before);

    const changed = !jsonEqual(live, merged);
    const entry = managers.get(id) as ManagerEntry;
    if (entry.fields.size === 0) managers.delete(id);
    else if (changed) managers.set(id, { ...entry, time: options.now });
    return { object: withManagedFields(changed ? merged : live, managers, options.fieldsCache) };
  } catch (e) {
    if (e instanceof TypedValueError) {
      throw PatchError.unfit(`failed to create typed patch object (${describeObject(applied)}): ${e.message}`);
    }
    throw e;
  }
}

/** The members of `fields` that no manager holds. */
function unownedFields(fields: FieldSet, managers: Managers): FieldSet {
  const out: FieldSet = new Set();
  for (const member of fields) {
    let owned = false;
    for (const entry of managers.values()) {
      if (entry.fields.has(member)) {
        owned = true;
        break;
      }
    }
    if (!owned) out.add(member);
  }
  return out;
}

function subresourceOf(options: ServerSideApplyOptions): { subresource?: string } {
  return options.subresource !== undefined ? { subresource: options.subresource } : {};
}

/** Kube's `before-first-apply` manager: an Update entry owning every field of an untracked object. */
function adoptExistingFields(managers: Managers, live: JsonObject, shape: ReturnType<typeof shapeFor>, liveObject: JsonObject, now: string): void {
  const fields = stripServerFields(compareValues({}, live, shape).added);
  if (fields.size === 0) return;
  const entry: ManagerEntry = {
    manager: 'before-first-apply',
    operation: 'Update',
    apiVersion: typeof liveObject.apiVersion === 'string' ? liveObject.apiVersion : '',
    time: now,
    fields,
  };
  managers.set(managerIdentity(entry), entry);
}

function describeObject(obj: JsonObject): string {
  const metadata = isJsonObject(obj.metadata) ? obj.metadata : {};
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  return `${namespace}/${name}; ${String(obj.apiVersion ?? '')}, Kind=${String(obj.kind ?? '')}`;
}

function conflictError(conflicts: Map<string, FieldSet>, managers: Managers): ApplyConflictError {
  const rows: Array<{ manager: string; description: string; field: string }> = [];
  for (const [id, fields] of conflicts) {
    const entry = managers.get(id) as ManagerEntry;
    for (const field of [...fields].sort()) {
      rows.push({ manager: entry.manager, description: describeManager(entry), field: formatPath(field) });
    }
  }
  rows.sort((a, b) => (a.manager < b.manager ? -1 : a.manager > b.manager ? 1 : 0));
  const causes = rows.map((row) => ({ type: 'FieldManagerConflict' as const, message: `conflict with ${row.description}`, field: row.field }));
  if (rows.length === 1) {
    const only = rows[0] as (typeof rows)[number];
    return new ApplyConflictError(`Apply failed with 1 conflict: conflict with ${only.description}: ${only.field}`, causes);
  }
  const lines: string[] = [];
  let current: string | undefined;
  for (const row of rows) {
    if (row.description !== current) {
      lines.push(`conflicts with ${row.description}:`);
      current = row.description;
    }
    lines.push(`- ${row.field}`);
  }
  return new ApplyConflictError(`Apply failed with ${rows.length} conflicts: ${lines.join('\n')}`, causes);
}
