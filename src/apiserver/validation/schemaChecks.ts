import type { FieldError } from '../api/statusError.js';
import { goQuote, goSharpV } from './goText.js';
import type { SchemaNode } from './schemaNode.js';

/**
 * What kube's CRD validation rejects in a schema that this validator
 * relies on: `uniqueItems: true` (forbidden: it would make validation
 * quadratic; `x-kubernetes-list-type: set` is the structural way), and
 * list types that are no list type, map lists without keys or with keys
 * that are not properties of their items.
 */
export function schemaKeywordErrors(node: SchemaNode, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const visit = (n: SchemaNode, at: string): void => {
    if (n.uniqueItems) errors.push({ field: `${at}.uniqueItems`, type: 'Forbidden', detail: 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic' });
    const listType = n.listType;
    if (listType !== undefined) {
      if (n.type !== 'array') errors.push({ field: `${at}.type`, type: n.type === undefined ? 'Required value' : 'Invalid value', ...(n.type === undefined ? {} : { shown: goQuote(n.type) }), detail: 'must be array if x-kubernetes-list-type is specified' });
      if (!['atomic', 'set', 'map'].includes(listType)) {
        errors.push({ field: `${at}.x-kubernetes-list-type`, type: 'Unsupported value', shown: goQuote(listType), detail: 'supported values: "atomic", "set", "map"' });
      }
    }
    if (n.listMapKeys.length > 0 && listType !== 'map') {
      errors.push(
        listType === undefined
          ? { field: `${at}.x-kubernetes-list-type`, type: 'Required value', detail: 'must be map if x-kubernetes-list-map-keys is non-empty' }
          : { field: `${at}.x-kubernetes-list-type`, type: 'Invalid value', shown: goQuote(listType), detail: 'must be map if x-kubernetes-list-map-keys is non-empty' },
      );
    }
    if (listType === 'map') {
      if (n.listMapKeys.length === 0) errors.push({ field: `${at}.x-kubernetes-list-map-keys`, type: 'Required value', detail: 'must not be empty if x-kubernetes-list-type is map' });
      else if (n.items === undefined) errors.push({ field: `${at}.items`, type: 'Required value', detail: 'must have a schema if x-kubernetes-list-type is map' });
      else if (n.items.type !== 'object') errors.push({ field: `${at}.items.type`, type: 'Invalid value', shown: goQuote(n.items.type ?? ''), detail: "must be object if parent array's x-kubernetes-list-type is map" });
      else if (n.listMapKeys.some((k) => n.items?.properties?.get(k) === undefined)) {
        errors.push({ field: `${at}.x-kubernetes-list-map-keys`, type: 'Invalid value', shown: `[]string{${n.listMapKeys.map(goQuote).join(', ')}}`, detail: 'entries must all be names of item properties' });
      } else if (new Set(n.listMapKeys).size !== n.listMapKeys.length) {
        errors.push({ field: `${at}.x-kubernetes-list-map-keys`, type: 'Invalid value', shown: goSharpV(n.listMapKeys), detail: 'must not contain duplicate entries' });
      }
    }
    for (const [name, child] of n.properties ?? []) visit(child, `${at}.properties[${name}]`);
    if (n.additional !== undefined) visit(n.additional, `${at}.additionalProperties`);
    if (n.items !== undefined) visit(n.items, `${at}.items`);
  };
  visit(node, path);
  return errors;
}
