import { RE2JS } from '@bufbuild/re2';
import { isPlainObject } from '../../util/json.js';
import { escapePropertyName } from './cel/escaping.js';
import { stringFormatCheck } from './formats.js';

/**
 * A CRD version's structural schema read once, when the CRD is served:
 * each level's keywords parsed into the form the validator checks fast
 * (patterns compiled, formats resolved to their checks, property maps),
 * and whether anything below a level needs the list-type or CEL passes, so
 * that those passes skip what has nothing to check.
 */

export type Schema = Record<string, unknown>;

export interface SchemaNode {
  readonly raw: Schema;
  readonly type: string | undefined;
  readonly nullable: boolean;
  readonly intOrString: boolean;
  readonly preserveUnknown: boolean;
  readonly embedded: boolean;
  readonly properties: ReadonlyMap<string, SchemaNode> | undefined;
  /** Each property's name as CEL rules read it (kube's escaping; undefined: rules cannot read it); the map is undefined when every name reads as itself. */
  readonly celNames: ReadonlyMap<string, string | undefined> | undefined;
  /** The properties by the names CEL rules read them by. */
  readonly celProperties: ReadonlyMap<string, SchemaNode> | undefined;
  readonly additional: SchemaNode | undefined;
  /** `additionalProperties: true`: keep every field. */
  readonly additionalAny: boolean;
  readonly items: SchemaNode | undefined;
  readonly required: readonly string[];
  readonly enumValues: readonly unknown[] | undefined;
  readonly minimum: number | undefined;
  readonly maximum: number | undefined;
  readonly exclusiveMinimum: boolean;
  readonly exclusiveMaximum: boolean;
  readonly multipleOf: number | undefined;
  readonly minLength: number | undefined;
  readonly maxLength: number | undefined;
  readonly pattern: { source: string; regex: RE2JS | undefined; error?: string } | undefined;
  readonly format: string | undefined;
  readonly formatCheck: ((value: string) => boolean) | undefined;
  readonly minItems: number | undefined;
  readonly maxItems: number | undefined;
  readonly uniqueItems: boolean;
  readonly minProperties: number | undefined;
  readonly maxProperties: number | undefined;
  readonly listType: string | undefined;
  readonly listMapKeys: readonly string[];
  readonly mapType: string | undefined;
  readonly defaults: readonly (readonly [string, unknown])[];
  /** The value validations under `allOf`, `anyOf`, `oneOf` and `not`, or undefined when the level has none. */
  readonly combinators: Combinators | undefined;
  /** Whether this level or one below declares `x-kubernetes-list-type` set or map. */
  readonly hasListTypes: boolean;
  /** Whether this level or one below declares `x-kubernetes-validations`. */
  readonly hasRules: boolean;
  /** Whether this level or one below is an `x-kubernetes-embedded-resource`. */
  readonly hasEmbedded: boolean;
}

export interface Combinators {
  readonly allOf: readonly SchemaNode[];
  readonly anyOf: readonly SchemaNode[];
  readonly oneOf: readonly SchemaNode[];
  readonly not: SchemaNode | undefined;
}

function branches(value: unknown): SchemaNode[] {
  return Array.isArray(value) ? value.filter(isPlainObject).map((s) => compileSchemaNode(s as Schema)) : [];
}

function combinatorsOf(raw: Schema): Combinators | undefined {
  const combinators = { allOf: branches(raw.allOf), anyOf: branches(raw.anyOf), oneOf: branches(raw.oneOf), not: isPlainObject(raw.not) ? compileSchemaNode(raw.not) : undefined };
  const none = combinators.allOf.length === 0 && combinators.anyOf.length === 0 && combinators.oneOf.length === 0 && combinators.not === undefined;
  return none ? undefined : combinators;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function compilePattern(source: string): SchemaNode['pattern'] {
  try {
    return { source, regex: new RE2JS(source) };
  } catch (error) {
    return { source, regex: undefined, error: (error as Error).message };
  }
}

/** The format kube keeps for a type: strings keep the formats it checks, numbers only their widths; the rest is dropped. */
function keptFormat(type: string | undefined, format: unknown): string | undefined {
  if (typeof format !== 'string' || format === '') return undefined;
  if (type === undefined || type === 'string') return stringFormatCheck(format) === undefined ? undefined : format;
  if (type === 'integer') return format === 'int32' || format === 'int64' ? format : undefined;
  if (type === 'number') return format === 'float' || format === 'double' ? format : undefined;
  return undefined;
}

export function compileSchemaNode(raw: Schema): SchemaNode {
  const type = typeof raw.type === 'string' ? raw.type : undefined;
  const properties = isPlainObject(raw.properties)
    ? new Map(Object.entries(raw.properties).filter(([, s]) => isPlainObject(s)).map(([name, s]) => [name, compileSchemaNode(s as Schema)] as const))
    : undefined;
  const celNames = properties === undefined ? undefined : new Map([...properties.keys()].map((name) => [name, escapePropertyName(name)] as const));
  const celProperties = new Map<string, SchemaNode>();
  for (const [name, s] of properties ?? []) {
    const escaped = celNames?.get(name);
    if (escaped !== undefined) celProperties.set(escaped, s);
  }
  const additional = isPlainObject(raw.additionalProperties) ? compileSchemaNode(raw.additionalProperties) : undefined;
  const items = isPlainObject(raw.items) ? compileSchemaNode(raw.items) : undefined;
  const children = [...(properties?.values() ?? []), ...(additional === undefined ? [] : [additional]), ...(items === undefined ? [] : [items])];
  const listType = typeof raw['x-kubernetes-list-type'] === 'string' ? raw['x-kubernetes-list-type'] : undefined;
  const format = keptFormat(type, raw.format);
  const rules = raw['x-kubernetes-validations'];
  return {
    raw,
    type,
    nullable: raw.nullable === true,
    intOrString: raw['x-kubernetes-int-or-string'] === true,
    preserveUnknown: raw['x-kubernetes-preserve-unknown-fields'] === true,
    embedded: raw['x-kubernetes-embedded-resource'] === true,
    properties,
    celNames: celNames !== undefined && [...celNames].some(([name, escaped]) => name !== escaped) ? celNames : undefined,
    celProperties: properties === undefined ? undefined : celProperties,
    additional,
    additionalAny: raw.additionalProperties === true,
    items,
    required: Array.isArray(raw.required) ? raw.required.filter((r): r is string => typeof r === 'string') : [],
    enumValues: Array.isArray(raw.enum) ? raw.enum : undefined,
    minimum: num(raw.minimum),
    maximum: num(raw.maximum),
    exclusiveMinimum: raw.exclusiveMinimum === true,
    exclusiveMaximum: raw.exclusiveMaximum === true,
    multipleOf: num(raw.multipleOf),
    minLength: num(raw.minLength),
    maxLength: num(raw.maxLength),
    pattern: typeof raw.pattern === 'string' ? compilePattern(raw.pattern) : undefined,
    format,
    formatCheck: format === undefined || (type !== undefined && type !== 'string') ? undefined : stringFormatCheck(format),
    minItems: num(raw.minItems),
    maxItems: num(raw.maxItems),
    uniqueItems: raw.uniqueItems === true,
    minProperties: num(raw.minProperties),
    maxProperties: num(raw.maxProperties),
    listType,
    listMapKeys: Array.isArray(raw['x-kubernetes-list-map-keys']) ? raw['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string') : [],
    mapType: typeof raw['x-kubernetes-map-type'] === 'string' ? raw['x-kubernetes-map-type'] : undefined,
    combinators: combinatorsOf(raw),
    defaults: properties === undefined ? [] : [...properties].filter(([, s]) => s.raw.default !== undefined).map(([name, s]) => [name, s.raw.default] as const),
    hasListTypes: listType === 'set' || listType === 'map' || children.some((c) => c.hasListTypes),
    hasRules: (Array.isArray(rules) && rules.length > 0) || children.some((c) => c.hasRules),
    hasEmbedded: raw['x-kubernetes-embedded-resource'] === true || children.some((c) => c.hasEmbedded),
  };
}
