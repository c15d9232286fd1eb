import { isPlainObject } from '../../util/json.js';
import type { FieldError } from '../api/statusError.js';
import { goShown } from './goText.js';
import type { SchemaNode } from './schemaNode.js';

/**
 * What kube checks of an object embedded in a custom resource
 * (`x-kubernetes-embedded-resource: true`): an `apiVersion` and a `kind`,
 * both non-empty strings, the group version parseable and the kind a
 * DNS-1035 label but for case. (Its metadata is not checked here.)
 */

const dns1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const dns1035Message =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character " +
  "(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

function checkEmbedded(value: Record<string, unknown>, name: string, errors: FieldError[]): void {
  const at = (field: string): string => (name === '' ? field : `${name}.${field}`);
  for (const field of ['apiVersion', 'kind'] as const) {
    const v = value[field];
    if (v === undefined) {
      errors.push({ field: at(field), type: 'Required value', detail: 'must not be empty' });
      continue;
    }
    if (typeof v !== 'string') errors.push({ field: at(field), type: 'Invalid value', shown: goShown(v), detail: 'must be a string' });
    else if (v === '') errors.push({ field: at(field), type: 'Invalid value', shown: '""', detail: 'must not be empty' });
    else if (field === 'apiVersion' && v.split('/').length > 2) errors.push({ field: at(field), type: 'Invalid value', shown: goShown(v), detail: `unexpected GroupVersion string: ${v}` });
    else if (field === 'kind' && (v.length > 63 || !dns1035.test(v.toLowerCase()))) {
      errors.push({ field: at(field), type: 'Invalid value', shown: goShown(v), detail: `may have mixed case, but should otherwise match: ${dns1035Message}` });
    }
  }
}

export function embeddedResourceErrors(node: SchemaNode, value: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const visit = (n: SchemaNode, v: unknown, name: string): void => {
    if (Array.isArray(v)) {
      const items = n.items;
      if (items !== undefined) v.forEach((item, i) => visit(items, item, `${name}[${i}]`));
      return;
    }
    if (!isPlainObject(v)) return;
    if (n.embedded) checkEmbedded(v, name, errors);
    for (const [key, child] of Object.entries(v)) {
      const declared = n.properties?.get(key);
      if (declared !== undefined) visit(declared, child, name === '' ? key : `${name}.${key}`);
      else if (n.additional !== undefined) visit(n.additional, child, `${name}[${key}]`);
    }
  };
  if (node.hasEmbedded) visit(node, value, '');
  return errors;
}
