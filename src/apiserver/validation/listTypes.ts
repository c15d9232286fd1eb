import { isPlainObject, ownMember, setMember } from '../../util/json.js';
import type { FieldError } from '../api/statusError.js';
import { goSharpV, goShown } from './goText.js';
import type { SchemaNode } from './schemaNode.js';

/**
 * The invariants of `x-kubernetes-list-type`: the items of a `set` are
 * unique, and in a `map` every item is an object and no two share the
 * values of `x-kubernetes-list-map-keys`. Each repeated item after its
 * first is a `Duplicate value`, shown as kube shows it (the item of a set,
 * the keys of a map item).
 */

const missing = Symbol('missing key');

/** A key under which two equal JSON values collide (object keys sorted). */
function identity(value: unknown): string {
  if (value === missing) return 'missing';
  if (Array.isArray(value)) return `[${value.map(identity).join(',')}]`;
  if (isPlainObject(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${identity(value[k])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'undefined';
}

/** Indexes of the second appearance of each repeated value (kube reports each repeated value once). */
function repeats(values: readonly unknown[]): number[] {
  const seen = new Map<string, number>();
  const out: number[] = [];
  values.forEach((v, i) => {
    const key = identity(v);
    const times = seen.get(key) ?? 0;
    if (times === 1) out.push(i);
    seen.set(key, times + 1);
  });
  return out;
}

function checkList(node: SchemaNode, list: readonly unknown[], name: string, errors: FieldError[]): void {
  if (node.listType === 'set') {
    for (const i of repeats(list)) errors.push({ field: `${name}[${i}]`, type: 'Duplicate value', shown: goShown(list[i]), detail: '' });
    return;
  }
  if (node.listType !== 'map') return;
  const notObject = list.findIndex((item) => item !== null && !isPlainObject(item));
  if (notObject !== -1) {
    errors.push({ field: `${name}[${notObject}]`, type: 'Invalid value', shown: goShown(list[notObject]), detail: 'must be an object for an array of list-type map' });
    return;
  }
  const keyValues = list.map((item) => {
    const key: Record<string, unknown> = {};
    for (const k of node.listMapKeys) if (isPlainObject(item) && ownMember(item, k) !== undefined) setMember(key, k, item[k]);
    return key;
  });
  for (const i of repeats(keyValues)) errors.push({ field: `${name}[${i}]`, type: 'Duplicate value', shown: goSharpV(keyValues[i]), detail: '' });
}

function visit(node: SchemaNode, value: unknown, name: string, errors: FieldError[]): void {
  if (!node.hasListTypes) return;
  if (Array.isArray(value)) {
    checkList(node, value, name, errors);
    const items = node.items;
    if (items !== undefined) value.forEach((item, i) => visit(items, item, `${name}[${i}]`, errors));
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    const schema = node.properties?.get(key) ?? node.additional;
    if (schema !== undefined) visit(schema, child, name === '' ? key : `${name}.${key}`, errors);
  }
}

export function listTypeErrors(node: SchemaNode, value: unknown): FieldError[] {
  const errors: FieldError[] = [];
  visit(node, value, '', errors);
  return errors;
}
