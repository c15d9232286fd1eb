import { create } from '@bufbuild/protobuf';
import { DurationSchema, timestampFromMs, type Duration, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { CelInput } from '@bufbuild/cel';
import { isPlainObject } from '../../../util/json.js';
import type { SchemaNode } from '../schemaNode.js';

/**
 * A custom resource's JSON as the CEL values kube binds to `self`: typed by
 * the schema (an `integer` is an int, a `number` a double even when whole,
 * `int-or-string` either), strings of format `byte`, `duration`, `date` and
 * `date-time` as bytes, durations and timestamps; at the root only
 * `apiVersion`, `kind`, `metadata.name` and `metadata.generateName` besides
 * the declared properties. Unknown fields kept by
 * `x-kubernetes-preserve-unknown-fields` are typed by their JSON.
 */

function untyped(value: unknown): CelInput {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(untyped);
  if (isPlainObject(value)) {
    // A Map, not an object: a key like `__proto__` is data here.
    const out = new Map<string, CelInput>();
    for (const [k, v] of Object.entries(value)) out.set(k, untyped(v));
    return out;
  }
  return value as CelInput;
}

const goDurationPart = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;
const nanosPerUnit: Readonly<Record<string, number>> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

function duration(text: string): Duration | string {
  const sign = text.startsWith('-') ? -1 : 1;
  let nanos = 0;
  for (const m of text.replace(/^[-+]/, '').matchAll(goDurationPart)) nanos += Number(m[1]) * (nanosPerUnit[m[2] as string] ?? 0);
  nanos *= sign;
  const seconds = Math.trunc(nanos / 1e9);
  return create(DurationSchema, { seconds: BigInt(seconds), nanos: Math.round(nanos - seconds * 1e9) });
}

function timestamp(text: string): Timestamp | string {
  const ms = Date.parse(/T/.test(text) ? text : `${text}T00:00:00Z`);
  return Number.isNaN(ms) ? text : timestampFromMs(ms);
}

function formatted(value: string, format: string | undefined): CelInput {
  switch (format) {
    case 'byte':
      return new Uint8Array(Buffer.from(value, 'base64'));
    case 'duration':
      return duration(value) as CelInput;
    case 'date':
    case 'date-time':
    case 'datetime':
      return timestamp(value) as CelInput;
    default:
      return value;
  }
}

export function toCelValue(value: unknown, node: SchemaNode | undefined, root = false): CelInput {
  if (value === null || value === undefined) return null;
  if (node === undefined) return untyped(value);
  if (node.intOrString) return typeof value === 'number' ? untyped(value) : (value as CelInput);
  switch (node.type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : untyped(value);
    case 'number':
      return value as CelInput;
    case 'string':
      return typeof value === 'string' ? formatted(value, node.format) : untyped(value);
    case 'array':
      return Array.isArray(value) ? value.map((item) => toCelValue(item, node.items)) : untyped(value);
    default:
      break;
  }
  if (!isPlainObject(value)) return untyped(value);
  const out = new Map<string, CelInput>();
  for (const [key, child] of Object.entries(value)) {
    if (root || node.embedded) {
      if (key === 'apiVersion' || key === 'kind') {
        out.set(key, child as CelInput);
        continue;
      }
      if (key === 'metadata' && isPlainObject(child)) {
        const meta = new Map<string, CelInput>();
        if (typeof child.name === 'string') meta.set('name', child.name);
        if (typeof child.generateName === 'string') meta.set('generateName', child.generateName);
        out.set('metadata', meta);
        continue;
      }
    }
    const declared = node.properties?.get(key);
    if (declared !== undefined) {
      // Rules read a declared property by its escaped name, and cannot read one that has none.
      const celName = node.celNames === undefined ? key : node.celNames.get(key);
      if (celName !== undefined) out.set(celName, toCelValue(child, declared));
      continue;
    }
    const schema = node.additional;
    if (schema !== undefined) out.set(key, toCelValue(child, schema));
    else if (node.preserveUnknown || node.additionalAny || node.properties === undefined) out.set(key, untyped(child));
  }
  return out;
}
