import { isPlainObject, jsonEqual } from '../../util/json.js';
import type { FieldError } from '../api/statusError.js';
import { goBound, goFloat, goQuote, goShown } from './goText.js';
import type { Combinators, SchemaNode } from './schemaNode.js';

/**
 * The OpenAPI v3 keywords of a structural schema checked on a value, with
 * the messages of kube-openapi's validator as kube-apiserver 1.32 turns
 * them into field errors (`spec.size: Invalid value: 0: spec.size in body
 * should be greater than or equal to 1`, `Unsupported value`, `Required
 * value`, `Too long`, `Too many`), and the combinators allOf, anyOf, oneOf
 * and not. On an update, a level whose value equals
 * the stored one is not checked again (kube's validation ratcheting): an
 * object stored before a schema got stricter can still be updated
 * elsewhere.
 */

const typeInvalid = 'FieldValueTypeInvalid';

function jsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (isPlainObject(value)) return 'object';
  return typeof value;
}

function typeMatches(expected: string, actual: string): boolean {
  return expected === actual || (expected === 'number' && actual === 'integer');
}

function runeCount(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

function child(name: string, key: string): string {
  return name === '' ? key : `${name}.${key}`;
}

/** swag.IsFloat64AJSONInteger: whole, allowing for the rounding of a division. */
function isWhole(value: number): boolean {
  if (!Number.isFinite(value)) return false;
  const diff = Math.abs(value - Math.round(value));
  return diff < 1e-9 || diff / Math.abs(value) < 1e-9;
}

interface Sink {
  errors: FieldError[];
  /** Levels checked: kube-openapi's MatchCount, which picks the failing branch of an anyOf or oneOf whose errors are shown. */
  visits: number;
}

function invalid(sink: Sink, field: string, value: unknown, detail: string): void {
  sink.errors.push({ field, type: 'Invalid value', shown: goShown(value), detail });
}

function checkType(node: SchemaNode, value: unknown, name: string, sink: Sink): boolean {
  if (value === null) {
    const expected = node.intOrString ? 'integer,string' : node.type;
    if (expected !== undefined && !node.nullable) {
      sink.errors.push({ field: name, type: 'Invalid value', shown: goQuote('null'), reason: typeInvalid, detail: `${name} in body must be of type ${expected}: "null"` });
    }
    return false;
  }
  const actual = jsonType(value);
  if (node.intOrString) {
    if (actual === 'integer' || actual === 'string') return true;
    sink.errors.push({ field: name, type: 'Invalid value', shown: goQuote(actual), reason: typeInvalid, detail: `${name} in body must be of type integer,string: "${actual}"` });
    return false;
  }
  if (node.type === undefined || typeMatches(node.type, actual)) return true;
  const isNumber = actual === 'integer' || actual === 'number';
  if (isNumber && node.format !== undefined && (node.type === 'integer' || node.type === 'number')) {
    const got = actual === 'integer' ? 'int64' : 'double';
    sink.errors.push({ field: name, type: 'Invalid value', shown: goQuote(got), reason: typeInvalid, detail: `${name} in body must be of type ${node.format}: "${got}"` });
    return false;
  }
  sink.errors.push({ field: name, type: 'Invalid value', shown: goQuote(actual), reason: typeInvalid, detail: `${name} in body must be of type ${node.type}: "${actual}"` });
  return false;
}

function checkString(node: SchemaNode, value: string, name: string, sink: Sink): void {
  if (node.minLength !== undefined || node.maxLength !== undefined) {
    const length = runeCount(value);
    if (node.maxLength !== undefined && length > node.maxLength) sink.errors.push({ field: name, type: 'Too long', detail: `may not be more than ${node.maxLength} bytes` });
    if (node.minLength !== undefined && length < node.minLength) invalid(sink, name, value, `${name} in body should be at least ${node.minLength} chars long`);
  }
  const pattern = node.pattern;
  if (pattern !== undefined) {
    if (pattern.regex === undefined) invalid(sink, name, value, `${name} in body should match '${pattern.source}, but pattern is invalid: ${pattern.error ?? ''}'`);
    else if (!pattern.regex.test(value)) invalid(sink, name, value, `${name} in body should match '${pattern.source}'`);
  }
  if (node.formatCheck !== undefined && !node.formatCheck(value)) {
    sink.errors.push({ field: name, type: 'Invalid value', shown: goQuote(value), reason: typeInvalid, detail: `${name} in body must be of type ${node.format ?? ''}: ${goQuote(value)}` });
  }
}

const int32Range = [-(2 ** 31), 2 ** 31 - 1] as const;
const float32Max = 3.4028234663852886e38;

function checkNumber(node: SchemaNode, value: number, name: string, sink: Sink): void {
  const integer = Number.isInteger(value);
  const formatOutOfRange =
    (node.type === 'integer' && node.format === 'int32' && (value < int32Range[0] || value > int32Range[1])) ||
    (node.type === 'number' && node.format === 'float' && Math.abs(value) > float32Max);
  if (formatOutOfRange) {
    // kube-openapi reports this one without a field (a plain error, not a validation of the field).
    const typeName = node.type === 'integer' ? 'integer' : 'number';
    sink.errors.push({ field: '<nil>', type: 'Invalid value', shown: '""', detail: `Checked value must be of type ${typeName} with format ${node.format ?? ''} in ${name}` });
  }
  if (node.multipleOf !== undefined) {
    const factor = integer ? Math.trunc(node.multipleOf) : node.multipleOf;
    if (factor <= 0) invalid(sink, name, factor, `factor MultipleOf declared for ${name} must be positive: ${goBound(factor, integer)}`);
    else if (integer ? value % factor !== 0 : !isWhole(factor < 1 ? (1 / factor) * value : value / factor)) {
      invalid(sink, name, value, `${name} in body should be a multiple of ${goBound(factor, integer)}`);
    }
  }
  if (node.maximum !== undefined) {
    const max = integer ? Math.trunc(node.maximum) : node.maximum;
    if (node.exclusiveMaximum ? value >= max : value > max) {
      invalid(sink, name, value, `${name} in body should be less than ${node.exclusiveMaximum ? '' : 'or equal to '}${integer ? String(max) : goFloat(max)}`);
    }
  }
  if (node.minimum !== undefined) {
    const min = integer ? Math.trunc(node.minimum) : node.minimum;
    if (node.exclusiveMinimum ? value <= min : value < min) {
      invalid(sink, name, value, `${name} in body should be greater than ${node.exclusiveMinimum ? '' : 'or equal to '}${integer ? String(min) : goFloat(min)}`);
    }
  }
}

function checkArray(node: SchemaNode, value: readonly unknown[], name: string, sink: Sink): void {
  if (node.minItems !== undefined && value.length < node.minItems) invalid(sink, name, value.length, `${name} in body should have at least ${node.minItems} items`);
  if (node.maxItems !== undefined && value.length > node.maxItems) sink.errors.push({ field: name, type: 'Too many', shown: String(value.length), detail: `must have at most ${node.maxItems} items` });
  if (node.uniqueItems && value.some((item, i) => value.slice(i + 1).some((other) => jsonEqual(item, other)))) {
    invalid(sink, name, '', `${name} in body shouldn't contain duplicates`);
  }
}

function checkEnum(node: SchemaNode, value: unknown, name: string, sink: Sink): void {
  const allowed = node.enumValues;
  if (allowed === undefined || allowed.some((a) => jsonEqual(a, value))) return;
  const shown = allowed.map((a) => goQuote(typeof a === 'string' ? a : JSON.stringify(a)));
  sink.errors.push({ field: name, type: 'Unsupported value', shown: goShown(value), detail: `supported values: ${shown.join(', ')}` });
}

function checkObject(node: SchemaNode, value: Record<string, unknown>, name: string, old: unknown, sink: Sink, root: boolean): void {
  const count = Object.keys(value).length;
  if (node.minProperties !== undefined && count < node.minProperties) invalid(sink, name, count, `${name} in body should have at least ${node.minProperties} properties`);
  if (node.maxProperties !== undefined && count > node.maxProperties) sink.errors.push({ field: name, type: 'Too many', shown: String(count), detail: `must have at most ${node.maxProperties} items` });
  for (const required of node.required) {
    if (value[required] === undefined) sink.errors.push({ field: child(name, required), type: 'Required value', detail: '' });
  }
  const oldObject = isPlainObject(old) ? old : undefined;
  for (const [key, v] of Object.entries(value)) {
    if ((root || node.embedded) && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
    const schema = node.properties?.get(key) ?? node.additional;
    if (schema !== undefined) validateNode(schema, v, child(name, key), oldObject?.[key], sink, false);
  }
}

/** An error kube-openapi reports as a plain error, which kube turns into an Invalid without a field. */
function composite(sink: Sink, detail: string): void {
  sink.errors.push({ field: '<nil>', type: 'Invalid value', shown: '""', detail });
}

function merge(sink: Sink, result: Sink): void {
  sink.errors.push(...result.errors);
  sink.visits += result.visits;
}

/**
 * allOf, anyOf, oneOf and not, as kube-openapi checks them: each branch
 * checked on its own; a failing anyOf or oneOf reports its message and
 * the errors of the failing branch that checked the most, an allOf the
 * errors of every branch.
 */
function checkCombinators(combinators: Combinators, value: unknown, name: string, sink: Sink, root: boolean): void {
  const branch = (node: SchemaNode): Sink => {
    const result: Sink = { errors: [], visits: 0 };
    validateNode(node, value, name, undefined, result, root);
    return result;
  };
  const best = (current: Sink | undefined, result: Sink): Sink => (current === undefined || result.visits > current.visits ? result : current);
  if (combinators.anyOf.length > 0) {
    let failures: Sink | undefined;
    let succeeded = false;
    for (const node of combinators.anyOf) {
      const result = branch(node);
      if (result.errors.length === 0) {
        succeeded = true;
        failures = undefined;
        break;
      }
      failures = best(failures, result);
    }
    if (!succeeded) composite(sink, `${goQuote(name)} must validate at least one schema (anyOf)`);
    if (failures !== undefined) merge(sink, failures);
  }
  if (combinators.oneOf.length > 0) {
    let failures: Sink | undefined;
    let validated = 0;
    for (const node of combinators.oneOf) {
      const result = branch(node);
      if (result.errors.length === 0) {
        validated += 1;
        failures = undefined;
      } else if (validated === 0) failures = best(failures, result);
    }
    if (validated !== 1) {
      composite(sink, `${goQuote(name)} must validate one and only one schema (oneOf). ${validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`}`);
      if (failures !== undefined) merge(sink, failures);
    }
  }
  if (combinators.allOf.length > 0) {
    let validated = 0;
    for (const node of combinators.allOf) {
      const result = branch(node);
      if (result.errors.length === 0) validated += 1;
      merge(sink, result);
    }
    if (validated !== combinators.allOf.length) composite(sink, `${goQuote(name)} must validate all the schemas (allOf)${validated === 0 ? '. None validated' : ''}`);
  }
  if (combinators.not !== undefined && branch(combinators.not).errors.length === 0) composite(sink, `${goQuote(name)} must not validate the schema (not)`);
}

function validateNode(node: SchemaNode, value: unknown, name: string, old: unknown, sink: Sink, root: boolean): void {
  if (old !== undefined && (value === old || jsonEqual(value, old))) return;
  sink.visits += 1;
  const typed = checkType(node, value, name, sink);
  if (value === null) {
    checkEnum(node, value, name, sink);
    return;
  }
  if (node.combinators !== undefined) checkCombinators(node.combinators, value, name, sink, root);
  if (typeof value === 'string') checkString(node, value, name, sink);
  else if (typeof value === 'number' && typed) checkNumber(node, value, name, sink);
  if (Array.isArray(value)) {
    const items = node.items;
    if (items !== undefined) value.forEach((item, i) => validateNode(items, item, `${name}[${i}]`, undefined, sink, false));
    checkArray(node, value, name, sink);
  }
  checkEnum(node, value, name, sink);
  if (isPlainObject(value)) checkObject(node, value, name, old, sink, root);
}

/** The field errors of `value` against the schema; `old` is the stored object on an update (for ratcheting). */
export function validateValue(node: SchemaNode, value: unknown, old: unknown): FieldError[] {
  const sink: Sink = { errors: [], visits: 0 };
  validateNode(node, value, '', old, sink, true);
  return sink.errors;
}
