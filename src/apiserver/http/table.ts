import type { KubeObject } from '../../types.js';
import { toVersion } from '../api/conversion.js';
import { isPlainObject } from '../../util/json.js';
import type { StoredObject } from '../storage/objectStore.js';
import type { PrinterColumn, ResourceType } from '../api/resourceType.js';

/**
 * Server-side printing: `kubectl get` asks for a `meta.k8s.io/v1` Table
 * (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`) and prints its
 * columns as they come. Built-ins get a few of kube's usual columns; custom
 * resources get their CRD's `additionalPrinterColumns`, or Name and Age.
 */

export interface TableOptions {
  includeObject: 'None' | 'Metadata' | 'Object';
}

export function tableOptions(accept: string | undefined, query: URLSearchParams): TableOptions | undefined {
  if (accept === undefined) return undefined;
  for (const part of accept.split(',')) {
    const params = new Map(part.split(';').slice(1).map((p) => p.trim().split('=') as [string, string]));
    if (params.get('as') === 'Table' && params.get('g') === 'meta.k8s.io' && (params.get('v') === 'v1' || params.get('v') === 'v1beta1')) {
      const include = query.get('includeObject');
      return { includeObject: include === 'None' || include === 'Object' ? include : 'Metadata' };
    }
    if (part.trim().startsWith('application/json')) return undefined;
  }
  return undefined;
}

interface Column {
  name: string;
  type: string;
  format?: string;
  description: string;
  priority?: number;
  cell: (obj: KubeObject) => unknown;
}

type Plain = Record<string, unknown>;

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

/** Kube's human-readable age: 45s, 3m20s, 12m, 5h3m, 20h, 3d4h, 40d, 2y... */
export function humanAge(since: string | undefined, now = Date.now()): string {
  if (since === undefined) return '<unknown>';
  const seconds = Math.max(0, Math.floor((now - Date.parse(since)) / 1000));
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  if (seconds < 120) return `${seconds}s`;
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 192) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 730) return `${days}d`;
  return `${Math.floor(days / 365)}y${days % 365}d`;
}

const nameColumn: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  cell: (o) => o.metadata.name,
};

const ageColumn: Column = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  cell: (o) => humanAge(o.metadata.creationTimestamp),
};

function field(name: string, path: string, description = ''): Column {
  return { name, type: 'string', description, cell: (o) => evaluatePath(o, path) ?? '' };
}

function count(name: string, path: string): Column {
  return {
    name,
    type: 'integer',
    description: '',
    cell: (o) => {
      const value = evaluatePath(o, path);
      return isPlainObject(value) ? Object.keys(value).length : 0;
    },
  };
}

function podReady(o: KubeObject): string {
  const containers = evaluatePath(o, '.spec.containers');
  const statuses = evaluatePath(o, '.status.containerStatuses');
  const total = Array.isArray(containers) ? containers.length : 0;
  const ready = Array.isArray(statuses) ? statuses.filter((s) => isPlainObject(s) && s.ready === true).length : 0;
  return `${ready}/${total}`;
}

function builtinColumns(type: ResourceType): Column[] | undefined {
  const key = `${type.group}/${type.resource}`;
  switch (key) {
    case '/pods':
      return [
        nameColumn,
        { name: 'Ready', type: 'string', description: 'The aggregate readiness state of this pod for accepting traffic.', cell: podReady },
        field('Status', '.status.phase', 'The aggregate status of the containers in this pod.'),
        { name: 'Restarts', type: 'string', description: 'The number of times the containers in this pod have been restarted.', cell: () => '0' },
        ageColumn,
      ];
    case '/namespaces':
      return [nameColumn, field('Status', '.status.phase', 'The status of the namespace'), ageColumn];
    case '/configmaps':
      return [nameColumn, count('Data', '.data'), ageColumn];
    case '/secrets':
      return [nameColumn, field('Type', '.type'), count('Data', '.data'), ageColumn];
    case '/services':
      return [nameColumn, field('Type', '.spec.type'), field('Cluster-IP', '.spec.clusterIP'), ageColumn];
    case 'apps/deployments':
      return [
        nameColumn,
        {
          name: 'Ready',
          type: 'string',
          description: 'Number of the pod with ready state',
          cell: (o) => `${Number(evaluatePath(o, '.status.readyReplicas') ?? 0)}/${Number(evaluatePath(o, '.spec.replicas') ?? 0)}`,
        },
        { name: 'Up-to-date', type: 'integer', description: '', cell: (o) => Number(evaluatePath(o, '.status.updatedReplicas') ?? 0) },
        { name: 'Available', type: 'integer', description: '', cell: (o) => Number(evaluatePath(o, '.status.availableReplicas') ?? 0) },
        ageColumn,
      ];
    case 'coordination.k8s.io/leases':
      return [nameColumn, field('Holder', '.spec.holderIdentity'), ageColumn];
    case 'apiextensions.k8s.io/customresourcedefinitions':
      return [nameColumn, { name: 'Created At', type: 'date', description: '', cell: (o) => o.metadata.creationTimestamp }];
    default:
      return undefined;
  }
}

function printerColumn(column: PrinterColumn): Column {
  return {
    name: column.name,
    type: column.type,
    format: column.format,
    description: column.description ?? '',
    priority: column.priority,
    cell: (o) => {
      const value = evaluatePath(o, column.jsonPath);
      if (column.type === 'date' && typeof value === 'string') return humanAge(value);
      if (value === undefined || value === null) return null;
      return typeof value === 'object' ? JSON.stringify(value) : value;
    },
  };
}

function columnsFor(type: ResourceType): Column[] {
  if (type.printerColumns !== undefined && type.printerColumns.length > 0) return [nameColumn, ...type.printerColumns.map(printerColumn)];
  return builtinColumns(type) ?? [nameColumn, ageColumn];
}

function rowObject(object: KubeObject, options: TableOptions): unknown {
  if (options.includeObject === 'None') return undefined;
  if (options.includeObject === 'Object') return object;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata };
}

export function toTable(
  type: ResourceType,
  items: readonly StoredObject[],
  list: { rv: number; continueToken?: string; remainingItemCount?: number },
  options: TableOptions,
): Plain {
  const columns = columnsFor(type);
  const metadata: Plain = { resourceVersion: String(list.rv) };
  if (list.continueToken !== undefined) metadata.continue = list.continueToken;
  if (list.remainingItemCount !== undefined) metadata.remainingItemCount = list.remainingItemCount;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: c.description,
      priority: c.priority ?? 0,
    })),
    rows: items.map((stored) => {
      const object = toVersion(type, stored.object);
      const row: Plain = { cells: columns.map((c) => c.cell(object) ?? '') };
      const rowObj = rowObject(object, options);
      if (rowObj !== undefined) row.object = rowObj;
      return row;
    }),
  };
}
