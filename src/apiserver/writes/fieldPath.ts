import { isJsonObject, type JsonObject, type JsonValue } from './jsonValue.js';
import { setMember } from '../../util/json.js';

/**
 * Field paths and sets of them, in the FieldsV1 format of `metadata.managedFields`
 * (structured-merge-diff's `fieldpath`). A path is a list of elements, each written as FieldsV1
 * writes it: `f:<name>` (a field), `k:<json>` (an item of an associative list, by its key fields
 * in sorted order, e.g. `k:{"containerPort":80,"protocol":"TCP"}`), `v:<json>` (an item of a set
 * list, by value) or `i:<n>` (by index).
 *
 * A {@link FieldSet} holds paths as strings (elements joined by NUL), which keeps union,
 * difference and intersection trivial; FieldsV1 is the nested form, where `{}` is a leaf and
 * `".": {}` marks a node that is itself in the set.
 */
export type PathElement = string;
export type FieldSet = Set<string>;

const separator = '\u0000';

export function pathKey(path: readonly PathElement[]): string {
  return path.join(separator);
}

export function pathElements(key: string): PathElement[] {
  return key === '' ? [] : key.split(separator);
}

export const fieldElement = (name: string): PathElement => `f:${name}`;
export const valueElement = (value: JsonValue): PathElement => `v:${JSON.stringify(value)}`;

/** Names JSON.stringify would not write as given: array indexes (written first, ascending); an undefined value it leaves out. */
const reorderedName = /^(?:0|[1-9][0-9]*)$/;

/** `k:{...}` with the key fields in sorted order, as structured-merge-diff serializes keys. */
export function keyElement(keys: Readonly<Record<string, JsonValue>>): PathElement {
  const names = Object.keys(keys).sort();
  // The JSON of the sorted object, written directly (this runs for every list item a write compares).
  if (!names.some((name) => reorderedName.test(name) || keys[name] === undefined)) {
    let text = 'k:{';
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      text += `${i === 0 ? '' : ','}${JSON.stringify(name)}:${JSON.stringify(keys[name])}`;
    }
    return `${text}}`;
  }
  const sorted: JsonObject = {};
  for (const name of names) setMember(sorted, name, keys[name] as JsonValue);
  return `k:${JSON.stringify(sorted)}`;
}

/** True when `key` or any path below it is in `set`. */
export function hasPathOrDescendant(set: FieldSet, key: string): boolean {
  if (set.has(key)) return true;
  const prefix = key === '' ? '' : key + separator;
  for (const member of set) if (member.startsWith(prefix) && member !== key) return true;
  return false;
}

export function isDescendantOrSelf(key: string, ancestor: string): boolean {
  return key === ancestor || ancestor === '' || key.startsWith(ancestor + separator);
}

/**
 * Field sets are values: once built, no code changes them. So the operations below return one of
 * their inputs unchanged when the result equals it (no copy), which also lets a cache of encoded
 * sets (fieldsV1Cache.ts) recognize a manager whose fields did not change.
 */
export function union(...sets: FieldSet[]): FieldSet {
  // The largest set is the base: the result is that set itself when the others add nothing.
  let first = sets[0];
  if (first === undefined) return new Set();
  for (const set of sets) if (set.size > first.size) first = set;
  let out: FieldSet | undefined;
  for (const set of sets) {
    if (set === first) continue;
    for (const member of set) {
      if (out === undefined) {
        if (first.has(member)) continue;
        out = new Set(first);
      }
      out.add(member);
    }
  }
  return out ?? first;
}

export function difference(a: FieldSet, b: FieldSet): FieldSet {
  if (a.size === 0 || b.size === 0) return a;
  if (b.size < a.size) {
    let out: FieldSet | undefined;
    for (const member of b) {
      if (!a.has(member)) continue;
      out ??= new Set(a);
      out.delete(member);
    }
    return out ?? a;
  }
  const out: FieldSet = new Set();
  for (const member of a) if (!b.has(member)) out.add(member);
  return out.size === a.size ? a : out;
}

export function intersection(a: FieldSet, b: FieldSet): FieldSet {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  const out: FieldSet = new Set();
  for (const member of small) if (large.has(member)) out.add(member);
  return out;
}

export function sameMembers(a: FieldSet, b: FieldSet): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const member of a) if (!b.has(member)) return false;
  return true;
}

function isFieldsV1Element(element: string): boolean {
  const tag = element[0];
  return element[1] === ':' && (tag === 'f' || tag === 'k' || tag === 'v' || tag === 'i');
}

function hasNoKeys(object: object): boolean {
  for (const key in object) if (Object.hasOwn(object, key)) return false;
  return true;
}

/** A FieldsV1 object decoded, with what a cache of decodings needs to know about it. */
export interface DecodedFieldsV1 {
  readonly set: FieldSet;
  /** Every node of the object is frozen, so it will always decode to `set`. */
  readonly frozen: boolean;
  /** The object is exactly what {@link setToFieldsV1} gives for `set`, key order included. */
  readonly canonical: boolean;
}

/** {@link fieldsV1ToSet}, telling also whether the object is frozen and canonical. */
export function decodeFieldsV1(fields: unknown): DecodedFieldsV1 {
  const set: FieldSet = new Set();
  const path: PathElement[] = [];
  let frozen = true;
  let canonical = true;
  const walk = (node: unknown, key: string): void => {
    if (!isJsonObject(node)) throw new Error(`FieldsV1 node at ${JSON.stringify(path)} is not an object`);
    if (frozen && !Object.isFrozen(node)) frozen = false;
    const elements = Object.keys(node);
    let previous: PathElement | undefined;
    for (let index = 0; index < elements.length; index++) {
      const element = elements[index] as PathElement;
      const child = node[element];
      if (element === '.') {
        // setToFieldsV1 writes `.` first, as `{}`, and only on a node that has children.
        if (canonical && (index !== 0 || elements.length === 1 || !isJsonObject(child) || !hasNoKeys(child))) canonical = false;
        if (frozen && !Object.isFrozen(child)) frozen = false;
        set.add(key);
        continue;
      }
      if (!isFieldsV1Element(element)) throw new Error(`unknown FieldsV1 path element ${JSON.stringify(element)}`);
      if (canonical && (element.includes(separator) || (previous !== undefined && !(compareElements(previous, element) < 0)))) canonical = false;
      previous = element;
      const childKey = path.length === 0 ? element : key + separator + element;
      if (isJsonObject(child) && hasNoKeys(child)) {
        if (frozen && !Object.isFrozen(child)) frozen = false;
        set.add(childKey);
        continue;
      }
      path.push(element);
      walk(child, childKey);
      path.pop();
    }
  };
  walk(fields, '');
  return { set, frozen, canonical };
}

/** The set a FieldsV1 object describes; anything that is not FieldsV1-shaped is an error. */
export function fieldsV1ToSet(fields: unknown): FieldSet {
  return decodeFieldsV1(fields).set;
}

interface TreeNode {
  member: boolean;
  children: Map<PathElement, TreeNode>;
}

const elementRank: Record<string, number> = { f: 0, v: 1, i: 2, k: 3 };

function compareElements(a: PathElement, b: PathElement): number {
  const rank = (elementRank[a[0] as string] ?? 9) - (elementRank[b[0] as string] ?? 9);
  if (rank !== 0) return rank;
  if (a[0] === 'i') return Number(a.slice(2)) - Number(b.slice(2));
  return a < b ? -1 : a > b ? 1 : 0;
}

function renderNode(node: TreeNode): JsonObject {
  const out: JsonObject = {};
  if (node.member && node.children.size > 0) out['.'] = {};
  const elements = [...node.children.keys()];
  if (elements.length > 1) elements.sort(compareElements);
  for (const element of elements) out[element] = renderNode(node.children.get(element) as TreeNode);
  return out;
}

/** The FieldsV1 object for a set, with `.` first and elements in a stable order. */
export function setToFieldsV1(set: FieldSet): JsonObject {
  const root: TreeNode = { member: false, children: new Map() };
  for (const key of set) {
    let node = root;
    // The elements of `key` (as pathElements splits them), without making the list.
    for (let start = 0; key !== ''; ) {
      const end = key.indexOf(separator, start);
      const element = end === -1 ? key.slice(start) : key.slice(start, end);
      let next = node.children.get(element);
      if (!next) {
        next = { member: false, children: new Map() };
        node.children.set(element, next);
      }
      node = next;
      if (end === -1) break;
      start = end + 1;
    }
    node.member = true;
  }
  return renderNode(root);
}

/** A path as kube prints it in conflicts: `.spec.containers[name="app"].image`, `.metadata.finalizers[="x"]`. */
export function formatPath(key: string): string {
  return pathElements(key)
    .map((element) => {
      const body = element.slice(2);
      switch (element[0]) {
        case 'f':
          return `.${body}`;
        case 'k': {
          const keys = JSON.parse(body) as JsonObject;
          return `[${Object.entries(keys)
            .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
            .join(',')}]`;
        }
        case 'v':
          return `[=${body}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
}
