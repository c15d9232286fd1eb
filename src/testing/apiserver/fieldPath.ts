import { isJsonObject, type JsonObject, type JsonValue } from './jsonValue.js';

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

/** `k:{...}` with the key fields in sorted order, as structured-merge-diff serializes keys. */
export function keyElement(keys: Readonly<Record<string, JsonValue>>): PathElement {
  const sorted: JsonObject = {};
  for (const name of Object.keys(keys).sort()) sorted[name] = keys[name] as JsonValue;
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

export function union(...sets: FieldSet[]): FieldSet {
  const out = new Set<string>();
  for (const set of sets) for (const member of set) out.add(member);
  return out;
}

export function difference(a: FieldSet, b: FieldSet): FieldSet {
  return new Set([...a].filter((member) => !b.has(member)));
}

export function intersection(a: FieldSet, b: FieldSet): FieldSet {
  return new Set([...a].filter((member) => b.has(member)));
}

/** The set a FieldsV1 object describes; anything that is not FieldsV1-shaped is an error. */
export function fieldsV1ToSet(fields: unknown): FieldSet {
  const set: FieldSet = new Set();
  const walk = (node: unknown, path: PathElement[]): void => {
    if (!isJsonObject(node)) throw new Error(`FieldsV1 node at ${JSON.stringify(path)} is not an object`);
    for (const [element, child] of Object.entries(node)) {
      if (element === '.') {
        set.add(pathKey(path));
        continue;
      }
      if (!/^[fkvi]:/.test(element)) throw new Error(`unknown FieldsV1 path element ${JSON.stringify(element)}`);
      const childPath = [...path, element];
      if (isJsonObject(child) && Object.keys(child).length === 0) set.add(pathKey(childPath));
      else walk(child, childPath);
    }
  };
  walk(fields, []);
  return set;
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

/** The FieldsV1 object for a set, with `.` first and elements in a stable order. */
export function setToFieldsV1(set: FieldSet): JsonObject {
  const root: TreeNode = { member: false, children: new Map() };
  for (const key of set) {
    let node = root;
    for (const element of pathElements(key)) {
      let next = node.children.get(element);
      if (!next) {
        next = { member: false, children: new Map() };
        node.children.set(element, next);
      }
      node = next;
    }
    node.member = true;
  }
  const render = (node: TreeNode): JsonObject => {
    const out: JsonObject = {};
    if (node.member && node.children.size > 0) out['.'] = {};
    for (const element of [...node.children.keys()].sort(compareElements)) out[element] = render(node.children.get(element) as TreeNode);
    return out;
  };
  return render(root);
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
