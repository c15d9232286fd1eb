import { crdResourceTypes } from '../../apiserver/api/crd.js';
import type { ResourceRegistry } from '../../apiserver/api/registry.js';
import { allVerbs, apiVersionOf, type ResourceType } from '../../apiserver/api/resourceType.js';
import { UnknownResourceError, type KindResolver, type ResourceInfo } from '../../sinks/client/resources.js';
import type { KubeObject, ResourceRef } from '../../types.js';

/**
 * A kind the in-memory cluster serves besides the built-ins (which it
 * knows as kube-apiserver 1.32 serves them): a custom resource in the shape
 * of a controller's `WatchedResource`, or a `CustomResourceDefinition`
 * object (its versions, scope, schema and subresources).
 */
export type MemoryResource =
  | (Omit<ResourceRef, 'namespace'> & {
      kind: string;
      /** Default true. */
      namespaced?: boolean;
      /** Whether it has a `/status` subresource (default true, as most custom resources declare). */
      status?: boolean;
    })
  | KubeObject;

type CustomResource = Exclude<MemoryResource, KubeObject>;

function isCrd(resource: MemoryResource): resource is KubeObject {
  return (resource as KubeObject).kind === 'CustomResourceDefinition' && typeof (resource as KubeObject).metadata === 'object';
}

function customType(r: CustomResource): ResourceType {
  const group = r.group ?? '';
  return Object.freeze({
    group,
    version: r.version,
    resource: r.resource,
    singular: r.kind.toLowerCase(),
    kind: r.kind,
    listKind: `${r.kind}List`,
    namespaced: r.namespaced ?? true,
    shortNames: [],
    categories: [],
    verbs: allVerbs,
    status: r.status ?? true,
    builtin: false,
    storageKey: `${group}/${r.resource}`,
    selectableFields: [],
  });
}

/** Serves one more kind; a kind already served (a built-in, say) keeps its definition. */
export function serveResource(registry: ResourceRegistry, resource: MemoryResource): void {
  const types = isCrd(resource) ? crdResourceTypes(resource) : [customType(resource as CustomResource)];
  const fresh = types.filter((t) => registry.lookup(t.group, t.version, t.resource) === undefined);
  const first = fresh[0];
  if (first === undefined) return;
  const name = `${first.resource}.${first.group}`;
  registry.setCrdTypes(name, [...registry.crdTypes(name), ...fresh], apiVersionOf(first));
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** The type of a kind at an apiVersion, or an `UnknownResourceError` that says how to declare it. */
export function typeOfKind(registry: ResourceRegistry, apiVersion: string, kind: string): ResourceType {
  if (typeof apiVersion !== 'string' || apiVersion === '' || typeof kind !== 'string' || kind === '') {
    throw new UnknownResourceError(
      `cannot address an object without apiVersion and kind (got apiVersion ${JSON.stringify(apiVersion)}, kind ${JSON.stringify(kind)})`,
    );
  }
  const { group, version } = splitApiVersion(apiVersion);
  const found = registry.byGroupKind(group, kind).find((t) => t.version === version);
  if (found !== undefined) return found;
  throw new UnknownResourceError(
    `apiVersion "${apiVersion}" has no kind "${kind}" in the memory client; ` +
      'declare custom resources with its `resources` option ({ group, version, resource, kind } or the CRD object)',
  );
}

/** The type serving a resource, or an `UnknownResourceError` that says how to declare it. */
export function typeOfResource(registry: ResourceRegistry, ref: Omit<ResourceRef, 'namespace'>): ResourceType {
  const found = registry.lookup(ref.group ?? '', ref.version, ref.resource);
  if (found !== undefined) return found;
  throw new UnknownResourceError(
    `the memory client serves no resource "${ref.resource}" in "${apiVersionOf({ group: ref.group ?? '', version: ref.version })}"; ` +
      'declare custom resources with its `resources` option',
  );
}

function resourceInfo(type: ResourceType): ResourceInfo {
  return { group: type.group, version: type.version, resource: type.resource, kind: type.kind, namespaced: type.namespaced };
}

/**
 * Where the memory client finds kinds: the in-memory cluster's registry,
 * read directly, so that no discovery request shows among the requests a
 * test reads back (nor meets a fault meant for the reconcile's own).
 */
export function registryResolver(registry: ResourceRegistry): KindResolver {
  return { resolve: async (apiVersion, kind) => resourceInfo(typeOfKind(registry, apiVersion, kind)) };
}
