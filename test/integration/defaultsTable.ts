import { readFileSync } from 'node:fs';

/**
 * The table of kube-apiserver 1.32's defaults (test/data/defaults/kube-1.32.json; its `origin`
 * says where each comes from), and how a test reads it: the object to create for an entry, the
 * value at an entry's path, and whether that value is what kube returns.
 */

export interface DefaultEntry {
  path: string;
  value?: unknown;
  absent?: boolean;
  source: string;
  function: string;
  given?: Record<string, unknown>;
}

export interface KindDefaults {
  apiVersion: string;
  kind: string;
  resource: string;
  namespaced: boolean;
  object: Record<string, unknown>;
  defaults: DefaultEntry[];
}

export interface DefaultsTable {
  origin: Record<string, unknown>;
  kinds: KindDefaults[];
}

export const defaultsTable = JSON.parse(readFileSync(new URL('../data/defaults/kube-1.32.json', import.meta.url), 'utf8')) as DefaultsTable;

export function kindDefaults(kind: string): KindDefaults {
  const found = defaultsTable.kinds.find((k) => k.kind === kind);
  if (found === undefined) throw new Error(`no ${kind} in the defaults table`);
  return found;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** RFC 7396: what `given` does to the kind's object. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/** The object an entry is checked on, with its apiVersion, kind and name. */
export function objectFor(kind: KindDefaults, given: Record<string, unknown> | undefined, name: string): Record<string, unknown> {
  const base = mergePatch(kind.object, given ?? {}) as Record<string, unknown>;
  return { apiVersion: kind.apiVersion, kind: kind.kind, ...base, metadata: { ...(base.metadata as object), name } };
}

/** The value at `spec.containers[0].image`-style paths; undefined where any step is missing. */
export function valueAt(obj: unknown, path: string): unknown {
  let current: unknown = obj;
  for (const step of path.match(/[^.[\]]+|\[\d+\]/g) ?? []) {
    if (step.startsWith('[')) {
      current = Array.isArray(current) ? current[Number(step.slice(1, -1))] : undefined;
    } else {
      current = isObject(current) ? current[step] : undefined;
    }
  }
  return current;
}

const serviceIP = /^10\.0\.0\.(\d{1,3})$/;

/** The expected value with the table's tokens ($uid, $name) put in; $serviceIP and $nodePort are checked by `matches`. */
function resolveTokens(value: unknown, obj: Record<string, unknown>): unknown {
  const meta = obj.metadata as { uid?: string; name?: string };
  if (value === '$uid') return meta.uid;
  if (value === '$name') return meta.name;
  if (Array.isArray(value)) return value.map((v) => resolveTokens(v, obj));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveTokens(v, obj)]));
  return value;
}

function tokenMatches(expected: unknown, actual: unknown): boolean {
  if (expected === '$serviceIP') {
    const m = typeof actual === 'string' ? serviceIP.exec(actual) : null;
    return m !== null && Number(m[1]) >= 1 && Number(m[1]) <= 254;
  }
  if (expected === '$nodePort') return typeof actual === 'number' && actual >= 30000 && actual <= 32767;
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => tokenMatches(e, actual[i]));
  if (isObject(expected)) {
    return isObject(actual) && Object.keys(actual).length === Object.keys(expected).length && Object.entries(expected).every(([k, e]) => tokenMatches(e, actual[k]));
  }
  return expected === actual;
}

/** Whether what the server returned at the entry's path is kube's. */
export function matches(entry: DefaultEntry, returned: Record<string, unknown>): boolean {
  const actual = valueAt(returned, entry.path);
  if (entry.absent === true) return actual === undefined;
  return tokenMatches(resolveTokens(entry.value, returned), actual);
}
