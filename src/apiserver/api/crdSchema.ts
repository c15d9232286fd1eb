import { jsonEqual } from '../../util/json.js';
import { compileSchema, schemaErrors, validateCustomResource, type CompiledSchema, type SchemaOutcome } from '../validation/compiledSchema.js';
import type { FieldError } from './statusError.js';

/**
 * What kube-apiserver does with a custom resource against its CRD's
 * structural schema (`openAPIV3Schema`) on every write (the work is in
 * `../validation/`):
 * - prunes fields the schema does not declare (unless a level says
 *   `x-kubernetes-preserve-unknown-fields: true`), reporting them so the
 *   request's `fieldValidation` can warn (default), reject (`Strict`) or
 *   ignore them, and fills in `default` values;
 * - checks every keyword structural schemas allow (types, bounds,
 *   lengths, patterns, formats, enums, item and property counts, unique
 *   items, required, nullable, int-or-string, list types and map keys);
 * - evaluates the CEL rules of `x-kubernetes-validations`, compiled once
 *   per CRD version (see `crdVersionSchema`), with `oldSelf` on updates.
 * `apiVersion`, `kind` and `metadata` at the root are the server's, never pruned.
 */

export type { CompiledSchema, SchemaOutcome };

/**
 * The compiled schema of a CRD version: the one `previous` holds when its
 * schema is the same (a CRD's status writes do not recompile), else a new one.
 */
export function crdVersionSchema(schema: unknown, previous?: { schema?: unknown; compiledSchema?: CompiledSchema }): CompiledSchema | undefined {
  if (previous?.compiledSchema !== undefined && jsonEqual(previous.schema, schema)) return previous.compiledSchema;
  return compileSchema(schema);
}

/** What kube rejects in a version's schema (forbidden keywords, CEL rules that do not compile), reported under `schemaPath`. */
export function crdSchemaErrors(schema: unknown, schemaPath: string): FieldError[] {
  return schemaErrors(schema, schemaPath);
}

/** Prunes, defaults and checks `object` (changed in place) against a CRD version's schema; `old` is the stored object on an update. */
export function applyCrdSchema(object: Record<string, unknown>, schema: CompiledSchema | undefined, old?: unknown): SchemaOutcome {
  if (schema === undefined) return { unknown: [], errors: [], warnings: [] };
  return validateCustomResource(schema, object, old);
}
