import { childShape, type ListShape, type Shape } from '../api/builtinSchema.js';
import { fieldElement, hasPathOrDescendant, isDescendantOrSelf, keyElement, valueElement, type FieldSet, type PathElement, formatPath } from './fieldPath.js';
import { jsonEqual, ownMember, setMember } from '../../util/json.js';
import { isJsonObject, type JsonObject, type JsonValue } from './jsonValue.js';

/**
 * The typed operations of server-side apply (structured-merge-diff's `typed` package) over plain
 * JSON values and a {@link Shape}:
 * - {@link toFieldSet}: the fields an applied configuration sets;
 * - {@link compareValues}: which fields were added, modified or removed between two objects;
 * - {@link mergeApplied}: the live object with the applied configuration merged in;
 * - {@link pruneFields}: removing fields a manager stopped applying.
 *
 * Objects are granular unless their shape is atomic; lists are atomic unless their shape says
 * `set` (items named `v:<value>`) or `map` (items named `k:{keys}`). A `null` in an applied
 * configuration claims the field and removes it.
 */

/** An applied configuration that cannot be typed (kube answers these as 500 InternalError). */
export class TypedValueError extends Error {}

type NodeKind = 'object' | 'list' | 'leaf';

function nodeKind(value: JsonValue | undefined, shape: Shape | undefined): NodeKind {
  if (isJsonObject(value)) return shape?.atomic ? 'leaf' : 'object';
  if (Array.isArray(value)) return shape?.list && shape.list.type !== 'atomic' ? 'list' : 'leaf';
  return 'leaf';
}

/** Whether `key` is a declared field of an object of this shape (map entries are not). */
function isDeclaredField(shape: Shape | undefined, key: string): boolean {
  return !(shape?.values !== undefined && shape.fields?.[key] === undefined);
}

/** The key of a child path: `key` (a path key, `''` for the root) followed by `element`. */
function childKey(key: string, element: PathElement): string {
  return key === '' ? element : `${key}\u0000${element}`;
}

/** Checks one item (the `index`th) of a granular list at path `key` as kube types it; the key fields of a map-list item. */
function checkedItem(item: JsonValue, index: number, listShape: ListShape | undefined, key: string): Record<string, JsonValue> | undefined {
  if (listShape?.type === 'set') {
    if (item !== null && typeof item === 'object') {
      throw new TypedValueError(`${formatPath(key)}: element ${index}: expected a scalar in a set list`);
    }
    return undefined;
  }
  if (!isJsonObject(item)) throw new TypedValueError(`${formatPath(key)}: element ${index}: expected an object in an associative list`);
  const keys: Record<string, JsonValue> = {};
  for (const name of listShape?.keys ?? []) {
    const value = Object.hasOwn(item, name) ? item[name] : listShape?.keyDefaults?.[name];
    if (value === undefined || value === null) {
      throw new TypedValueError(
        `${formatPath(key)}: element ${index}: associative list with keys has an element that omits key field ${JSON.stringify(name)} (and doesn't have default value)`,
      );
    }
    setMember(keys, name, value);
  }
  return keys;
}

/** The path element of each item of a granular list at path `key`; `strict` refuses duplicates (applied configurations). */
function itemElements(list: JsonValue[], shape: Shape, key: string, strict: boolean): PathElement[] {
  const listShape = shape.list;
  const seen = new Set<PathElement>();
  return list.map((item, index) => {
    const keys = checkedItem(item, index, listShape, key);
    const element = keys === undefined ? valueElement(item) : keyElement(keys);
    if (seen.has(element)) {
      if (strict) throw new TypedValueError(`${formatPath(key)}: duplicate entries for key ${formatPath(element)}`);
    }
    seen.add(element);
    return element;
  });
}

/** The fields an applied configuration sets: leaves, atomic values, list items, empty objects. */
export function toFieldSet(value: JsonValue, shape: Shape | undefined): FieldSet {
  const set: FieldSet = new Set();
  const walk = (node: JsonValue, nodeShape: Shape | undefined, key: string): void => {
    const kind = nodeKind(node, nodeShape);
    if (kind === 'object') {
      for (const [name, child] of Object.entries(node as JsonObject)) {
        const childPath = childKey(key, fieldElement(name));
        walk(child, childShape(nodeShape, name), childPath);
        const emptyObject = isJsonObject(child) && Object.keys(child).length === 0;
        if (child === null || emptyObject || !isDeclaredField(nodeShape, name)) set.add(childPath);
      }
    } else if (kind === 'list') {
      const items = node as JsonValue[];
      const elements = itemElements(items, nodeShape as Shape, key, true);
      items.forEach((item, i) => {
        const itemPath = childKey(key, elements[i] as PathElement);
        walk(item, nodeShape?.values, itemPath);
        set.add(itemPath);
      });
    } else if (key !== '') {
      set.add(key);
    }
  };
  walk(value, shape, '');
  return set;
}

export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

/**
 * What comparing a value with itself amounts to: nothing changed, but its granular lists are
 * still keyed, which throws for a list that cannot be (as comparing the two sides would). Only
 * the first item of each key is looked into, as a comparison does.
 */
function checkLists(value: JsonValue, shape: Shape | undefined, key: string): void {
  if (shape === undefined) return;
  const kind = nodeKind(value, shape);
  if (kind === 'object') {
    const object = value as JsonObject;
    for (const name of Object.keys(object)) {
      const nameShape = childShape(shape, name);
      if (mayHoldLists(nameShape)) checkLists(object[name] as JsonValue, nameShape, childKey(key, fieldElement(name)));
    }
  } else if (kind === 'list') {
    const items = value as JsonValue[];
    if (!mayHoldLists(shape.values)) {
      // Nothing to look into below the items: checking them is all there is (no keys to write).
      items.forEach((item, i) => checkedItem(item, i, shape.list, key));
      return;
    }
    const elements = itemElements(items, shape, key, false);
    const seen = new Set<PathElement>();
    items.forEach((item, i) => {
      const element = elements[i] as PathElement;
      if (seen.has(element)) return;
      seen.add(element);
      checkLists(item, shape.values, childKey(key, element));
    });
  }
}

/** Whether a value of this shape can hold a granular list (so that keying its lists can fail). */
function mayHoldLists(shape: Shape | undefined): boolean {
  if (shape === undefined) return false;
  if (shape.list !== undefined && shape.list.type !== 'atomic') return true;
  if (shape.atomic) return false;
  for (const name in shape.fields) if (mayHoldLists(shape.fields[name])) return true;
  return mayHoldLists(shape.values);
}

/**
 * What changed from `before` to `after`: leaves whose value differs are modified; a node present
 * on one side only is added or removed together with everything below it. A part both sides
 * share (the same object: stored objects are frozen, so writes share what they keep) is unchanged.
 */
export function compareValues(before: JsonValue | undefined, after: JsonValue | undefined, shape: Shape | undefined): Comparison {
  const result = { added: new Set<string>(), modified: new Set<string>(), removed: new Set<string>() };
  const oneSided = (value: JsonValue, nodeShape: Shape | undefined, key: string, into: FieldSet): void => {
    if (key !== '') into.add(key);
    const kind = nodeKind(value, nodeShape);
    if (kind === 'object') {
      for (const [name, child] of Object.entries(value as JsonObject)) {
        oneSided(child, childShape(nodeShape, name), childKey(key, fieldElement(name)), into);
      }
    } else if (kind === 'list') {
      const items = value as JsonValue[];
      const elements = itemElements(items, nodeShape as Shape, key, false);
      items.forEach((item, i) => oneSided(item, nodeShape?.values, childKey(key, elements[i] as PathElement), into));
    }
  };
  const walk = (l: JsonValue | undefined, r: JsonValue | undefined, nodeShape: Shape | undefined, key: string): void => {
    if (l === r) {
      if (l !== undefined) checkLists(l, nodeShape, key);
      return;
    }
    if (l === undefined) return oneSided(r as JsonValue, nodeShape, key, result.added);
    if (r === undefined) return oneSided(l, nodeShape, key, result.removed);
    const kind = nodeKind(l, nodeShape);
    if (kind !== nodeKind(r, nodeShape) || kind === 'leaf') {
      if (!jsonEqual(l, r) && key !== '') result.modified.add(key);
      return;
    }
    // Equal copies (a body that sends back what it read) hold no change either, but their lists are keyed.
    if (jsonEqual(l, r)) return checkLists(l, nodeShape, key);
    if (kind === 'object') {
      const lo = l as JsonObject;
      const ro = r as JsonObject;
      for (const name of Object.keys(lo)) walk(lo[name], ro[name], childShape(nodeShape, name), childKey(key, fieldElement(name)));
      for (const name of Object.keys(ro)) {
        if (!Object.hasOwn(lo, name)) walk(lo[name], ro[name], childShape(nodeShape, name), childKey(key, fieldElement(name)));
      }
      return;
    }
    const li = l as JsonValue[];
    const ri = r as JsonValue[];
    const lElements = itemElements(li, nodeShape as Shape, key, false);
    const rElements = itemElements(ri, nodeShape as Shape, key, false);
    const lItems = new Map<PathElement, JsonValue>();
    li.forEach((item, i) => lItems.has(lElements[i] as string) || lItems.set(lElements[i] as string, item));
    const rItems = new Map<PathElement, JsonValue>();
    ri.forEach((item, i) => rItems.has(rElements[i] as string) || rItems.set(rElements[i] as string, item));
    for (const element of new Set([...lItems.keys(), ...rItems.keys()])) {
      walk(lItems.get(element), rItems.get(element), nodeShape?.values, childKey(key, element));
    }
  };
  walk(before, after, shape, '');
  return result;
}

/** A copy of `value` without null members of objects (an applied `null` removes a field). */
function withoutNulls(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [key, child] of Object.entries(value)) if (child !== null) setMember(out, key, withoutNulls(child));
    return out;
  }
  return value;
}

/**
 * The live value with the applied configuration merged in: objects key by key, granular lists
 * item by item (keeping structured-merge-diff's order: the configuration's items in its order,
 * live-only items where they stood), everything else replaced by the configuration. What the
 * configuration does not touch is the live value itself, shared, not copied; what it sets is a
 * copy of it.
 */
export function mergeApplied(live: JsonValue | undefined, config: JsonValue | undefined, shape: Shape | undefined): JsonValue | undefined {
  if (config === undefined) return live;
  if (live === undefined || config === null) return withoutNulls(config);
  const kind = nodeKind(config, shape);
  if (kind !== nodeKind(live, shape) || kind === 'leaf') return withoutNulls(config);
  if (kind === 'object') {
    const out = { ...(live as JsonObject) };
    for (const [key, child] of Object.entries(config as JsonObject)) {
      if (child === null) delete out[key];
      else setMember(out, key, mergeApplied(ownMember(live as JsonObject, key), child, childShape(shape, key)) as JsonValue);
    }
    return out;
  }
  return mergeLists(live as JsonValue[], config as JsonValue[], shape as Shape, '');
}

function mergeLists(live: JsonValue[], config: JsonValue[], shape: Shape, key: string): JsonValue[] {
  const lElements = itemElements(live, shape, key, false);
  const rElements = itemElements(config, shape, key, true);
  const lItems = new Map<PathElement, JsonValue>();
  live.forEach((item, i) => lItems.has(lElements[i] as string) || lItems.set(lElements[i] as string, item));
  const rItems = new Map<PathElement, JsonValue>();
  config.forEach((item, i) => rItems.set(rElements[i] as string, item));
  const merge = (element: PathElement): JsonValue =>
    mergeApplied(lItems.get(element), rItems.get(element), shape.values) as JsonValue;

  // The configuration's order wins for shared items; live-only items keep their place.
  const shared = rElements.filter((element) => lItems.has(element));
  let nextShared = 0;
  const emitted = new Set<PathElement>();
  const out: JsonValue[] = [];
  let l = 0;
  let r = 0;
  while (l < lElements.length || r < rElements.length) {
    if (l < lElements.length && r < rElements.length) {
      const le = lElements[l] as PathElement;
      if (le === rElements[r]) {
        out.push(merge(le));
        emitted.add(le);
        l++;
        r++;
        nextShared++;
        continue;
      }
      if (rItems.has(le) && nextShared < shared.length && shared[nextShared] !== le) {
        l++;
        continue;
      }
    }
    if (l < lElements.length) {
      const le = lElements[l] as PathElement;
      if (!rItems.has(le)) {
        out.push(lItems.get(le) as JsonValue);
        l++;
        continue;
      }
      if (emitted.has(le)) l++;
    }
    if (r < rElements.length) {
      const re = rElements[r] as PathElement;
      if (!emitted.has(re)) {
        out.push(merge(re));
        emitted.add(re);
      }
      r++;
      if (shared[nextShared] === re) nextShared++;
    }
  }
  return out;
}

/**
 * Removes from `value` the fields in `remove` that nobody in `owned` still holds (a node stays
 * while anything below it is owned; the key fields of a kept list item always stay).
 *
 * A declared field above a removed one goes too when nobody owns anything below it, as
 * structured-merge-diff's prune does (it counts the named fields on the way to each removed path
 * among the removed, `EnsureNamedFieldsAreMembers`, and adds back only what a manager owns):
 * a re-apply without a container's `env` leaves no `env: []`, without a template's annotations
 * no `annotations: {}`. The object's own `metadata` always stays (kube's applier always owns
 * its `metadata.name`, which the recorded sets leave out).
 */
export function pruneFields(value: JsonValue, remove: FieldSet, owned: FieldSet, shape: Shape | undefined): JsonValue {
  if (remove.size === 0) return value;
  const relevant = (key: string): boolean => [...remove].some((member) => isDescendantOrSelf(member, key));
  const walk = (node: JsonValue, nodeShape: Shape | undefined, key: string, keep: ReadonlySet<string>): JsonValue => {
    const kind = nodeKind(node, nodeShape);
    if (kind === 'object') {
      const out: JsonObject = {};
      for (const [name, child] of Object.entries(node as JsonObject)) {
        const nameKey = childKey(key, fieldElement(name));
        const removable = remove.has(nameKey) || (isDeclaredField(nodeShape, name) && !(key === '' && name === 'metadata') && relevant(nameKey));
        if (removable && !keep.has(name) && !hasPathOrDescendant(owned, nameKey)) continue;
        setMember(out, name, relevant(nameKey) ? walk(child, childShape(nodeShape, name), nameKey, new Set()) : child);
      }
      return out;
    }
    if (kind === 'list') {
      const items = node as JsonValue[];
      const elements = itemElements(items, nodeShape as Shape, key, false);
      const keyFields = new Set(nodeShape?.list?.keys ?? []);
      const out: JsonValue[] = [];
      items.forEach((item, i) => {
        const itemKey = childKey(key, elements[i] as PathElement);
        if (remove.has(itemKey) && !hasPathOrDescendant(owned, itemKey)) return;
        out.push(relevant(itemKey) ? walk(item, nodeShape?.values, itemKey, keyFields) : item);
      });
      return out;
    }
    return node;
  };
  return walk(value, shape, '', new Set());
}
