import { isPlainObject } from '../../util/json.js';
import type { FieldError } from '../api/statusError.js';
import { compileRules, type CompiledRules } from './cel/compileRules.js';
import { evaluateRules } from './cel/evaluateRules.js';
import { combinatorSchemaErrors } from './combinatorSchemaChecks.js';
import { embeddedResourceErrors } from './embedded.js';
import { listTypeErrors } from './listTypes.js';
import { pruneAndDefault } from './prune.js';
import { schemaKeywordErrors } from './schemaChecks.js';
import { compileSchemaNode, type Schema, type SchemaNode } from './schemaNode.js';
import { validateValue } from './validateValue.js';

/**
 * A CRD version's schema compiled once (keywords and CEL rules), and the
 * validation of one custom resource write against it, in kube's order:
 * prune and default, the OpenAPI keywords, embedded objects' apiVersion
 * and kind, the list-type invariants, then
 * the CEL rules — which are not run when an earlier error already makes
 * the object unusable (a wrong type, a missing required field, a value out
 * of an enum, a list or string too long), as kube says in one more error.
 */

export interface CompiledSchema {
  readonly root: SchemaNode;
  readonly rules: CompiledRules;
}

export interface SchemaOutcome {
  /** Paths of the fields pruned, as kube names them (`.spec.foo`). */
  unknown: string[];
  errors: FieldError[];
  /** Failures of rules on values an update did not change (ratcheted into warnings). */
  warnings: string[];
}

/** Compiles a version's `openAPIV3Schema`; `schemaPath` is where errors in its rules are reported (`spec.validation.openAPIV3Schema`). */
export function compileSchema(schema: unknown, schemaPath = 'spec.validation.openAPIV3Schema'): CompiledSchema | undefined {
  if (!isPlainObject(schema)) return undefined;
  const root = compileSchemaNode(schema as Schema);
  return { root, rules: compileRules(root, schemaPath) };
}

/** What kube would reject in a version's schema: its combinators and keywords (see combinatorSchemaChecks.ts, schemaChecks.ts), then its CEL rules. */
export function schemaErrors(schema: unknown, schemaPath: string): FieldError[] {
  const compiled = compileSchema(schema, schemaPath);
  if (compiled === undefined) return [];
  return [...combinatorSchemaErrors(compiled.root, schemaPath), ...schemaKeywordErrors(compiled.root, schemaPath), ...compiled.rules.errors];
}

function blocks(error: FieldError): boolean {
  return ['Unsupported value', 'Required value', 'Too long', 'Too many'].includes(error.type) || error.reason === 'FieldValueTypeInvalid';
}

/** Prunes and defaults `object` in place, then validates it; `old` is the stored object on an update. */
export function validateCustomResource(compiled: CompiledSchema, object: Record<string, unknown>, old?: unknown): SchemaOutcome {
  const outcome: SchemaOutcome = { unknown: [], errors: [], warnings: [] };
  pruneAndDefault(object, compiled.root, '', true, outcome.unknown);
  outcome.errors.push(...validateValue(compiled.root, object, old));
  outcome.errors.push(...embeddedResourceErrors(compiled.root, object));
  const oldListErrors = old === undefined ? [] : listTypeErrors(compiled.root, old);
  if (oldListErrors.length === 0) outcome.errors.push(...listTypeErrors(compiled.root, object));
  if (compiled.rules.byNode.size === 0) return outcome;
  if (outcome.errors.some(blocks)) {
    outcome.errors.push({
      field: '<nil>',
      type: 'Invalid value',
      shown: '"null"',
      detail: 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    });
    return outcome;
  }
  const cel = evaluateRules(compiled.rules, compiled.root, object, old);
  outcome.errors.push(...cel.errors);
  outcome.warnings.push(...cel.warnings);
  return outcome;
}
