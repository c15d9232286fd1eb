import { childShape, type Shape } from '../api/builtinSchema.js';
import { cloneJson, ownMember, setMember } from '../../util/json.js';
import { goFormat, goTypeName, isJsonObject, type JsonObject, type JsonValue } from './jsonValue.js';
import { PatchError } from './patchError.js';

/**
 * Strategic merge patch (`application/strategic-merge-patch+json`) for built-in kinds, with
 * apimachinery's `StrategicMergeMapPatch` semantics as kube-apiserver applies it:
 *
 * - Objects merge key by key; `null` deletes a key; a key whose value changes type is replaced.
 * - Lists whose field has `patchStrategy: merge` (see {@link Shape}) merge: lists of objects by
 *   their `patchMergeKey` (items matched by key are merged recursively, new ones appended),
 *   lists of scalars as a set (union, first occurrence kept). Every other list is replaced.
 * - Order of a merged list: the patch's items in the patch's order, with the server's other
 *   items kept in their relative order and woven in where the live order puts them.
 * - Directives: `$patch: replace` (in an object: the object becomes the patch's object; as a list
 *   item: the list becomes the patch's other items), `$patch: delete` (an object: removed; a list
 *   item: every item with its merge key removed), `$retainKeys: [..]` (keys of the live object
 *   not listed are dropped; every key the patch sets must be listed),
 *   `$deleteFromPrimitiveList/<field>: [..]` (remove those scalars from the list),
 *   `$setElementOrder/<field>: [..]` (the final order of the list's items; the patch's items must
 *   appear in that order).
 * - Kube's quirks are kept: a new value carrying a `$patch` directive is dropped, nulls inside a
 *   new value are dropped.
 *
 * Errors follow kube-apiserver: a malformed directive is 400 BadRequest (`invalid patch format of
 * retainKeys`, ...), a list of lists is 422, and the rest (an item without its merge key, an
 * unknown `$patch` value, mixed item types) are 422 Invalid (kube's own answer is a 500; see patchError.ts).
 *
 * Inputs are never modified; the result shares nothing with them.
 */
export function strategicMergePatch(original: JsonObject, patch: JsonObject, shape: Shape | undefined): JsonObject {
  const merged = mergeMap(cloneJson(original), cloneJson(patch), shape);
  return stripDirectives(merged) as JsonObject;
}

const directiveMarker = '$patch';
const retainKeysDirective = '$retainKeys';
const deleteFromPrimitiveListPrefix = '$deleteFromPrimitiveList';
const setElementOrderPrefix = '$setElementOrder';

const badPrimitiveList = (): PatchError => PatchError.badRequest('invalid patch format of primitive list');
const badRetainKeys = (): PatchError => PatchError.badRequest('invalid patch format of retainKeys');
const badSetElementOrder = (): PatchError => PatchError.badRequest('invalid patch format of setElementOrder list');
const noMergeKey = (m: unknown, key: string): PatchError =>
  PatchError.unfit(`map: ${goFormat(m)} does not contain declared merge key: ${key}`);
const badArgType = (expected: string, actual: unknown): PatchError =>
  PatchError.unfit(`expected a ${expected}, but received a ${goTypeName(actual)}`);

function mergeMap(original: JsonObject | undefined, patch: JsonObject, shape: Shape | undefined): JsonObject {
  if (Object.hasOwn(patch, directiveMarker)) {
    const directive = patch[directiveMarker];
    if (directive === 'replace') {
      delete patch[directiveMarker];
      return patch;
    }
    if (directive === 'delete') return {};
    throw PatchError.unfit(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(patch)}`);
  }
  const target = original ?? {};
  applyRetainKeys(target, patch);
  applySetElementOrder(target, patch, shape);

  for (const [patchKey, patchValue] of Object.entries(patch)) {
    let key = patchKey;
    let isDeleteList = false;
    if (patchKey.startsWith(deleteFromPrimitiveListPrefix)) {
      key = extractKey(patchKey, deleteFromPrimitiveListPrefix, badPrimitiveList);
      isDeleteList = true;
    }
    if (patchValue === null) {
      delete target[key];
      continue;
    }
    const current = target[key];
    if (!Object.hasOwn(target, key) || valueKind(current) !== valueKind(patchValue)) {
      if (!isDeleteList) setNewValue(target, key, patchValue);
      continue;
    }
    const child = childShape(shape, key);
    if (isJsonObject(current) && isJsonObject(patchValue)) {
      setMember(target, key, mergeMap(current, patchValue, child));
    } else if (Array.isArray(current) && Array.isArray(patchValue)) {
      const list = child?.list;
      setMember(target, key, list?.patchMerge || isDeleteList ? mergeSlice(current, patchValue, child, list?.patchMergeKey ?? '', isDeleteList, key) : patchValue);
    } else {
      setMember(target, key, patchValue);
    }
  }
  return target;
}

/** A value the live object did not have (or had with another type): nulls and `$patch` parts drop out. */
function setNewValue(target: JsonObject, key: string, value: JsonValue): void {
  discardNulls(value);
  const [cleaned, keep] = removeDirectives(value);
  if (keep) setMember(target, key, cleaned);
  else delete target[key];
}

type ValueKind = 'map' | 'slice' | 'string' | 'int' | 'float' | 'bool' | 'nil';

/** Go's dynamic type of a decoded JSON value (ints and floats differ, as kube decodes them). */
function valueKind(value: JsonValue | undefined): ValueKind {
  if (value === null || value === undefined) return 'nil';
  if (Array.isArray(value)) return 'slice';
  if (typeof value === 'object') return 'map';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return typeof value === 'string' ? 'string' : 'bool';
}

function extractKey(key: string, prefix: string, error: () => PatchError): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw error();
  return key.slice(slash + 1);
}

function applyRetainKeys(original: JsonObject, patch: JsonObject): void {
  if (!Object.hasOwn(patch, retainKeysDirective)) return;
  const retain = patch[retainKeysDirective];
  delete patch[retainKeysDirective];
  if (!Array.isArray(retain)) throw badRetainKeys();
  const keep = new Set(retain);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || key.startsWith(deleteFromPrimitiveListPrefix) || key.startsWith(setElementOrderPrefix)) continue;
    if (!keep.has(key)) throw badRetainKeys();
  }
  for (const key of Object.keys(original)) {
    if (!keep.has(key)) delete original[key];
  }
}

function applySetElementOrder(original: JsonObject, patch: JsonObject, shape: Shape | undefined): void {
  for (const directiveKey of Object.keys(patch)) {
    if (!directiveKey.startsWith(setElementOrderPrefix)) continue;
    const order = patch[directiveKey];
    delete patch[directiveKey];
    if (!Array.isArray(order)) throw badArgType('[]interface {}', order);
    const key = extractKey(directiveKey, setElementOrderPrefix, badSetElementOrder);
    const foundOriginal = Object.hasOwn(original, key);
    const foundPatch = Object.hasOwn(patch, key);
    const originalList = ownMember(original, key);
    const patchList = ownMember(patch, key);
    if (foundOriginal && !Array.isArray(originalList)) throw badArgType('[]interface {}', originalList);
    if (foundPatch && !Array.isArray(patchList)) throw badArgType('[]interface {}', patchList);
    const live = (originalList ?? []) as JsonValue[];
    const patched = (patchList ?? []) as JsonValue[];
    const child = childShape(shape, key);
    const mergeKey = child?.list?.patchMergeKey ?? '';
    validateAgainstOrder(patched, order, mergeKey);

    let merged: JsonValue[];
    if (foundOriginal && !foundPatch) merged = live;
    else if (!foundOriginal && foundPatch) merged = removeDirectives(patched)[0] as JsonValue[];
    else if (foundOriginal && foundPatch) {
      merged = child?.list?.patchMerge ? mergeSlice(live, patched, child, mergeKey, false, key) : patched;
    } else continue;

    const kind = elementKind(live, patched);
    const [inOrder, serverOnly] = partition(merged, order, mergeKey, kind);
    setMember(original, key, normalizeElementOrder(inOrder, serverOnly, order, live, mergeKey, kind));
    delete patch[key];
  }
}

/** The patch's items must appear in the `$setElementOrder` list, in the same relative order. */
function validateAgainstOrder(patchList: JsonValue[], order: JsonValue[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  let items = patchList;
  if (mergeKey !== '') {
    for (const item of patchList) if (!isJsonObject(item)) throw badArgType('map[string]interface {}', item);
    items = patchList.filter((item) => (item as JsonObject)[directiveMarker] !== 'delete');
  }
  let p = 0;
  let s = 0;
  while (p < items.length && s < order.length) {
    const item = items[p] as JsonValue;
    if (isJsonObject(item) && Object.hasOwn(item, directiveMarker)) {
      p++;
      continue;
    }
    if (mergeKeyValueEqual(item, order[s] as JsonValue, mergeKey)) p++;
    s++;
  }
  if (p < items.length && s >= order.length) {
    throw PatchError.unfit(
      `The order in patch list:\n${goFormat(patchList)}\n doesn't match ${setElementOrderPrefix} list:\n${goFormat(order)}\n`,
    );
  }
}

function mergeKeyValueEqual(left: JsonValue, right: JsonValue, mergeKey: string): boolean {
  if (mergeKey === '') return left === right;
  if (!isJsonObject(left)) throw badArgType('map[string]interface {}', left);
  if (!isJsonObject(right)) throw badArgType('map[string]interface {}', right);
  if (!Object.hasOwn(left, mergeKey)) throw noMergeKey(left, mergeKey);
  if (!Object.hasOwn(right, mergeKey)) throw noMergeKey(right, mergeKey);
  return left[mergeKey] === right[mergeKey];
}

/** The common kind of the items of both lists ("map", a scalar kind); kube refuses mixtures. */
function elementKind(...lists: JsonValue[][]): ValueKind {
  let kind: ValueKind | undefined;
  for (const list of lists) {
    for (const item of list) {
      const k = valueKind(item);
      if (kind === undefined) {
        if (k === 'slice') throw new PatchError(422, 'Invalid', 'the server rejected our request due to an error in our request: lists of lists are not supported');
        kind = k;
      } else if (k !== kind) {
        throw PatchError.unfit(`list element types are not identical: ${lists.map(goFormat).join(' ')}`);
      }
    }
  }
  if (kind === undefined) throw PatchError.unfit('no elements in any of the given slices');
  return kind;
}

function mergeSlice(
  original: JsonValue[],
  patch: JsonValue[],
  shape: Shape | undefined,
  mergeKey: string,
  isDeleteList: boolean,
  field: string,
): JsonValue[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind(original, patch);
  let merged: JsonValue[];
  let live = original;
  let patchItems = patch;
  if (kind !== 'map') {
    if (isDeleteList) return original.filter((item) => !patch.includes(item));
    merged = [...new Set([...original, ...patch])];
  } else {
    if (mergeKey === '') throw PatchError.unfit(`cannot merge lists without merge key for ${field}`);
    [live, patchItems] = applySpecialItems(original, patch as JsonObject[], mergeKey);
    merged = mergeItems(live, patchItems as JsonObject[], mergeKey, shape?.values);
  }
  const [inPatch, serverOnly] = partition(merged, patchItems, mergeKey, kind);
  return normalizeElementOrder(inPatch, serverOnly, patchItems, live, mergeKey, kind);
}

/** `$patch: delete` items delete by key; a `$patch: replace` item makes the other items the list. */
function applySpecialItems(original: JsonValue[], patch: JsonObject[], mergeKey: string): [JsonValue[], JsonValue[]] {
  const plain: JsonObject[] = [];
  let live = original;
  let replace = false;
  for (const item of patch) {
    if (!Object.hasOwn(item, directiveMarker)) {
      plain.push(item);
      continue;
    }
    const directive = item[directiveMarker];
    if (directive === 'delete') {
      if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
      live = live.filter((entry) => !(isJsonObject(entry) && Object.hasOwn(entry, mergeKey) && entry[mergeKey] === item[mergeKey]));
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw PatchError.unfit('merging lists cannot yet be specified in the patch');
    } else {
      throw PatchError.unfit(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(item)}`);
    }
  }
  return replace ? [plain, []] : [live, plain];
}

function mergeItems(original: JsonValue[], patch: JsonObject[], mergeKey: string, itemShape: Shape | undefined): JsonValue[] {
  const result = [...original];
  for (const item of patch) {
    if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
    const index = result.findIndex((entry) => isJsonObject(entry) && Object.hasOwn(entry, mergeKey) && entry[mergeKey] === item[mergeKey]);
    if (index >= 0) result[index] = mergeMap(result[index] as JsonObject, item, itemShape);
    else result.push(item);
  }
  return result;
}

function identity(item: JsonValue, mergeKey: string, kind: ValueKind): JsonValue | undefined {
  return kind === 'map' ? (isJsonObject(item) ? item[mergeKey] : undefined) : item;
}

function indexIn(list: JsonValue[], item: JsonValue, mergeKey: string, kind: ValueKind): number {
  const id = identity(item, mergeKey, kind);
  return list.findIndex((entry) => identity(entry, mergeKey, kind) === id);
}

/** Splits `merged` into the items named in `by` and the rest (items without the merge key are refused with 422). */
function partition(merged: JsonValue[], by: JsonValue[], mergeKey: string, kind: ValueKind): [JsonValue[], JsonValue[]] {
  const named: JsonValue[] = [];
  const rest: JsonValue[] = [];
  for (const item of merged) {
    if (kind === 'map') {
      if (!isJsonObject(item)) throw badArgType('map[string]interface {}', item);
      if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
    }
    (indexIn(by, item, mergeKey, kind) >= 0 ? named : rest).push(item);
  }
  return [named, rest];
}

/**
 * Sorts the patch's items by the patch order and the server-only items by the live order, then
 * weaves them: a server-only item goes before a patch item when the live object had it first.
 */
function normalizeElementOrder(
  patchItems: JsonValue[],
  serverOnly: JsonValue[],
  patchOrder: JsonValue[],
  serverOrder: JsonValue[],
  mergeKey: string,
  kind: ValueKind,
): JsonValue[] {
  const right = sortByOrder(patchItems, patchOrder, mergeKey, kind);
  const left = sortByOrder(serverOnly, serverOrder, mergeKey, kind);
  const out: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++] as JsonValue);
    else if (j >= right.length) out.push(left[i++] as JsonValue);
    else {
      const li = indexIn(serverOrder, left[i] as JsonValue, mergeKey, kind);
      const ri = indexIn(serverOrder, right[j] as JsonValue, mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++] as JsonValue);
      else out.push(right[j++] as JsonValue);
    }
  }
  return out;
}

function sortByOrder(items: JsonValue[], order: JsonValue[], mergeKey: string, kind: ValueKind): JsonValue[] {
  let keep = items;
  let deleted: JsonValue[] = [];
  if (kind === 'map') {
    for (const item of [...items, ...order]) {
      if (!isJsonObject(item)) throw badArgType('map[string]interface {}', item);
      if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
    }
    keep = items.filter((item) => (item as JsonObject)[directiveMarker] !== 'delete');
    deleted = items.filter((item) => (item as JsonObject)[directiveMarker] === 'delete');
  }
  const ranked = keep.map((item, position) => ({ item, position, rank: indexIn(order, item, mergeKey, kind) }));
  ranked.sort((a, b) => (a.rank >= 0 && b.rank >= 0 ? a.rank - b.rank : 0) || a.position - b.position);
  return [...ranked.map((r) => r.item), ...deleted];
}

/** Kube's `removeDirectives`: an object holding `$patch` disappears, recursively. Mutates. */
function removeDirectives(value: JsonValue): [JsonValue, boolean] {
  if (isJsonObject(value)) {
    if (Object.hasOwn(value, directiveMarker)) return [null, false];
    for (const [key, child] of Object.entries(value)) {
      const [cleaned, keep] = removeDirectives(child);
      if (keep) setMember(value, key, cleaned);
      else delete value[key];
    }
    return [value, true];
  }
  if (Array.isArray(value)) {
    const out: JsonValue[] = [];
    for (const item of value) {
      const [cleaned, keep] = removeDirectives(item);
      if (keep) out.push(cleaned);
    }
    return [out, true];
  }
  return [value, true];
}

/** Kube's `discardNullValuesFromPatch`: null members of objects go, at any depth. Mutates. */
function discardNulls(value: JsonValue): void {
  if (Array.isArray(value)) value.forEach(discardNulls);
  else if (isJsonObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (child === null) delete value[key];
      else discardNulls(child);
    }
  }
}

function isDirectiveKey(key: string): boolean {
  return (
    key === directiveMarker ||
    key === retainKeysDirective ||
    key.startsWith(`${setElementOrderPrefix}/`) ||
    key.startsWith(`${deleteFromPrimitiveListPrefix}/`)
  );
}

/**
 * Directives that kube leaves in the merged map (inside replaced values) are dropped by its
 * decoder as unknown fields; we drop them here so they are never stored.
 */
function stripDirectives(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (isJsonObject(value)) {
    for (const key of Object.keys(value)) {
      if (isDirectiveKey(key)) delete value[key];
      else value[key] = stripDirectives(value[key] as JsonValue);
    }
  }
  return value;
}
