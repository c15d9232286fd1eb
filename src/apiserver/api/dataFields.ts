import type { KubeObject } from '../../types.js';
import { isPlainObject, setMember } from '../../util/json.js';
import { base64ErrorOffset } from './goBase64.js';
import type { ResourceType } from './resourceType.js';
import type { FieldError } from './statusError.js';

/**
 * The data of ConfigMaps and Secrets as kube-apiserver 1.32 takes it. The
 * `[]byte` maps (a Secret's `data`, a ConfigMap's `binaryData`) travel as
 * base64, which kube's JSON decoding refuses before anything else is looked
 * at (`illegal base64 data at input byte N`, Go's words). Then at most
 * 1 MiB of data in all (corev1.MaxSecretSize): a ConfigMap's `data` and
 * `binaryData` together, as kube reports it on the whole object (`[]`), and
 * a Secret's `data`, with `stringData` merged into it as kube's conversion
 * merges it (a key in both counts once, as `stringData`).
 */

export const maxDataBytes = 1024 * 1024;

function entries(value: unknown): [string, unknown][] {
  return isPlainObject(value) ? Object.entries(value) : [];
}

function byteMapOf(type: ResourceType, object: KubeObject): unknown {
  if (!type.builtin || type.group !== '') return undefined;
  const plain = object as unknown as Record<string, unknown>;
  if (type.resource === 'secrets') return plain.data;
  if (type.resource === 'configmaps') return plain.binaryData;
  return undefined;
}

/** Go's decoding error of the first value of a `[]byte` map that is no base64, or undefined. */
export function byteFieldError(type: ResourceType, object: KubeObject): string | undefined {
  for (const [, value] of entries(byteMapOf(type, object))) {
    if (typeof value !== 'string') continue;
    const offset = base64ErrorOffset(value);
    if (offset !== undefined) return `illegal base64 data at input byte ${offset}`;
  }
  return undefined;
}

function decodedLength(value: unknown): number {
  return typeof value === 'string' ? Buffer.from(value.replace(/[\r\n]/g, ''), 'base64').length : 0;
}

function textLength(value: unknown): number {
  return typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : 0;
}

function total(pairs: [string, unknown][], length: (value: unknown) => number): number {
  return pairs.reduce((sum, [, value]) => sum + length(value), 0);
}

/** The error of a ConfigMap or Secret holding more than 1 MiB of data (none for anything else). */
export function dataSizeErrors(type: ResourceType, object: KubeObject): FieldError[] {
  if (!type.builtin || type.group !== '') return [];
  const plain = object as unknown as Record<string, unknown>;
  const detail = `may not be more than ${maxDataBytes} bytes`;
  if (type.resource === 'configmaps') {
    const size = total(entries(plain.data), textLength) + total(entries(plain.binaryData), decodedLength);
    return size > maxDataBytes ? [{ field: '[]', type: 'Too long', detail }] : [];
  }
  if (type.resource === 'secrets') {
    const strings = entries(plain.stringData);
    const overridden = new Set(strings.map(([key]) => key));
    const size = total(entries(plain.data).filter(([key]) => !overridden.has(key)), decodedLength) + total(strings, textLength);
    return size > maxDataBytes ? [{ field: 'data', type: 'Too long', detail }] : [];
  }
  return [];
}

/**
 * A Secret's `stringData` written into its `data`, as kube's conversion of a v1 Secret does on
 * every write (create, update, each patch type, apply): each value, base64'd, replaces the `data`
 * key of the same name, and `stringData` is not stored (the internal type has no such field), so
 * it never comes back. Values that are not strings are left for validation to refuse.
 */
export function mergeStringData(type: ResourceType, object: KubeObject): void {
  if (!type.builtin || type.group !== '' || type.resource !== 'secrets') return;
  const plain = object as unknown as Record<string, unknown>;
  if (!Object.hasOwn(plain, 'stringData')) return;
  const strings = plain.stringData;
  delete plain.stringData;
  if (!isPlainObject(strings)) return;
  const data: Record<string, unknown> = isPlainObject(plain.data) ? { ...plain.data } : {};
  for (const [key, value] of Object.entries(strings)) {
    if (typeof value === 'string') setMember(data, key, Buffer.from(value, 'utf8').toString('base64'));
  }
  if (Object.keys(data).length > 0) plain.data = data;
  else delete plain.data;
}
