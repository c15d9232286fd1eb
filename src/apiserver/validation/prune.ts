import { cloneJson, isPlainObject, ownMember, setMember } from '../../util/json.js';
import type { SchemaNode } from './schemaNode.js';

/**
 * What kube's decoding does to a custom resource before validating it:
 * drops fields the schema does not declare (unless a level keeps unknown
 * fields), drops nulls where the schema allows none and has no default,
 * and fills in `default`s of missing (or null) properties. Parts shared
 * with the stored object are frozen; they were pruned when stored and are
 * left as they are.
 */

const rootFields = new Set(['apiVersion', 'kind', 'metadata']);

/** Prunes and defaults `value` in place; returns the paths of the pruned fields (`.spec.foo`). */
export function pruneAndDefault(value: unknown, node: SchemaNode, path: string, root: boolean, unknown: string[]): void {
  if (Array.isArray(value)) {
    const items = node.items;
    if (items !== undefined && !Object.isFrozen(value)) value.forEach((item, i) => pruneAndDefault(item, items, `${path}[${i}]`, false, unknown));
    return;
  }
  if (!isPlainObject(value) || Object.isFrozen(value)) return;
  for (const [name, fallback] of node.defaults) {
    const current = ownMember(value, name);
    if (current === undefined || (current === null && node.properties?.get(name)?.nullable !== true)) setMember(value, name, cloneJson(fallback));
  }
  const keep = node.preserveUnknown || node.additionalAny;
  for (const key of Object.keys(value)) {
    if ((root || node.embedded) && rootFields.has(key)) continue;
    const child = node.properties?.get(key) ?? node.additional;
    if (child === undefined) {
      if (!keep) {
        unknown.push(`${path}.${key}`);
        delete value[key];
      }
      continue;
    }
    if (value[key] === null && !child.nullable && child.raw.default === undefined) {
      delete value[key];
      continue;
    }
    pruneAndDefault(value[key], child, `${path}.${key}`, false, unknown);
  }
}
