/**
 * One CRD version's OpenAPI v3 schema as TypeScript declarations: the type
 * half of `rxkube types` (see `crdTypes`). Pure: text in, text out.
 *
 * What a structural schema (the only kind `apiextensions.k8s.io/v1` takes)
 * says about a value's type lives in `type`, `properties`, `items`,
 * `additionalProperties`, `enum`, `nullable` and the `x-kubernetes-*`
 * extensions; `allOf`/`anyOf`/`oneOf`/`not` there may only restrict a value
 * already typed by those, never widen it, so they are left to the server's
 * validation (a oneOf of required fields is documented, not encoded).
 * The pitfalls of other generators (kubernetes-fluent-client's issues on
 * int-or-string, enums with quotes, arrays of arrays, maps, quoted names) are
 * what the unit tests pin.
 */

/** The members of an OpenAPI v3 schema node of a CRD that decide its type. */
export interface SchemaNode {
  type?: string;
  description?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  enum?: unknown[];
  nullable?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

/** Declarations being written for one file: named interfaces in order, names unique in the file. */
export class Declarations {
  private readonly taken = new Set<string>();
  private readonly blocks: string[] = [];

  constructor(reserved: Iterable<string>) {
    for (const name of reserved) this.taken.add(name);
  }

  /** `wanted`, or `wanted2`, `wanted3`… when another declaration of the file has it. */
  claim(wanted: string): string {
    let name = wanted;
    for (let n = 2; this.taken.has(name); n++) name = `${wanted}${n}`;
    this.taken.add(name);
    return name;
  }

  /** A place for a declaration, taken now so that a parent comes before the types its members declare. */
  slot(): number {
    return this.blocks.push('') - 1;
  }

  fill(slot: number, block: string): void {
    this.blocks[slot] = block;
  }

  text(): string {
    return this.blocks.join('\n');
  }
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A property name as TypeScript takes it: bare when an identifier (reserved words are fine there), quoted otherwise. */
export function propertyName(name: string): string {
  return identifier.test(name) ? name : JSON.stringify(name);
}

/** `some-field.name` → `SomeFieldName`: a part of a type name built from a property's. */
export function pascal(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter((w) => w !== '');
  const joined = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
  return /^[0-9]/.test(joined) ? `_${joined}` : joined;
}

/**
 * A JSDoc block of `text` at `indent`, or '' when there is none. A star and
 * slash would end the comment and a line starting with `@` would read as a tag, so both are escaped.
 */
export function docComment(text: string | undefined, indent: string): string {
  if (text === undefined || text.trim() === '') return '';
  const lines = text
    .trim()
    .replaceAll('*/', '*\\/')
    .split('\n')
    .map((line) => line.trimEnd().replace(/^(\s*)@/, '$1\\@'));
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => (l === '' ? `${indent} *` : `${indent} * ${l}`)).join('\n')}\n${indent} */\n`;
}

/** A literal type of an enum value, or undefined for a value no literal type holds (an object, an array). */
function literal(value: unknown): string | undefined {
  if (value === null) return 'null';
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function enumType(values: unknown[]): string | undefined {
  const literals = values.map(literal);
  if (literals.length === 0 || literals.some((l) => l === undefined)) return undefined;
  return [...new Set(literals)].join(' | ');
}

/** `T[]`, with parentheses where `T` is a union or a function-like type that would otherwise bind wrongly. */
function arrayOf(element: string): string {
  return /^[\w$.<>, [\]]+$/.test(element) || /^\{[\s\S]*\}$/.test(element) ? `${element}[]` : `Array<${element}>`;
}

/** The TypeScript type of a schema node; named interfaces it needs go to `decls`, named after `name`. */
export function typeOf(node: SchemaNode, name: string, decls: Declarations): string {
  const base = baseType(node, name, decls);
  return node.nullable === true && !/(^| )null( |$)/.test(base) ? `${base} | null` : base;
}

function baseType(node: SchemaNode, name: string, decls: Declarations): string {
  if (node['x-kubernetes-int-or-string'] === true) return (node.enum && enumType(node.enum)) ?? 'number | string';
  if (node.enum !== undefined) {
    const union = enumType(node.enum);
    if (union !== undefined) return union;
  }
  switch (node.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return arrayOf(node.items === undefined ? 'unknown' : typeOf(node.items, name, decls));
    case 'object':
      return objectType(node, name, decls);
    case undefined:
      // Only the extensions let a structural schema leave out the type: any JSON value, or an object with the members it names.
      return node.properties !== undefined ? objectType(node, name, decls) : 'unknown';
    default:
      return 'unknown';
  }
}

function objectType(node: SchemaNode, name: string, decls: Declarations): string {
  const open = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (Object.keys(node.properties ?? {}).length > 0) return namedInterface(node, name, decls);
  const extra = node.additionalProperties;
  if (extra !== undefined && extra !== false) {
    return `Record<string, ${extra === true ? 'unknown' : typeOf(extra, name, decls)}>`;
  }
  // An object without members: the server keeps what preserve-unknown-fields lets through, and prunes everything else.
  return open || node['x-kubernetes-embedded-resource'] === true ? '{ [key: string]: unknown }' : '{ [key: string]: never }';
}

/** Declares an interface for an object with properties; returns its name. */
export function namedInterface(node: SchemaNode, wanted: string, decls: Declarations, header?: string): string {
  const name = decls.claim(wanted);
  const slot = decls.slot();
  decls.fill(slot, `${header ?? ''}export interface ${name} {\n${members(node, name, decls)}}\n`);
  return name;
}

const indent = '  ';

/**
 * The members of an object node, each with its doc comment; `fixed` members
 * (an object's apiVersion, kind and metadata) come first, required, with the
 * types given; a trailing index signature when unknown fields are kept.
 */
export function members(node: SchemaNode, name: string, decls: Declarations, fixed: Record<string, string> = {}): string {
  const required = new Set(node.required ?? []);
  const properties = node.properties ?? {};
  let out = '';
  for (const [key, type] of Object.entries(fixed)) out += `${docComment(Object.hasOwn(properties, key) ? properties[key]?.description : undefined, indent)}${indent}${propertyName(key)}: ${type};\n`;
  for (const [key, child] of Object.entries(properties)) {
    if (Object.hasOwn(fixed, key)) continue;
    const type = typeOf(child, `${name}${pascal(key)}`, decls);
    out += `${docComment(child.description, indent)}${indent}${propertyName(key)}${required.has(key) ? '' : '?'}: ${type};\n`;
  }
  if (node['x-kubernetes-preserve-unknown-fields'] === true) out += `${indent}[key: string]: unknown;\n`;
  return out;
}
