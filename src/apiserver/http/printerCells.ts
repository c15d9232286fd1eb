import type { KubeObject } from '../../types.js';
import { isPlainObject } from '../../util/json.js';

/**
 * What kube's printers are made of: a column, its cells, and the helpers kube's printers use to
 * make them (`<none>` for nothing, ages and durations as kube rounds them, selectors as kube
 * prints them). The columns of each kind are in corePrinters.ts and groupPrinters.ts.
 */

export interface Column {
  name: string;
  type: string;
  format?: string;
  description: string;
  priority?: number;
  cell: (obj: KubeObject, now: number) => unknown;
}

export type Plain = Record<string, unknown>;

/** A JSONPath subset: `.a.b`, `.a[0].b`, `.a[?(@.k=="v")].b`, enough for printer columns. */
export function evaluatePath(obj: unknown, path: string): unknown {
  const tokens = path.replace(/^\{?\.?/, '').replace(/\}$/, '').match(/[^.[\]]+|\[[^\]]*\]/g) ?? [];
  let current: unknown = obj;
  for (const token of tokens) {
    if (current === undefined || current === null) return undefined;
    if (token.startsWith('[')) {
      const inner = token.slice(1, -1);
      const filter = /^\?\(@\.([\w.-]+)\s*==\s*["']?([^"']*)["']?\)$/.exec(inner);
      if (!Array.isArray(current)) return undefined;
      if (filter !== null) current = current.find((item) => String(evaluatePath(item, filter[1])) === filter[2]);
      else current = current[Number(inner)];
    } else {
      if (!isPlainObject(current)) return undefined;
      current = current[token];
    }
  }
  return current;
}

/** Kube's HumanDuration: 45s, 3m20s, 12m, 5h3m, 20h, 3d4h, 40d, 2y100d, 9y. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** Kube's translateTimestampSince: `<unknown>` for no time. */
export function humanAge(since: unknown, now = Date.now()): string {
  if (typeof since !== 'string' || since === '') return '<unknown>';
  return humanDuration(now - Date.parse(since));
}

export const nameColumn: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  cell: (o) => o.metadata.name,
};

export const ageColumn: Column = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  cell: (o, now) => humanAge(o.metadata.creationTimestamp, now),
};

export const createdAtColumn: Column = { name: 'Created At', type: 'date', description: ageColumn.description, cell: (o) => o.metadata.creationTimestamp ?? '' };

export function get(o: unknown, path: string): unknown {
  return evaluatePath(o, path);
}

export function str(o: unknown, path: string, none = '<none>'): string {
  const value = get(o, path);
  return value === undefined || value === null || value === '' ? none : String(value);
}

export function int(o: unknown, path: string): number {
  const value = get(o, path);
  return typeof value === 'number' ? value : 0;
}

export function list(o: unknown, path: string): unknown[] {
  const value = get(o, path);
  return Array.isArray(value) ? value : [];
}

export function column(name: string, type: string, cell: Column['cell'], priority = 0, description = ''): Column {
  return { name, type, description, priority, cell };
}

/** A label selector as kube prints it (`app=web,tier in (a,b)`), `<none>` when empty. */
export function selectorString(selector: unknown): string {
  if (!isPlainObject(selector)) return '<none>';
  const parts: string[] = [];
  if (isPlainObject(selector.matchLabels)) for (const [k, v] of Object.entries(selector.matchLabels).sort()) parts.push(`${k}=${String(v)}`);
  for (const e of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    if (!isPlainObject(e)) continue;
    const values = Array.isArray(e.values) ? (e.values as unknown[]).map(String).sort().join(',') : '';
    const op = String(e.operator);
    if (op === 'In') parts.push(`${String(e.key)} in (${values})`);
    else if (op === 'NotIn') parts.push(`${String(e.key)} notin (${values})`);
    else if (op === 'Exists') parts.push(String(e.key));
    else if (op === 'DoesNotExist') parts.push(`!${String(e.key)}`);
  }
  return parts.length === 0 ? '<none>' : parts.join(',');
}

export function mapString(value: unknown): string {
  if (!isPlainObject(value) || Object.keys(value).length === 0) return '<none>';
  return Object.entries(value)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');
}

export function containerColumns(templateSpec: string): Column[] {
  const containers = (o: KubeObject): Plain[] => list(o, `${templateSpec}.containers`).filter(isPlainObject);
  return [
    column('Containers', 'string', (o) => containers(o).map((c) => String(c.name)).join(','), 1, 'Names of each container in the template.'),
    column('Images', 'string', (o) => containers(o).map((c) => String(c.image)).join(','), 1, 'Images referenced by each container in the template.'),
  ];
}

export const selectorColumn = column('Selector', 'string', (o) => selectorString(get(o, '.spec.selector')), 1, 'The label selector.');
