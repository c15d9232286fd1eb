import { isDeepStrictEqual } from 'node:util';

/**
 * What the expectations of the marble helpers compare with: a pattern says
 * only what matters to the test, so a value may carry more than it names.
 *
 * - A plain object matches an object that has each of its fields, each
 *   matching the pattern's (fields it does not name are not compared); a
 *   field given as `undefined` must be absent or undefined.
 * - An array matches an array of the same length, item by item.
 * - A RegExp matches a string it finds, or an Error whose message it finds.
 * - A class (a function with a prototype) matches its instances.
 * - An Error matches an error of the same name and message.
 * - Anything else matches an equal value (`isDeepStrictEqual`).
 */
export type Pattern = unknown;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isClass(value: unknown): value is abstract new (...args: never[]) => unknown {
  return typeof value === 'function' && typeof (value as { prototype?: unknown }).prototype === 'object';
}

/** Whether `actual` matches `pattern` (see `Pattern`). */
export function matchesPattern(actual: unknown, pattern: Pattern): boolean {
  if (pattern instanceof RegExp) {
    if (typeof actual === 'string') return pattern.test(actual);
    if (actual instanceof Error) return pattern.test(actual.message);
    return actual instanceof RegExp && actual.source === pattern.source && actual.flags === pattern.flags;
  }
  if (isClass(pattern)) return actual instanceof pattern || actual === pattern;
  if (pattern instanceof Error) {
    return actual instanceof Error && actual.name === pattern.name && actual.message === pattern.message;
  }
  if (Array.isArray(pattern)) {
    return Array.isArray(actual) && actual.length === pattern.length && pattern.every((p, i) => matchesPattern(actual[i], p));
  }
  if (isPlainObject(pattern)) {
    if (actual === null || typeof actual !== 'object') return false;
    const record = actual as Record<string, unknown>;
    return Object.entries(pattern).every(([key, p]) => (p === undefined ? record[key] === undefined : matchesPattern(record[key], p)));
  }
  return isDeepStrictEqual(actual, pattern);
}

/**
 * `actual` seen through `pattern`: only the fields the pattern names, so
 * that a value that matches renders exactly as its pattern does, and one
 * that does not shows the fields that differ.
 */
export function projectOnto(actual: unknown, pattern: Pattern): unknown {
  if (matchesPattern(actual, pattern)) return pattern;
  if (Array.isArray(pattern) && Array.isArray(actual) && actual.length === pattern.length) {
    return actual.map((item, i) => projectOnto(item, pattern[i]));
  }
  if (isPlainObject(pattern) && actual !== null && typeof actual === 'object') {
    const record = actual as Record<string, unknown>;
    return Object.fromEntries(Object.keys(pattern).map((key) => [key, projectOnto(record[key], pattern[key])]));
  }
  return actual;
}

/** A one-line rendering of a value or pattern, for failure messages. */
export function renderValue(value: unknown): string {
  const seen = new WeakSet<object>();
  const walk = (v: unknown): string => {
    if (v === undefined) return 'undefined';
    if (typeof v === 'string') return JSON.stringify(v);
    if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v === null) return String(v);
    if (typeof v === 'symbol') return v.toString();
    if (v instanceof RegExp) return String(v);
    if (typeof v === 'function') return isClass(v) ? `<${v.name || 'class'}>` : `<function ${v.name}>`;
    if (v instanceof Error) return `${v.name}(${JSON.stringify(v.message)})`;
    if (seen.has(v)) return '<circular>';
    seen.add(v);
    if (Array.isArray(v)) return `[${v.map(walk).join(', ')}]`;
    const entries = Object.entries(v as Record<string, unknown>).map(([k, item]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${walk(item)}`);
    const name = isPlainObject(v) ? '' : `${(v as object).constructor?.name ?? ''} `;
    return `${name}{ ${entries.join(', ')} }`.replace('{  }', '{}');
  };
  return walk(value);
}
