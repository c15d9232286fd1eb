/** JSON values as the patch and apply code sees them (what `JSON.parse` returns). */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Kube's (Go's) idea of a JSON value's type, for messages and type-mismatch checks. */
export function goTypeName(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return '[]interface {}';
  switch (typeof value) {
    case 'object':
      return 'map[string]interface {}';
    case 'string':
      return 'string';
    case 'number':
      return Number.isInteger(value) ? 'int64' : 'float64';
    case 'boolean':
      return 'bool';
    default:
      return typeof value;
  }
}

/** Roughly Go's `%v` of a decoded JSON value, which kube prints in several patch errors. */
export function goFormat(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goFormat).join(' ')}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort();
    return `map[${keys.map((k) => `${k}:${goFormat(value[k])}`).join(' ')}]`;
  }
  return String(value);
}

/** The JSON kind Go's decoder names when a value does not fit ("object", "array", "bool", ...). */
export function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'boolean' ? 'bool' : typeof value;
}
