import type { KubeObject } from '../../types.js';
import { eventsStorageKey } from './builtinResources.js';
import { apiVersionOf, type ResourceType } from './resourceType.js';

/**
 * Objects are stored once per resource, in one representation, and converted
 * when read through another version: custom resources only change their
 * `apiVersion` (the CRD conversion strategy `None`); Events are stored in
 * their core/v1 shape and renamed field by field for events.k8s.io/v1, as
 * kube does, so an Event written through either API is read through both.
 */

type Plain = Record<string, unknown>;

// core/v1 field name -> events.k8s.io/v1 field name
const eventFieldNames: readonly (readonly [string, string])[] = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['reportingComponent', 'reportingController'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
];

function renameFields(obj: Plain, pairs: readonly (readonly [string, string])[], apiVersion: string): KubeObject {
  const out: Plain = {};
  const renamed = new Map(pairs);
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'apiVersion') continue;
    out[renamed.get(key) ?? key] = value;
  }
  out.apiVersion = apiVersion;
  return out as unknown as KubeObject;
}

function isEventsApi(type: ResourceType): boolean {
  return type.storageKey === eventsStorageKey && type.group === 'events.k8s.io';
}

/** Whether objects read through `type` are stored byte for byte as served (the fast path). */
export function servesStoredForm(type: ResourceType, stored: { readonly apiVersion?: string }): boolean {
  return !isEventsApi(type) && stored.apiVersion === apiVersionOf(type);
}

/** The stored object as `type`'s version shows it. */
export function toVersion(type: ResourceType, stored: KubeObject): KubeObject {
  if (servesStoredForm(type, stored)) return stored;
  if (isEventsApi(type)) return renameFields(stored as unknown as Plain, eventFieldNames, apiVersionOf(type));
  return { ...stored, apiVersion: apiVersionOf(type) };
}

/** An object written through `type` in the representation it is stored in. */
export function toStorage(type: ResourceType, written: KubeObject, storageApiVersion: string): KubeObject {
  if (isEventsApi(type)) {
    const reversed = eventFieldNames.map(([core, events]) => [events, core] as const);
    return renameFields(written as unknown as Plain, reversed, 'v1');
  }
  if (written.apiVersion === storageApiVersion) return written;
  return { ...written, apiVersion: storageApiVersion };
}
