import type { SchemaNode } from '../schemaNode.js';
import { escapePropertyName } from './escaping.js';

/**
 * The sizes kube-apiserver 1.32 assumes for the values a rule reads, when it
 * estimates what the rule can cost (k8s.io/apiserver/pkg/cel/common's
 * `SchemaDeclType`): a list holds at most its `maxItems`, a map its
 * `maxProperties`, a string `4 × maxLength` bytes (a code point may take
 * four); without a bound, as many as fit in a request of
 * `MaxRequestSizeBytes` (3 MiB) given the least room one element takes when
 * serialized (`minSize`). Objects and scalars have no elements (0). These
 * figures, and the CEL type of each level, are what the estimator in
 * costEstimate.ts reads.
 */

export const maxRequestSizeBytes = 3 * 1024 * 1024;
/** kube's limits: per expression (estimated), per schema (estimated), per evaluation and per request (actual). */
export const staticEstimatedCostLimit = 10_000_000;
export const staticEstimatedCrdCostLimit = 100_000_000;
export const perCallLimit = 1_000_000;
export const runtimeCelCostBudget = 10_000_000;

/** The largest cost (uint64's maximum); sums and products stop there, as cel-go's do. */
export const maxCost = 18446744073709551615;

export type Kind =
  | 'struct'
  | 'map'
  | 'list'
  | 'string'
  | 'bytes'
  | 'duration'
  | 'timestamp'
  | 'int'
  | 'uint'
  | 'double'
  | 'bool'
  | 'null'
  | 'type'
  | 'optional'
  /** A value of one of the Kubernetes libraries' types (quantity, IP, CIDR, URL, format). */
  | 'opaque'
  | 'dyn';

export interface CelType {
  readonly kind: Kind;
  /** A list's items, a map's values, an optional's value. */
  readonly elem?: CelType;
  /** An object's fields, by the names rules read them by. */
  readonly fields?: ReadonlyMap<string, CelType>;
  readonly maxElements: number;
  readonly minSize: number;
  /** Which library type an opaque value is: quantity, ip, cidr, url, format. */
  readonly name?: string;
}

const simple = (kind: Kind, minSize = 0): CelType => ({ kind, maxElements: 0, minSize });
export const dynType = simple('dyn');
export const boolType = simple('bool', 4);
export const intType = simple('int', 1);
export const uintType = simple('uint', 1);
export const doubleType = simple('double', 1);
export const stringType = simple('string', 2);
export const bytesType = simple('bytes', 2);
export const nullType = simple('null');
export const typeType = simple('type');
export const opaqueType = (name: string): CelType => ({ kind: 'opaque', name, maxElements: 0, minSize: 0 });
export const durationType = simple('duration', 3);
export const timestampType = simple('timestamp', 21);
export const listOf = (elem: CelType, maxElements = 0): CelType => ({ kind: 'list', elem, maxElements, minSize: 2 });
export const mapOf = (elem: CelType, maxElements = 0): CelType => ({ kind: 'map', elem, maxElements, minSize: 2 });
export const optionalOf = (elem: CelType): CelType => ({ kind: 'optional', elem, maxElements: 0, minSize: 0 });

function nonNegative(value: number | undefined): number | undefined {
  return value === undefined ? undefined : Math.max(0, Math.trunc(value));
}

/** The longest string a request may hold for a string schema without maxLength (kube's `estimateMaxStringLengthPerRequest`). */
function longestString(format: unknown): number {
  if (format === 'duration' || format === 'date-time') return 32;
  if (format === 'date') return 12;
  return maxRequestSizeBytes - 2;
}

function stringDecl(node: SchemaNode): CelType {
  const format = node.raw.format;
  const maxLength = nonNegative(node.maxLength);
  if (format === 'byte') return { kind: 'bytes', maxElements: maxLength ?? longestString(format), minSize: 2 };
  if (format === 'duration') return { kind: 'duration', maxElements: longestString(format), minSize: 3 };
  if (format === 'date') return { kind: 'timestamp', maxElements: longestString(format), minSize: 12 };
  if (format === 'date-time') return { kind: 'timestamp', maxElements: longestString(format), minSize: 21 };
  if (maxLength !== undefined) return { kind: 'string', maxElements: maxLength * 4, minSize: 2 };
  const enumStrings = (node.enumValues ?? []).filter((v): v is string => typeof v === 'string');
  if (node.enumValues !== undefined && node.enumValues.length > 0) {
    return { kind: 'string', maxElements: enumStrings.reduce((n, s) => Math.max(n, Buffer.byteLength(s)), 0), minSize: 2 };
  }
  return { kind: 'string', maxElements: longestString(format), minSize: 2 };
}

const unboundedString: CelType = { kind: 'string', maxElements: maxRequestSizeBytes - 2, minSize: 2 };
const rootMetadata: CelType = { kind: 'struct', fields: new Map([['name', unboundedString], ['generateName', unboundedString]]), maxElements: 0, minSize: 2 };

/** Whether a resource root already declares what kube adds to it (`WithTypeAndObjectMeta`). */
function declaresTypeAndMeta(node: SchemaNode): boolean {
  const props = node.properties;
  const meta = props?.get('metadata');
  return props?.get('kind')?.type === 'string' && props.get('apiVersion')?.type === 'string' && meta?.type === 'object' && meta.properties?.get('name')?.type === 'string' && meta.properties.get('generateName')?.type === 'string';
}

function objectDecl(node: SchemaNode, isResourceRoot: boolean): CelType {
  const fields = new Map<string, CelType>();
  const required = new Set(node.required);
  let minSize = 2;
  const addRoot = isResourceRoot && !declaresTypeAndMeta(node);
  for (const [name, prop] of node.properties ?? []) {
    if (addRoot && (name === 'kind' || name === 'apiVersion' || name === 'metadata')) continue;
    const decl = declOf(prop, prop.embedded);
    if (decl === undefined) continue;
    const escaped = escapePropertyName(name);
    if (escaped !== undefined) fields.set(escaped, decl);
    // An object takes at least `{}` and each required property without a default (the server fills defaults in).
    if (required.has(name) && prop.raw.default === undefined) minSize += Buffer.byteLength(name) + decl.minSize + 4;
  }
  if (addRoot) {
    fields.set('kind', unboundedString);
    fields.set('apiVersion', unboundedString);
    fields.set('metadata', rootMetadata);
  }
  return { kind: 'struct', fields, maxElements: 0, minSize };
}

const cache = new WeakMap<SchemaNode, { root?: CelType | null; nested?: CelType | null }>();

/** The type and sizes kube declares for a schema level (`isResourceRoot`: a custom resource's root or an embedded resource), or undefined when rules cannot read it. */
export function declOf(node: SchemaNode, isResourceRoot: boolean): CelType | undefined {
  let entry = cache.get(node);
  if (entry === undefined) {
    entry = {};
    cache.set(node, entry);
  }
  const key = isResourceRoot ? 'root' : 'nested';
  const cached = entry[key];
  if (cached !== undefined) return cached ?? undefined;
  const decl = computeDecl(node, isResourceRoot);
  entry[key] = decl ?? null;
  return decl;
}

function computeDecl(node: SchemaNode, isResourceRoot: boolean): CelType | undefined {
  if (node.intOrString) {
    return { kind: 'dyn', maxElements: node.maxLength !== undefined ? (nonNegative(node.maxLength) as number) * 4 : maxRequestSizeBytes - 2, minSize: 1 };
  }
  switch (node.type) {
    case 'array': {
      if (node.items === undefined) return undefined;
      const items = declOf(node.items, node.items.embedded);
      if (items === undefined) return undefined;
      return listOf(items, nonNegative(node.maxItems) ?? Math.floor((maxRequestSizeBytes - 2) / (items.minSize + 1)));
    }
    case 'object': {
      if (node.additional !== undefined) {
        const values = declOf(node.additional, node.additional.embedded);
        if (values === undefined) return undefined;
        return mapOf(values, nonNegative(node.maxProperties) ?? Math.floor((maxRequestSizeBytes - 2) / (values.minSize + 6)));
      }
      return objectDecl(node, isResourceRoot);
    }
    case 'string':
      return stringDecl(node);
    case 'boolean':
      return boolType;
    case 'number':
      return doubleType;
    case 'integer':
      return intType;
    default:
      return undefined;
  }
}

/** Whether the value at a path of `self` (`['self', 'spec', 'replicas']`) is a number, bool, duration or timestamp. */
export function scalarAtPath(self: CelType | undefined): (path: readonly string[]) => boolean {
  return (path) => {
    let at: CelType | undefined = self;
    for (const step of path.slice(1)) at = at?.kind === 'struct' ? at.fields?.get(step) : undefined;
    return at !== undefined && ['int', 'uint', 'double', 'bool', 'duration', 'timestamp'].includes(at.kind);
  };
}

/**
 * How many times a rule at this level may run when nothing above bounds it:
 * as many values of its least serialized size as fit in a request
 * (kube's `maxCardinality`).
 */
export function unboundedCardinality(decl: CelType): number {
  return Math.floor(maxRequestSizeBytes / (decl.minSize + 1));
}

/**
 * By how much a level multiplies how many times the levels below it occur
 * (kube's `extractMaxElements`): a list by its maxItems, a map by its
 * maxProperties, undefined when that is unbounded; 1 otherwise.
 */
export function cardinalityFactor(node: SchemaNode): number | undefined {
  if (node.type === 'object') return node.raw.additionalProperties === undefined ? 1 : nonNegative(node.maxProperties);
  if (node.type === 'array') return nonNegative(node.maxItems);
  return 1;
}

export function saturatingAdd(a: number, b: number): number {
  return a + b >= maxCost ? maxCost : a + b;
}

export function saturatingMultiply(a: number, b: number): number {
  if (a === 0 || b === 0) return 0;
  return a > maxCost / b ? maxCost : a * b;
}
