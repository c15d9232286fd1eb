import { cloneJson, jsonEqual, setMember } from '../../util/json.js';
import { isJsonObject, jsonKind, type JsonObject, type JsonValue } from './jsonValue.js';
import { PatchError } from './patchError.js';

/** kube-apiserver refuses JSON patches with more operations than this (413). */
export const maxJsonPatchOperations = 10000;

/**
 * Applies an RFC 6902 JSON patch (`application/json-patch+json`) the way kube-apiserver does,
 * which is evanphx/json-patch v4's reading of the RFC, quirks included:
 * - `replace` of a missing object member adds it; `replace` at `""` with a scalar does nothing;
 * - `test` of a missing member passes when the expected value is `null`;
 * - `add`/`replace` without `value` write `null`;
 * - array indices may be negative (counted from the end); `-` appends for `add`;
 * - a path whose parent does not exist, a missing member for `remove`/`move`, an index out of
 *   range, a failed `test` or an unknown `op` fail the whole patch.
 *
 * The body must be an array of operation objects (else 400 BadRequest, as kube's decoder says);
 * more than {@link maxJsonPatchOperations} is 413; an operation that does not apply is 422
 * Invalid, whose message starts with kube's generic text and then says which operation failed and
 * why, in json-patch's words (`testing value /metadata/labels/a failed: test failed`).
 *
 * Each operation is carried out on a private copy, so neither `doc` nor `body` is ever modified.
 * Every member is data: `/spec/__proto__` names a member called `__proto__` (as in kube), which
 * is written as an own member, never as the prototype. (`fast-json-patch` refuses such paths,
 * and with its guard off would set the prototype, hence our own small writer.)
 */
export function applyJsonPatch(doc: JsonValue, body: unknown): JsonValue {
  if (body === null) return cloneJson(doc);
  if (!Array.isArray(body)) {
    throw PatchError.badRequest(`json: cannot unmarshal ${jsonKind(body)} into Go value of type jsonpatch.Patch`);
  }
  for (const op of body) {
    if (op !== null && !isJsonObject(op)) {
      throw PatchError.badRequest(`json: cannot unmarshal ${jsonKind(op)} into Go value of type jsonpatch.Operation`);
    }
  }
  if (body.length > maxJsonPatchOperations) {
    throw new PatchError(
      413,
      'RequestEntityTooLarge',
      `Request entity too large: The allowed maximum operations in a JSON patch is ${maxJsonPatchOperations}, got ${body.length}`,
    );
  }
  let current: JsonValue = cloneJson(doc);
  body.forEach((op: JsonObject | null, index) => {
    try {
      current = applyOperation(current, op ?? {});
    } catch (e) {
      if (e instanceof OperationError) {
        throw PatchError.invalid(
          `the server rejected our request due to an error in our request: operation ${index} (${JSON.stringify(op)}): ${e.message}`,
        );
      }
      throw e;
    }
  });
  return current;
}

/** An operation that does not apply, worded as evanphx/json-patch v4 words it. */
class OperationError extends Error {}

type Parent = { array: JsonValue[]; key: string } | { object: JsonObject; key: string };

/** evanphx's `findObject`: the container of the last segment, or undefined when a step is missing. */
function findParent(doc: JsonValue, path: string): Parent | undefined {
  const segments = path.split('/');
  if (segments.length < 2) return undefined;
  let node: JsonValue | undefined = doc;
  for (const raw of segments.slice(1, -1)) {
    const part = unescapePointer(raw);
    if (Array.isArray(node)) {
      const index = arrayIndex(part, node.length, false);
      node = typeof index === 'number' ? node[index] : undefined;
    } else if (isJsonObject(node)) {
      node = Object.hasOwn(node, part) ? node[part] : undefined;
    } else {
      return undefined;
    }
    if (node === undefined || node === null || (typeof node !== 'object')) return undefined;
  }
  const key = unescapePointer(segments[segments.length - 1] as string);
  if (Array.isArray(node)) return { array: node, key };
  if (isJsonObject(node)) return { object: node, key };
  return undefined;
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/**
 * Go's `strconv.Atoi` plus v4's negative-index rule; `forInsert` allows `length` itself (add).
 * Returns the non-negative index, or the error text.
 */
function arrayIndex(key: string, length: number, forInsert: boolean): number | string {
  if (!/^[+-]?[0-9]+$/.test(key)) return `strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`;
  let index = Number(key);
  const size = forInsert ? length + 1 : length;
  if (index >= size || index < -size) return `Unable to access invalid index: ${index}: invalid index referenced`;
  if (index < 0) index += size;
  return index;
}

function stringField(op: JsonObject, name: 'path' | 'from'): string | undefined {
  const value = op[name];
  return typeof value === 'string' ? value : undefined;
}

function applyOperation(doc: JsonValue, op: JsonObject): JsonValue {
  const kind = typeof op.op === 'string' ? op.op : 'unknown';
  const path = stringField(op, 'path');
  const value: JsonValue = Object.hasOwn(op, 'value') ? (op.value as JsonValue) : null;
  const missingPath = 'operation missing path field: missing value';
  const missingFrom = 'operation, missing from field: missing value';
  switch (kind) {
    case 'add': {
      if (path === undefined) throw new OperationError('add operation failed to decode path: missing value');
      const parent = findParent(doc, path);
      if (!parent) throw new OperationError(`add operation does not apply: doc is missing path: "${path}": missing value`);
      return write(doc, 'add', slotFor(parent, true, false, `error in add for path: '${path}'`), value);
    }
    case 'remove': {
      if (path === undefined) throw new OperationError('remove operation failed to decode path: missing value');
      const parent = findParent(doc, path);
      if (!parent) throw new OperationError(`remove operation does not apply: doc is missing path: "${path}": missing value`);
      return write(doc, 'remove', slotFor(parent, false, true, `error in remove for path: '${path}'`));
    }
    case 'replace': {
      if (path === undefined) throw new OperationError(`replace operation failed to decode path: ${missingPath}`);
      if (path === '') return value !== null && typeof value === 'object' ? cloneJson(value) : doc;
      const parent = findParent(doc, path);
      if (!parent) throw new OperationError(`replace operation does not apply: doc is missing path: ${path}: missing value`);
      if ('array' in parent && typeof arrayIndex(parent.key, parent.array.length, false) === 'string') {
        throw new OperationError(`replace operation does not apply: doc is missing key: ${path}: missing value`);
      }
      // A missing object member is simply set: v4 does not check that it exists.
      return write(doc, 'replace', slotFor(parent, false, false, `error in remove for path: '${path}'`), value);
    }
    case 'move': {
      const from = stringField(op, 'from');
      if (from === undefined) throw new OperationError(`move operation failed to decode from: ${missingFrom}`);
      const source = findParent(doc, from);
      if (!source) throw new OperationError(`move operation does not apply: doc is missing from path: ${from}: missing value`);
      const fromSlot = slotFor(source, false, true, `error in move for path: '${source.key}'`);
      if (path === undefined) throw new OperationError(`move operation failed to decode path: ${missingPath}`);
      const moved = readAt(source);
      const afterRemove = write(doc, 'remove', fromSlot);
      const target = findParent(afterRemove, path);
      if (!target) throw new OperationError(`move operation does not apply: doc is missing destination path: ${path}: missing value`);
      return write(afterRemove, 'add', slotFor(target, true, false, `error in move for path: '${path}'`), moved);
    }
    case 'copy': {
      const from = stringField(op, 'from');
      if (from === undefined) throw new OperationError(`copy operation failed to decode from: ${missingFrom}`);
      const source = findParent(doc, from);
      if (!source) throw new OperationError(`copy operation does not apply: doc is missing from path: ${from}: missing value`);
      if ('array' in source) {
        const index = arrayIndex(source.key, source.array.length, false);
        if (typeof index === 'string') throw new OperationError(`error in copy for from: '${from}': ${index}`);
      }
      if (path === undefined) throw new OperationError('copy operation failed to decode path: missing value');
      const target = findParent(doc, path);
      if (!target) throw new OperationError(`copy operation does not apply: doc is missing destination path: ${path}: missing value`);
      return write(doc, 'add', slotFor(target, true, false, 'error while adding value during copy'), readAt(source));
    }
    case 'test': {
      if (path === undefined) throw new OperationError(`test operation failed to decode path: ${missingPath}`);
      if (path === '') {
        if (jsonEqual(doc, value)) return doc;
        throw new OperationError(`testing value ${path} failed: test failed`);
      }
      const parent = findParent(doc, path);
      if (!parent) throw new OperationError(`test operation does not apply: is missing path: ${path}: missing value`);
      if ('array' in parent) {
        const index = arrayIndex(parent.key, parent.array.length, false);
        if (typeof index === 'string') throw new OperationError(`error in test for path: '${path}': ${index}`);
      }
      const actual = readAt(parent);
      if (actual === null ? value === null : jsonEqual(actual, value)) return doc;
      throw new OperationError(`testing value ${path} failed: test failed`);
    }
    default:
      throw new OperationError(`Unexpected kind: ${kind}`);
  }
}

/** The value at `parent.key` (null when the member is missing, as v4 reads it). */
function readAt(parent: Parent): JsonValue {
  if ('array' in parent) {
    const index = arrayIndex(parent.key, parent.array.length, false);
    return typeof index === 'number' ? (parent.array[index] as JsonValue) : null;
  }
  return Object.hasOwn(parent.object, parent.key) ? (parent.object[parent.key] as JsonValue) : null;
}

/** Where an operation writes: an object's member, or an array's index (`-`: past the end). */
type Slot = { array: JsonValue[]; index: number | '-' } | { object: JsonObject; key: string };

/**
 * Checks the last segment and returns where the operation writes. `insert` allows `-` and the
 * index just past the end (add and the targets of move and copy); `requireMember` refuses a
 * missing object member (remove, and the source of move). `context` starts v4's message
 * (`error in add for path: '/a/0'`).
 */
function slotFor(parent: Parent, insert: boolean, requireMember: boolean, context: string): Slot {
  if ('array' in parent) {
    if (insert && parent.key === '-') return { array: parent.array, index: '-' };
    const index = arrayIndex(parent.key, parent.array.length, insert);
    if (typeof index === 'string') {
      const numeric = /^[+-]?[0-9]+$/.test(parent.key);
      throw new OperationError(`${context}: ${numeric || !insert ? index : `value was not a proper array index: '${parent.key}': ${index}`}`);
    }
    return { array: parent.array, index };
  }
  if (requireMember && !Object.hasOwn(parent.object, parent.key)) {
    throw new OperationError(`${context}: Unable to remove nonexistent key: ${parent.key}: missing value`);
  }
  return parent;
}

/**
 * Carries out one checked operation on `doc` (a private copy, changed in place) and returns it.
 * `add` inserts into an array and sets an object's member; `replace` overwrites either. The value
 * is copied, so that a later operation of the patch cannot change the body through it.
 */
function write(doc: JsonValue, op: 'add' | 'remove' | 'replace', slot: Slot, value: JsonValue = null): JsonValue {
  if ('object' in slot) {
    if (op === 'remove') delete slot.object[slot.key];
    else setMember(slot.object, slot.key, cloneJson(value));
  } else if (slot.index === '-') {
    slot.array.push(cloneJson(value));
  } else if (op === 'add') {
    slot.array.splice(slot.index, 0, cloneJson(value));
  } else if (op === 'remove') {
    slot.array.splice(slot.index, 1);
  } else {
    slot.array[slot.index] = cloneJson(value);
  }
  return doc;
}
