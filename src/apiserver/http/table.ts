import type { KubeObject } from '../../types.js';
import { toVersion } from '../api/conversion.js';
import type { StoredObject } from '../storage/objectStore.js';
import type { PrinterColumn, ResourceType } from '../api/resourceType.js';
import { builtinColumns } from './printers.js';
import { ageColumn, evaluatePath, humanAge, nameColumn, type Column } from './printerCells.js';

/**
 * Server-side printing: `kubectl get` asks for a `meta.k8s.io/v1` Table
 * (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`) and prints its
 * columns as they come. Built-ins get kube's columns (printers.ts); custom
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

type Plain = Record<string, unknown>;

function printerColumn(column: PrinterColumn): Column {
  return {
    name: column.name,
    type: column.type,
    format: column.format,
    description: column.description ?? '',
    priority: column.priority,
    cell: (o, now) => {
      const value = evaluatePath(o, column.jsonPath);
      if (column.type === 'date' && typeof value === 'string') return humanAge(value, now);
      if (value === undefined || value === null) return null;
      return typeof value === 'object' ? JSON.stringify(value) : value;
    },
  };
}

function columnsFor(type: ResourceType): Column[] {
  if (type.printerColumns !== undefined && type.printerColumns.length > 0) return [nameColumn, ...type.printerColumns.map(printerColumn)];
  return (type.builtin ? builtinColumns(type.group, type.resource) : undefined) ?? [nameColumn, ageColumn];
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
  const now = Date.now();
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
      const row: Plain = { cells: columns.map((c) => c.cell(object, now) ?? '') };
      const rowObj = rowObject(object, options);
      if (rowObj !== undefined) row.object = rowObj;
      return row;
    }),
  };
}
