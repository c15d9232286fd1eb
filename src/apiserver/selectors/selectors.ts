import type { KubeObject } from '../../types.js';
import { defaultFieldsFor, parseFieldSelector, usesDefaultFieldConversion, type FieldSelector } from './fieldSelector.js';
import { parseLabelSelector, type LabelSelector } from './labelSelector.js';
import type { ResourceType } from '../api/resourceType.js';
import { SelectorError } from './selectorError.js';
import { badRequest } from '../api/statusError.js';
import { matchesShardSelector, type ShardSelector } from '../../util/shardSelector.js';

/** The label, field and shard selectors of one list or watch request, checked against the resource. */
export interface ObjectFilter {
  readonly label: LabelSelector | undefined;
  readonly field: FieldSelector | undefined;
  /** KEP-5866's `shardSelector`, when the server honours it (see shardFilter.ts). */
  readonly shard?: ShardSelector | undefined;
}

/** The fields a field selector may name for `type`. */
export function selectableFields(type: ResourceType): readonly string[] {
  if (type.builtin) return defaultFieldsFor({ group: type.group, kind: type.kind });
  return ['metadata.name', 'metadata.namespace', ...type.selectableFields];
}

/** Parses `labelSelector` and `fieldSelector`; a bad one is 400 BadRequest with the parser's message. */
export function parseFilter(type: ResourceType, labelText: string | null, fieldText: string | null): ObjectFilter {
  try {
    const label = labelText === null || labelText === '' ? undefined : parseLabelSelector(labelText);
    const defaultConversion = !type.builtin || usesDefaultFieldConversion({ group: type.group, kind: type.kind });
    const field =
      fieldText === null || fieldText === '' ? undefined : parseFieldSelector(fieldText, selectableFields(type), { defaultConversion });
    return { label: label?.empty ? undefined : label, field: field?.empty ? undefined : field };
  } catch (error) {
    if (error instanceof SelectorError) throw badRequest(error.message);
    throw error;
  }
}

export function isSelective(filter: ObjectFilter): boolean {
  return filter.label !== undefined || filter.field !== undefined || filter.shard !== undefined;
}

export function matchesFilter(filter: ObjectFilter, object: KubeObject): boolean {
  if (filter.label !== undefined && !filter.label.matches(object.metadata.labels)) return false;
  if (filter.field !== undefined && !filter.field.matches(object)) return false;
  if (filter.shard !== undefined && !matchesShardSelector(filter.shard, object)) return false;
  return true;
}
