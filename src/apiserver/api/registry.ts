import { rbacResources } from '../auth/rbacResources.js';
import { builtinResources, eventsStorageKey } from './builtinResources.js';
import { apiVersionOf, type ResourceType } from './resourceType.js';

/**
 * The served resources: built-ins, plus those that CRDs add and remove while
 * the server runs. Lookups by URL (group, version, plural) and by kind.
 */
export class ResourceRegistry {
  private readonly byPath = new Map<string, ResourceType>();
  /** CRD name -> the types it serves. */
  private readonly fromCrd = new Map<string, ResourceType[]>();
  private readonly storageVersions = new Map<string, string>();

  constructor() {
    for (const type of builtinResources()) this.add(type);
    for (const type of rbacResources()) this.add(type);
    this.storageVersions.set(eventsStorageKey, 'v1');
  }

  private add(type: ResourceType): void {
    this.byPath.set(pathKey(type.group, type.version, type.resource), type);
    if (!this.storageVersions.has(type.storageKey)) this.storageVersions.set(type.storageKey, apiVersionOf(type));
  }

  lookup(group: string, version: string, resource: string): ResourceType | undefined {
    return this.byPath.get(pathKey(group, version, resource));
  }

  /** Whether any version of the group is served (to tell an unknown group from an unknown resource). */
  servesGroupVersion(group: string, version: string): boolean {
    for (const type of this.byPath.values()) if (type.group === group && type.version === version) return true;
    return false;
  }

  all(): ResourceType[] {
    return [...this.byPath.values()];
  }

  /** The apiVersion that objects of a storage key are kept in. */
  storageApiVersion(storageKey: string): string | undefined {
    return this.storageVersions.get(storageKey);
  }

  /** Any served version of a storage key (the storage version first), for in-process reads. */
  typeForStorage(storageKey: string): ResourceType | undefined {
    const apiVersion = this.storageVersions.get(storageKey);
    let fallback: ResourceType | undefined;
    for (const type of this.byPath.values()) {
      if (type.storageKey !== storageKey) continue;
      if (apiVersionOf(type) === apiVersion) return type;
      fallback ??= type;
    }
    return fallback;
  }

  /** The types for a kind in a group (all served versions). */
  byGroupKind(group: string, kind: string): ResourceType[] {
    return this.all().filter((t) => t.group === group && t.kind === kind);
  }

  /** Replaces what a CRD serves (an empty list stops serving it). */
  setCrdTypes(crdName: string, types: readonly ResourceType[], storageVersion: string | undefined): void {
    for (const old of this.fromCrd.get(crdName) ?? []) {
      this.byPath.delete(pathKey(old.group, old.version, old.resource));
      this.storageVersions.delete(old.storageKey);
    }
    this.fromCrd.delete(crdName);
    if (types.length === 0) return;
    this.fromCrd.set(crdName, [...types]);
    for (const type of types) this.byPath.set(pathKey(type.group, type.version, type.resource), type);
    if (storageVersion !== undefined) this.storageVersions.set(types[0].storageKey, storageVersion);
  }

  crdTypes(crdName: string): readonly ResourceType[] {
    return this.fromCrd.get(crdName) ?? [];
  }
}

function pathKey(group: string, version: string, resource: string): string {
  return `${group}/${version}/${resource}`;
}
