import { shapeFor } from '../api/builtinSchema.js';
import { difference, fieldsV1ToSet, intersection, sameMembers, setToFieldsV1, union, type FieldSet } from './fieldPath.js';
import type { FieldsV1Cache } from './fieldsV1Cache.js';
import type { GroupKind } from '../api/groupKind.js';
import { jsonEqual } from '../../util/json.js';
import { isJsonObject, type JsonObject, type JsonValue } from './jsonValue.js';
import { compareValues, type Comparison } from './structuredMerge.js';

/**
 * `metadata.managedFields` as kube-apiserver keeps it (apimachinery's managedfields package):
 * one entry per manager identity, which is the manager name, the operation (`Apply` or
 * `Update`), the subresource, and for `Update` also the apiVersion. Entries are written sorted
 * by operation, time (seconds), manager, apiVersion and subresource, as kube writes them.
 */
export interface ManagerEntry {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly apiVersion: string;
  readonly subresource?: string;
  readonly time?: string;
  readonly fields: FieldSet;
}

export type Managers = Map<string, ManagerEntry>;

export function managerIdentity(entry: Pick<ManagerEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify([entry.manager, entry.operation, entry.operation === 'Update' ? entry.apiVersion : '', entry.subresource ?? '']);
}

/** How kube names a manager in a conflict: `"kubectl"`, `"editor" using apps/v1`, `... with subresource "status"`. */
export function describeManager(entry: ManagerEntry): string {
  let text = JSON.stringify(entry.manager);
  if (entry.subresource) text += ` with subresource ${JSON.stringify(entry.subresource)}`;
  if (entry.operation === 'Update') text += ` using ${entry.apiVersion}`;
  return text;
}

/**
 * Decodes managedFields; undefined when any entry is not valid (kube then ignores them all).
 * The entries' field sets come from `cache` when given: they are shared, never to be changed.
 */
export function decodeManagedFields(list: unknown, cache?: FieldsV1Cache): Managers | undefined {
  const managers: Managers = new Map();
  if (list === undefined || list === null) return managers;
  if (!Array.isArray(list)) return undefined;
  for (const raw of list) {
    if (!isJsonObject(raw)) return undefined;
    const { manager, operation, apiVersion, subresource, time, fieldsType, fieldsV1 } = raw;
    if (operation !== 'Apply' && operation !== 'Update') return undefined;
    if (typeof apiVersion !== 'string' || apiVersion === '' || fieldsType !== 'FieldsV1') return undefined;
    let fields: FieldSet;
    try {
      fields = cache === undefined ? fieldsV1ToSet(fieldsV1 ?? {}) : cache.decode(fieldsV1 ?? {});
    } catch {
      return undefined;
    }
    const entry: ManagerEntry = {
      manager: typeof manager === 'string' ? manager : '',
      operation,
      apiVersion,
      ...(typeof subresource === 'string' && subresource !== '' ? { subresource } : {}),
      ...(typeof time === 'string' ? { time } : {}),
      fields,
    };
    managers.set(managerIdentity(entry), entry);
  }
  return managers;
}

function seconds(time: string | undefined): number {
  if (time === undefined) return 0;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The managedFields list for these managers, in kube's order; empty managers are left out. With a
 * `cache`, the FieldsV1 objects are its frozen, shared encodings.
 */
export function encodeManagedFields(managers: Managers, cache?: FieldsV1Cache): JsonObject[] {
  const entries = [...managers.values()].filter((entry) => entry.fields.size > 0).map((entry) => ({ entry, seconds: seconds(entry.time) }));
  entries.sort(
    ({ entry: p, seconds: ps }, { entry: q, seconds: qs }) =>
      compareStrings(p.operation, q.operation) ||
      ps - qs ||
      compareStrings(p.manager, q.manager) ||
      compareStrings(p.apiVersion, q.apiVersion) ||
      compareStrings(p.subresource ?? '', q.subresource ?? ''),
  );
  return entries.map(({ entry }) => ({
    manager: entry.manager,
    operation: entry.operation,
    apiVersion: entry.apiVersion,
    ...(entry.time !== undefined ? { time: entry.time } : {}),
    fieldsType: 'FieldsV1',
    fieldsV1: cache === undefined ? setToFieldsV1(entry.fields) : cache.encode(entry.fields),
    ...(entry.subresource !== undefined ? { subresource: entry.subresource } : {}),
  }));
}

/** Server-set metadata nobody owns (kube's stripMetaManager): these exact paths leave every manager's set. */
const strippedPaths: FieldSet = new Set(
  [
    ['f:apiVersion'],
    ['f:kind'],
    ['f:metadata'],
    ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map(
      (name) => ['f:metadata', `f:${name}`],
    ),
  ].map((path) => path.join('\u0000')),
);

export function stripServerFields(fields: FieldSet): FieldSet {
  return difference(fields, strippedPaths);
}

/**
 * The object without managedFields, for comparisons and merges: a new top level and metadata;
 * everything else is shared with `obj` (so is to be read, not changed).
 */
export function withoutManagedFields(obj: JsonObject | undefined): JsonObject | undefined {
  if (obj === undefined) return undefined;
  const copy = { ...obj };
  if (isJsonObject(copy.metadata)) {
    const { managedFields: _managedFields, ...metadata } = copy.metadata;
    copy.metadata = metadata;
  }
  return copy;
}

/**
 * The object with these managers written to `metadata.managedFields` (removed when none): a new
 * top level and metadata; everything else is shared with `obj`.
 */
export function withManagedFields(obj: JsonObject, managers: Managers, cache?: FieldsV1Cache): JsonObject {
  const out = { ...obj };
  const metadata: JsonObject = isJsonObject(out.metadata) ? { ...out.metadata } : {};
  const encoded = encodeManagedFields(managers, cache);
  if (encoded.length > 0) metadata.managedFields = encoded;
  else delete metadata.managedFields;
  out.metadata = metadata;
  return out;
}

/** Keeps only paths outside the reset fields (top-level fields a write through this endpoint cannot change). */
export function withoutResetFields(fields: FieldSet, resetFields: readonly string[]): FieldSet {
  if (resetFields.length === 0) return fields;
  const fieldKeys = resetFields.map((name) => `f:${name}`);
  const below = fieldKeys.map((key) => `${key}\u0000`);
  let out: FieldSet | undefined;
  for (const key of fields) {
    if (!fieldKeys.some((fieldKey, i) => key === fieldKey || key.startsWith(below[i] as string))) continue;
    out ??= new Set(fields);
    out.delete(key);
  }
  return out ?? fields;
}

/**
 * The comparison of a write, and what it takes from other managers: with `force`, fields another
 * manager owns and this write adds or changes are taken from them (without force the caller
 * reports them as conflicts); removed fields leave every manager. Managers left empty go.
 */
export function takeOwnership(
  managers: Managers,
  self: string | undefined,
  comparison: Comparison,
): Map<string, FieldSet> {
  const changed = union(comparison.modified, comparison.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [id, entry] of managers) {
    if (id === self) continue;
    const conflict = intersection(entry.fields, changed);
    if (conflict.size > 0) conflicts.set(id, conflict);
    const fields = difference(difference(entry.fields, conflict), comparison.removed);
    if (fields.size === 0) managers.delete(id);
    else if (fields !== entry.fields) managers.set(id, { ...entry, fields });
  }
  return conflicts;
}

export interface RecordManagedFieldsOptions {
  readonly before: object | undefined;
  readonly after: object;
  readonly manager: string;
  readonly operation: 'Update';
  readonly subresource?: string;
  /** RFC 3339 time written on the manager's entry. */
  readonly now: string;
  /** The kind, for list keys and atomic fields; read from `after` (apiVersion/kind) when left out. */
  readonly kind?: GroupKind;
  /** Fields this write cannot change (e.g. `status` through the main resource); never recorded. */
  readonly resetFields?: readonly string[];
  /** The server's cache of FieldsV1 (see fieldsV1Cache.ts); without it, every write decodes and encodes them all. */
  readonly fieldsCache?: FieldsV1Cache;
}

export function groupKindOf(obj: object): GroupKind {
  const { apiVersion, kind } = obj as { apiVersion?: unknown; kind?: unknown };
  const version = typeof apiVersion === 'string' ? apiVersion : '';
  return { group: version.includes('/') ? version.slice(0, version.indexOf('/')) : '', kind: typeof kind === 'string' ? kind : '' };
}

/** Kube's built-in API groups: no dot, or `*.k8s.io` other than the community `x-k8s.io` ones. */
function isBuiltinGroup(group: string): boolean {
  return !group.includes('.') || (group.endsWith('.k8s.io') && !group.endsWith('x-k8s.io'));
}

/**
 * `after` with managedFields updated for a non-apply write (create, update, patch), as kube's
 * field manager does:
 * - The managers start from the managedFields the request sent, when it sent a valid non-empty
 *   list; `[]` (or `[{}]`) resets them; otherwise (absent or invalid, or a subresource write)
 *   they are the live object's.
 * - An existing object with no managers is not tracked (kube only starts tracking on create or
 *   apply): the result then has no managedFields.
 * - The writer gets every field it added or changed (in addition to what it owned), other
 *   managers lose those fields, and every manager loses removed fields. Server-set metadata
 *   (name, uid, resourceVersion, ...) is never owned.
 */
export function recordManagedFields(options: RecordManagedFieldsOptions): object {
  const before = options.before as JsonObject | undefined;
  const after = options.after as JsonObject;
  const kind = options.kind ?? groupKindOf(after);
  const shape = shapeFor(kind);
  const sent = isJsonObject(after.metadata) ? after.metadata.managedFields : undefined;
  const cache = options.fieldsCache;
  const liveList = isJsonObject(before?.metadata) ? before.metadata.managedFields : undefined;
  const live = decodeManagedFields(liveList, cache) ?? new Map();
  let managers: Managers = live;
  if (options.subresource === undefined && Array.isArray(sent)) {
    const reset = sent.length === 0 || (sent.length === 1 && isJsonObject(sent[0]) && Object.keys(sent[0]).length === 0);
    // A list sent back as it was read (read-modify-write, a patch of a copy) decodes as the live
    // one does, whose field sets the cache holds.
    const sentBack = cache !== undefined && sent !== liveList && jsonEqual(sent, liveList);
    const decoded = reset ? new Map() : decodeManagedFields(sentBack ? liveList : sent, cache);
    if (reset) managers = new Map();
    else if (decoded !== undefined && decoded.size > 0) managers = decoded;
  }
  const result = withoutManagedFields(after) as JsonObject;
  const isCreate = before === undefined || !isJsonObject(before.metadata) || !before.metadata.uid;
  if (managers.size === 0 && !isCreate) return result;

  // Kube compares against the kind's empty Go object on create, where spec and status exist.
  const empty: JsonObject = isBuiltinGroup(kind.group) ? { spec: {}, status: {} } : {};
  const resetFields = options.resetFields ?? [];
  const comparison = compareValues(withoutManagedFields(before) ?? empty, result as JsonValue, shape);
  const filtered: Comparison = {
    added: withoutResetFields(comparison.added, resetFields),
    modified: withoutResetFields(comparison.modified, resetFields),
    removed: withoutResetFields(comparison.removed, resetFields),
  };
  const identity = {
    manager: options.manager,
    operation: options.operation,
    apiVersion: typeof after.apiVersion === 'string' ? after.apiVersion : '',
    ...(options.subresource !== undefined ? { subresource: options.subresource } : {}),
  };
  const id = managerIdentity(identity);
  const held = managers.get(id)?.fields;
  takeOwnership(managers, undefined, filtered);
  const previous = managers.get(id)?.fields ?? new Set<string>();
  const gained = union(filtered.modified, filtered.added);
  const recomputed = stripServerFields(union(previous, gained));
  // A writer that rewrites fields it owns keeps the same set (the ownership taken back from it is
  // given back): keep the set itself, whose encoding is then not redone.
  const fields = held !== undefined && sameMembers(held, recomputed) ? held : recomputed;
  const current = managers.get(id);
  if (gained.size > 0) managers.set(id, { ...identity, time: options.now, fields });
  else if (current) managers.set(id, { ...current, fields });
  return withManagedFields(result, managers, cache);
}
