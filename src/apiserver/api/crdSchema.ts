import { cloneJson, isPlainObject, jsonEqual } from '../../util/json.js';
import type { FieldError } from './statusError.js';

/**
 * What kube-apiserver does with a custom resource against its CRD's
 * structural schema (`openAPIV3Schema`) on every write:
 * - prunes fields the schema does not declare (unless a level says
 *   `x-kubernetes-preserve-unknown-fields: true`), reporting them so the
 *   request's `fieldValidation` can warn (default), reject (`Strict`) or
 *   ignore them;
 * - fills in `default` values of missing properties;
 * - checks types, `required`, `enum` and `nullable`, as 422 field errors.
 * `apiVersion`, `kind` and `metadata` at the root are the server's, never
 * pruned. Other OpenAPI constraints (patterns, bounds, CEL rules) are not
 * checked here.
 */

type Schema = Record<string, unknown>;

export interface SchemaOutcome {
  /** Paths of the fields pruned, as kube names them (`.spec.foo`). */
  unknown: string[];
  errors: FieldError[];
}

const rootFields = new Set(['apiVersion', 'kind', 'metadata']);

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(expected: string, value: unknown): boolean {
  const actual = typeOf(value);
  return actual === expected || (expected === 'number' && actual === 'integer');
}

function fieldName(path: string): string {
  return path.replace(/^\./, '');
}

function checkValue(value: unknown, schema: Schema, path: string, outcome: SchemaOutcome): void {
  if (value === null) {
    if (schema.nullable !== true && schema['x-kubernetes-preserve-unknown-fields'] !== true && schema.type !== undefined) {
      outcome.errors.push({ field: fieldName(path), type: 'Invalid value', value: null, detail: `${fieldName(path)} in body must be of type ${String(schema.type)}: "null"` });
    }
    return;
  }
  if (schema['x-kubernetes-int-or-string'] === true) {
    if (typeof value !== 'string' && typeOf(value) !== 'integer') {
      outcome.errors.push({ field: fieldName(path), type: 'Invalid value', value, detail: `${fieldName(path)} in body must be of type integer or string: "${typeOf(value)}"` });
    }
    return;
  }
  const type = schema.type;
  if (typeof type === 'string' && !typeMatches(type, value)) {
    outcome.errors.push({ field: fieldName(path), type: 'Invalid value', value: typeOf(value), detail: `${fieldName(path)} in body must be of type ${type}: "${typeOf(value)}"` });
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => jsonEqual(allowed, value))) {
    outcome.errors.push({
      field: fieldName(path),
      type: 'Unsupported value',
      detail: `${JSON.stringify(value)}: supported values: ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`,
    });
  }
}

function walk(value: unknown, schema: Schema, path: string, outcome: SchemaOutcome, root: boolean): void {
  checkValue(value, schema, path, outcome);
  if (Array.isArray(value)) {
    const items = isPlainObject(schema.items) ? schema.items : undefined;
    if (items !== undefined) value.forEach((item, i) => walk(item, items, `${path}[${i}]`, outcome, false));
    return;
  }
  if (!isPlainObject(value)) return;
  const properties = isPlainObject(schema.properties) ? (schema.properties as Record<string, Schema>) : {};
  const additional = isPlainObject(schema.additionalProperties) ? (schema.additionalProperties as Schema) : undefined;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true || schema.additionalProperties === true;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  // Parts shared with the stored object are frozen and were pruned when stored: they are only checked.
  const mutable = !Object.isFrozen(value);
  if (mutable) {
    for (const [name, propertySchema] of Object.entries(properties)) {
      if (value[name] === undefined && propertySchema.default !== undefined) value[name] = cloneJson(propertySchema.default);
    }
  }
  for (const key of Object.keys(value)) {
    const child = `${path}.${key}`;
    if ((root || embedded) && rootFields.has(key)) continue;
    const propertySchema = properties[key] ?? additional;
    if (propertySchema !== undefined) walk(value[key], propertySchema, child, outcome, false);
    else if (!preserve && mutable) {
      outcome.unknown.push(child);
      delete value[key];
    }
  }
  if (Array.isArray(schema.required)) {
    for (const name of schema.required) {
      if (typeof name === 'string' && value[name] === undefined) outcome.errors.push({ field: fieldName(`${path}.${name}`), type: 'Required value', detail: '' });
    }
  }
}

/** Prunes, defaults and checks `object` (changed in place) against a CRD version's schema. */
export function applyCrdSchema(object: Record<string, unknown>, schema: unknown): SchemaOutcome {
  const outcome: SchemaOutcome = { unknown: [], errors: [] };
  if (isPlainObject(schema)) walk(object, schema, '', outcome, true);
  return outcome;
}
