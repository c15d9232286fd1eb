/**
 * A TypeBox schema as a CRD's structural schema (kube's `JSONSchemaProps`,
 * OpenAPI v3.0 with Kubernetes' extensions), or an error naming the field
 * that has no structural form. A TypeBox schema is JSON Schema already:
 * most nodes are copied as they are. What this rewrites is where JSON
 * Schema 2020-12 and kube's dialect spell one thing two ways:
 * - a union of literals (`anyOf` of `const`) is an `enum` with its type;
 * - a union with `null` is the other member with `nullable: true`;
 * - a union of an integer and a string is `x-kubernetes-int-or-string`;
 * - a record of string keys (`patternProperties: {'^.*$': X}`) is `additionalProperties: X`;
 * - a numeric `exclusiveMinimum`/`exclusiveMaximum` is the bound with the flag set.
 * What it refuses, kube refuses too (a structural schema has a type at
 * every level, no `$ref`, no `additionalProperties` beside `properties`)
 * or has no form for (tuples, intersections, other unions, `undefined`,
 * functions).
 */

/** A node of the CRD's schema, as JSON. */
export type JsonSchemaProps = Record<string, unknown>;

/** A schema that has no structural form: `path` names the field (`spec.ports[*].name`). */
export class StructuralSchemaError extends Error {
  /** Always `StructuralSchemaError`, to tell it from other errors in logs. */
  override readonly name = 'StructuralSchemaError';
  constructor(
    /** The field, as kube names it in its errors. */
    readonly path: string,
    /** What a structural schema does not allow there. */
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

const jsonTypes = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

// The keywords copied as they are: OpenAPI v3.0's value validations and annotations, and kube's extensions.
const copied = new Set([
  'description', 'title', 'format', 'default', 'maximum', 'minimum', 'maxLength', 'minLength', 'pattern',
  'maxItems', 'minItems', 'multipleOf', 'enum', 'maxProperties', 'minProperties', 'required', 'example',
  'externalDocs', 'nullable',
  'x-kubernetes-validations', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type',
]);

// Why a keyword is refused, by keyword.
const refused: Readonly<Record<string, string>> = {
  $ref: '$ref is not allowed in a structural schema: write the type out (a recursive type has no structural form)',
  $defs: '$defs is not allowed in a structural schema: write the type out where it is used',
  definitions: 'definitions is not allowed in a structural schema: write the type out where it is used',
  $id: '$id is not allowed in a CRD schema',
  $schema: '$schema is not allowed in a CRD schema',
  allOf: 'allOf (a TypeBox Intersect) has no structural form here: write one Type.Object with all the properties',
  oneOf: 'oneOf has no structural form here: use an enum, a union of literals, or CEL rules (Kube.rules)',
  not: 'not (a TypeBox Never or Not) has no structural form',
  uniqueItems: 'uniqueItems is not allowed in a structural schema: use Kube.listType(\'set\') for a list of unique scalars',
  examples: 'examples is not a CRD keyword: use example (one value)',
  additionalItems: 'a tuple has no structural form: use an array of one item type, or an object',
  prefixItems: 'a tuple has no structural form: use an array of one item type, or an object',
  patternProperties: 'patternProperties is not allowed in a structural schema: only a record of string keys (Type.Record(Type.String(), ...)) has one',
  dependencies: 'dependencies is not allowed in a structural schema',
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function primitiveType(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') return typeof value;
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return undefined;
}

/** The one type of `values` (a literal union's or an enum's), or undefined when they are of several types or none. */
function enumType(values: readonly unknown[]): string | undefined {
  const types = new Set(values.map(primitiveType));
  if (types.has(undefined)) return undefined;
  if (types.size === 2 && types.has('integer') && types.has('number')) return 'number';
  return types.size === 1 ? [...types][0] : undefined;
}

/** The keywords of a node other than those of its union: what TypeBox puts beside `anyOf` (description, default, rules). */
function besides(node: JsonSchemaProps, path: string): JsonSchemaProps {
  const out: JsonSchemaProps = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'anyOf') continue;
    if (!copied.has(key)) throw new StructuralSchemaError(path, refused[key] ?? `${key} is not a CRD schema keyword`);
    out[key] = value;
  }
  return out;
}

/** A union (`anyOf`) in kube's spelling: a nullable member, an enum, or int-or-string; anything else is refused. */
function union(node: JsonSchemaProps, path: string): JsonSchemaProps {
  const members = node.anyOf;
  if (!Array.isArray(members) || members.length === 0 || !members.every(isObject)) throw new StructuralSchemaError(path, 'anyOf must list schemas');
  const outer = besides(node, path);
  const others = members.filter((m) => m.type !== 'null');
  const nullable = others.length < members.length ? { nullable: true } : {};
  if (others.length === 0) throw new StructuralSchemaError(path, 'null alone has no structural form');
  if (others.length === 1) return { ...structural(others[0] as JsonSchemaProps, path), ...outer, ...nullable };
  if (others.every((m) => 'const' in m && Object.keys(m).every((k) => k === 'const' || k === 'type'))) {
    const values = others.map((m) => m.const);
    const type = enumType(values);
    if (type === undefined) throw new StructuralSchemaError(path, `a union of literals of several types (${values.map((v) => JSON.stringify(v)).join(', ')}) has no structural form`);
    return { type, enum: values, ...outer, ...nullable };
  }
  const types = others.map((m) => (Object.keys(m).length === 1 ? m.type : undefined)).sort();
  if (types.length === 2 && types[0] === 'integer' && types[1] === 'string') return { 'x-kubernetes-int-or-string': true, ...outer, ...nullable };
  throw new StructuralSchemaError(path, 'a union has no structural form unless it is of literals, with null, or of an integer and a string (Kube.intOrString)');
}

function objectParts(node: JsonSchemaProps, path: string, out: JsonSchemaProps): void {
  const properties = node.properties;
  const additional = node.additionalProperties;
  const patterns = node.patternProperties;
  if (properties !== undefined && additional !== undefined) {
    throw new StructuralSchemaError(path, 'additionalProperties and properties are mutually exclusive in a structural schema (a Type.Object takes no additionalProperties: unknown fields are pruned, or kept with Kube.preserveUnknownFields())');
  }
  if (isObject(properties)) {
    const converted: JsonSchemaProps = {};
    for (const [name, schema] of Object.entries(properties)) {
      if (!isObject(schema)) throw new StructuralSchemaError(`${path}.${name}`, 'is no schema');
      converted[name] = structural(schema, `${path}.${name}`);
    }
    out.properties = converted;
  }
  if (additional !== undefined) {
    if (!isObject(additional)) throw new StructuralSchemaError(path, 'additionalProperties must be a schema in a structural schema (to keep any field, use Kube.preserveUnknownFields())');
    out.additionalProperties = structural(additional, `${path}.*`);
  }
  if (patterns !== undefined) {
    const entries = isObject(patterns) ? Object.entries(patterns) : [];
    const [pattern, schema] = entries[0] ?? [];
    if (entries.length !== 1 || pattern !== '^.*$' || !isObject(schema) || properties !== undefined || additional !== undefined) throw new StructuralSchemaError(path, refused.patternProperties as string);
    out.additionalProperties = structural(schema, `${path}.*`);
  }
}

/** The structural form of `node`; `path` names it in errors (`spec`, `spec.ports[*].port`). */
export function structural(node: JsonSchemaProps, path: string): JsonSchemaProps {
  if ('anyOf' in node) return union(node, path);
  const out: JsonSchemaProps = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'type') {
      if (typeof value !== 'string' || !jsonTypes.has(value)) throw new StructuralSchemaError(path, `type ${JSON.stringify(value)} has no structural form (one of ${[...jsonTypes].join(', ')})`);
      out.type = value;
    } else if (key === 'exclusiveMinimum' || key === 'exclusiveMaximum') {
      // JSON Schema 2020-12 gives the bound; OpenAPI v3.0 a flag beside minimum/maximum.
      if (typeof value === 'boolean') out[key] = value;
      else {
        out[key === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value;
        out[key] = true;
      }
    } else if (key === 'const') {
      // A single literal: an enum of one value.
      out.enum = [value];
    } else if (key === 'items') {
      if (!isObject(value)) throw new StructuralSchemaError(path, refused.prefixItems as string);
      out.items = structural(value, `${path}[*]`);
    } else if (key === 'properties' || key === 'additionalProperties' || key === 'patternProperties') {
      continue;
    } else if (copied.has(key)) {
      out[key] = value;
    } else {
      throw new StructuralSchemaError(path, refused[key] ?? `${key} is not a CRD schema keyword`);
    }
  }
  objectParts(node, path, out);
  if (out.type === undefined && Array.isArray(out.enum)) {
    const type = enumType(out.enum);
    if (type === undefined) throw new StructuralSchemaError(path, 'an enum of several types has no structural form');
    out.type = type;
  }
  if (out.type === undefined && out['x-kubernetes-int-or-string'] !== true && out['x-kubernetes-preserve-unknown-fields'] !== true) {
    throw new StructuralSchemaError(path, 'has no type: a structural schema needs one at every level (for any value, use Kube.unknown())');
  }
  if (out.type === 'array' && out.items === undefined) throw new StructuralSchemaError(path, 'an array needs items in a structural schema');
  return out;
}
