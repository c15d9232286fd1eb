import { isPlainObject, jsonEqual } from '../../util/json.js';
import type { FieldError } from '../api/statusError.js';
import type { Schema, SchemaNode } from './schemaNode.js';

/**
 * What kube's structural-schema check refuses under `allOf`, `anyOf`,
 * `oneOf` and `not` in a CRD's schema: those hold value validations only,
 * so a type, a default, a title or description, `nullable`,
 * `additionalProperties`, `externalDocs`, the `x-kubernetes-*` extensions
 * and a `metadata` property are forbidden there (save the two shapes of
 * int-or-string: `anyOf` of `type: integer` and `type: string`, directly
 * or as the first `allOf`); and every property or items that the root's
 * value validations name must also be in the structural schema. kube
 * sorts these errors.
 */

type Forbid = readonly [key: string, applies: (value: unknown) => boolean, detail: string];

const present = (v: unknown): boolean => v !== undefined;
const nonEmptyString = (v: unknown): boolean => typeof v === 'string' && v !== '';
const isTrue = (v: unknown): boolean => v === true;
const nonEmptyList = (v: unknown): boolean => Array.isArray(v) && v.length > 0;

const forbidden: readonly Forbid[] = [
  ['type', nonEmptyString, 'must be empty to be structural'],
  ['additionalProperties', present, 'must be undefined to be structural'],
  ['default', present, 'must be undefined to be structural'],
  ['title', nonEmptyString, 'must be empty to be structural'],
  ['description', nonEmptyString, 'must be empty to be structural'],
  ['nullable', isTrue, 'must be false to be structural'],
  ['externalDocs', present, 'must be undefined to be structural'],
  ['x-kubernetes-preserve-unknown-fields', isTrue, 'must be false to be structural'],
  ['x-kubernetes-embedded-resource', isTrue, 'must be false to be structural'],
  ['x-kubernetes-int-or-string', isTrue, 'must be false to be structural'],
  ['x-kubernetes-list-map-keys', nonEmptyList, 'must be empty to be structural'],
  ['x-kubernetes-list-type', present, 'must be undefined to be structural'],
  ['x-kubernetes-map-type', present, 'must be undefined to be structural'],
  ['x-kubernetes-validations', nonEmptyList, 'must be empty to be structural'],
];

const intOrStringAnyOf = [{ type: 'integer' }, { type: 'string' }];

function schemas(value: unknown): Schema[] {
  return Array.isArray(value) ? value.filter(isPlainObject) : [];
}

function propertiesOf(schema: Schema): [string, Schema][] {
  return isPlainObject(schema.properties) ? Object.entries(schema.properties).filter((e): e is [string, Schema] => isPlainObject(e[1])) : [];
}

/** The value validations of one level (its allOf, anyOf, oneOf, not), `skipAnyOf` for the int-or-string shapes. */
function valueValidation(schema: Schema, path: string, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, errors: FieldError[]): void {
  if (!skipAnyOf) schemas(schema.anyOf).forEach((s, i) => nested(s, `${path}.anyOf[${i}]`, false, errors));
  schemas(schema.allOf).forEach((s, i) => nested(s, `${path}.allOf[${i}]`, skipFirstAllOfAnyOf && i === 0, errors));
  schemas(schema.oneOf).forEach((s, i) => nested(s, `${path}.oneOf[${i}]`, false, errors));
  if (isPlainObject(schema.not)) nested(schema.not, `${path}.not`, false, errors);
}

function nested(schema: Schema, path: string, skipAnyOf: boolean, errors: FieldError[]): void {
  valueValidation(schema, path, skipAnyOf, false, errors);
  if (isPlainObject(schema.items)) nested(schema.items, `${path}.items`, false, errors);
  for (const [name, child] of propertiesOf(schema)) nested(child, `${path}.properties[${name}]`, false, errors);
  for (const [key, applies, detail] of forbidden) if (applies(schema[key])) errors.push({ field: `${path}.${key}`, type: 'Forbidden', detail });
  if (propertiesOf(schema).some(([name]) => name === 'metadata')) errors.push({ field: `${path}.properties[metadata]`, type: 'Forbidden', detail: 'must not be specified in a nested context' });
}

function branchesOf(s: Schema, at: string): [Schema, string][] {
  return [
    ...(isPlainObject(s.not) ? [[s.not, `${at}.not`] as [Schema, string]] : []),
    ...schemas(s.allOf).map((b, i): [Schema, string] => [b, `${at}.allOf[${i}]`]),
    ...schemas(s.anyOf).map((b, i): [Schema, string] => [b, `${at}.anyOf[${i}]`]),
    ...schemas(s.oneOf).map((b, i): [Schema, string] => [b, `${at}.oneOf[${i}]`]),
  ];
}

/** Every property and items a value validation `v` names must be in the structural schema `node` it sits beside. */
function completeness(v: Schema, node: SchemaNode | undefined, sPath: string, vPath: string, errors: FieldError[]): void {
  if (node === undefined) {
    errors.push({ field: sPath, type: 'Required value', detail: `because it is defined in ${vPath}` });
    return;
  }
  for (const [branch, at] of branchesOf(v, vPath)) completeness(branch, node, sPath, at, errors);
  if (isPlainObject(v.items)) completeness(v.items, node.items, `${sPath}.items`, `${vPath}.items`, errors);
  for (const [name, child] of propertiesOf(v)) {
    const counterpart = node.properties?.get(name);
    if (counterpart === undefined) errors.push({ field: `${sPath}.properties[${name}]`, type: 'Required value', detail: `because it is defined in ${vPath}.properties[${name}]` });
    else completeness(child, counterpart, `${sPath}.properties[${name}]`, `${vPath}.properties[${name}]`, errors);
  }
}

function text(e: FieldError): string {
  return `${e.field}: ${e.type}: ${e.detail}`;
}

export function combinatorSchemaErrors(root: SchemaNode, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const visit = (node: SchemaNode, at: string): void => {
    const raw = node.raw;
    const skipAnyOf = schemas(raw.anyOf).length === 2 && jsonEqual(raw.anyOf, intOrStringAnyOf);
    const first = schemas(raw.allOf)[0];
    const skipFirstAllOfAnyOf = first !== undefined && jsonEqual(first.anyOf, intOrStringAnyOf);
    if (node.combinators !== undefined) {
      valueValidation(raw, at, skipAnyOf, skipFirstAllOfAnyOf, errors);
      // kube checks completeness from the root's value validations only.
      if (node === root) for (const [branch, branchAt] of branchesOf(raw, at)) completeness(branch, node, at, branchAt, errors);
    }
    for (const [name, child] of node.properties ?? []) visit(child, `${at}.properties[${name}]`);
    if (node.additional !== undefined) visit(node.additional, `${at}.additionalProperties`);
    if (node.items !== undefined) visit(node.items, `${at}.items`);
  };
  visit(root, path);
  return errors.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}
