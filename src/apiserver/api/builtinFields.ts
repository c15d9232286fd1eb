import { isPlainObject } from '../../util/json.js';
import { goKeepsEmpty } from './goEmptyFields.js';
import { gvkKey, kubernetesSchemas, refPrefix, type Schema } from './kubernetesSchemas.js';

/**
 * Unknown fields of a built-in object, as kube-apiserver's strict JSON decoding finds them: a
 * field its Go type does not declare, named by its path (`spec.template.spec.containers[0].foo`).
 * Kube's decoder drops such fields, so they are removed here too; what the request's
 * `fieldValidation` makes of them (a warning, a 400, nothing) is the caller's.
 *
 * Parts of the object that are frozen are shared with the stored object, which was checked when
 * it was stored: they are skipped.
 */

interface FieldNode {
  /** Declared fields of an object. */
  properties?: Map<string, FieldNode>;
  /** Every value of a map, or item of a list. */
  values?: FieldNode;
  /** Anything goes below (a leaf, RawExtension, an object whose schema declares nothing). */
  open?: boolean;
  /** Map and list fields of an object that Go writes even when empty (goEmptyFields.ts). */
  keepEmpty?: ReadonlySet<string>;
}

const openNode: FieldNode = { open: true };

/** Compiled nodes by schema name, for the process's one copy of the schemas (see kubernetesSchemas.ts). */
const compiled = new Map<string, FieldNode>();

function refName(schema: Schema): string | undefined {
  if (typeof schema.$ref === 'string') return schema.$ref.slice(refPrefix.length);
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1 && isPlainObject(schema.allOf[0])) return refName(schema.allOf[0]);
  return undefined;
}

function nodeOf(schema: Schema): FieldNode {
  const ref = refName(schema);
  if (ref !== undefined) return named(ref);
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return openNode;
  if (schema.type === 'array') return isPlainObject(schema.items) ? { values: nodeOf(schema.items) } : openNode;
  if (schema.type !== 'object') return openNode;
  if (isPlainObject(schema.additionalProperties)) return { values: nodeOf(schema.additionalProperties) };
  const properties = isPlainObject(schema.properties) ? Object.entries(schema.properties) : [];
  if (properties.length === 0) return openNode;
  const node: FieldNode = { properties: new Map() };
  for (const [name, child] of properties) node.properties?.set(name, isPlainObject(child) ? nodeOf(child) : openNode);
  return node;
}

function named(name: string): FieldNode {
  const known = compiled.get(name);
  if (known !== undefined) return known;
  const schema = kubernetesSchemas().schemas[name];
  if (schema === undefined) return openNode;
  // Placed before its children are compiled, so that recursive schemas (JSONSchemaProps) end.
  const node: FieldNode = {};
  compiled.set(name, node);
  Object.assign(node, nodeOf(schema));
  const keep = goKeepsEmpty[name];
  if (keep !== undefined) node.keepEmpty = new Set(keep);
  return node;
}

/** A path as kube prints it (`spec.containers[0].name`), from its segments: keys, and indexes of lists. */
function pathText(segments: readonly (string | number)[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? segment : `.${segment}`;
  }
  return out;
}

/** Whether Go's `omitempty` leaves this value of a map or slice field out: null, `{}` or `[]`. */
function emptyContainer(value: unknown): boolean {
  if (value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/**
 * The object's own metadata is left to the write: an empty `managedFields` list in a request
 * resets tracking (Go decodes it as an empty, not a nil, list), and the write drops its empty
 * maps and lists itself.
 */
function topMetadata(path: readonly (string | number)[]): boolean {
  return path.length === 2 && path[0] === 'metadata';
}

/**
 * `path` holds the segments down to `value`; it is only made into text when a field is unknown
 * (the rare case). With `dropEmpty`, an empty map or list field is removed unless Go keeps it.
 */
function walk(value: unknown, node: FieldNode, path: (string | number)[], out: string[], dropEmpty: boolean): void {
  if (node.open === true || typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  if (Array.isArray(value)) {
    const items = node.values;
    if (items === undefined) return;
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      walk(value[i], items, path, out, dropEmpty);
      path.pop();
    }
    return;
  }
  const object = value as Record<string, unknown>;
  const values = node.values;
  const properties = node.properties;
  if (values === undefined && properties === undefined) return;
  for (const key of Object.keys(object)) {
    const field = values ?? properties?.get(key);
    path.push(key);
    if (field === undefined) {
      out.push(pathText(path));
      delete object[key];
    } else if (dropEmpty && values === undefined && field.values !== undefined && !node.keepEmpty?.has(key) && emptyContainer(object[key]) && !topMetadata(path)) {
      delete object[key];
    } else if (field.open !== true) {
      walk(object[key], field, path, out, dropEmpty);
    }
    path.pop();
  }
}

function rootNode(kind: { group: string; version: string; kind: string }): FieldNode | undefined {
  const name = kubernetesSchemas().byKind.get(gvkKey(kind.group, kind.version, kind.kind));
  return name === undefined ? undefined : named(name);
}

/**
 * The apiextensions kinds keep what they are given: a CRD's schema (JSONSchemaProps) has its own
 * JSON encoding in Go, which this table does not describe.
 */
function normalizes(kind: { group: string }): boolean {
  return kind.group !== 'apiextensions.k8s.io';
}

/**
 * Removes the fields of `object` (a built-in of this kind) that its schema does not declare;
 * returns their paths. With `dropEmpty`, also the empty map and list fields Go's encoding leaves
 * out (see {@link dropGoEmptyFields}); an applied configuration keeps them, as kube merges it
 * before any Go type sees it.
 */
export function pruneUnknownFields(kind: { group: string; version: string; kind: string }, object: object, dropEmpty = false): string[] {
  const root = rootNode(kind);
  if (root === undefined) return [];
  const out: string[] = [];
  walk(object, root, [], out, dropEmpty && normalizes(kind));
  return out;
}

/**
 * Removes the empty map and list fields (`{}`, `[]`, null) that kube's Go types tag `omitempty`,
 * as storing the object through its Go type does: what a merge, a strategic merge patch's
 * deletions or an apply's merge leaves empty is gone, not `{}`. Frozen parts (shared with the
 * stored object, normalized when stored) are skipped.
 */
export function dropGoEmptyFields(kind: { group: string; version: string; kind: string }, object: object): void {
  const root = rootNode(kind);
  if (root === undefined || !normalizes(kind)) return;
  walk(object, root, [], [], true);
}
