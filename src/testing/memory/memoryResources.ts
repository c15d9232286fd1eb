import { crdResourceTypes } from '../../apiserver/api/crd.js';
import type { ResourceRegistry } from '../../apiserver/api/registry.js';
import { allVerbs, apiVersionOf, type ResourceType } from '../../apiserver/api/resourceType.js';
import { UnknownResourceError, unknownApiVersion, unknownKind, type KindResolver, type ResourceInfo } from '../../sinks/client/resources.js';
import { fatalStatusError } from '../../sources/listWatchFaults.js';
import type { KubeObject, ResourceRef } from '../../types.js';
import { isCustomResource, type DefinedCustomResource } from '../../customResources/defineCustomResource.js';
import { checkCustomResource } from '../checkCustomResource.js';

/**
 * A kind the in-memory cluster serves besides the built-ins (which it
 * knows as kube-apiserver 1.32 serves them): a custom resource in the shape
 * of a controller's `WatchedResource`, a `CustomResourceDefinition`
 * object (its versions, scope, schema and subresources), or what
 * `defineCustomResource` made (its CRD, checked first by
 * `checkCustomResource`, so that a CEL rule's typo fails the test).
 */
export type MemoryResource =
  | (Omit<ResourceRef, 'namespace'> & {
      kind: string;
      /** Default true. */
      namespaced?: boolean;
      /** Whether it has a `/status` subresource (default true, as most custom resources declare). */
      status?: boolean;
    })
  | KubeObject
  | DefinedCustomResource;

type CustomResource = Exclude<MemoryResource, KubeObject | DefinedCustomResource>;

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

/**
 * Whether `group` is kube's own (the core group, `apps`, ...): a resource
 * there that the built-ins lack is a typo, not a custom resource, since a
 * CRD cannot add one (its group must be a domain with a dot).
 */
function isBuiltinGroup(registry: ResourceRegistry, group: string): boolean {
  return group === '' || !group.includes('.') || registry.all().some((t) => t.builtin && t.group === group);
}

/**
 * Serves one more kind; a kind already served (a built-in, say) keeps its
 * definition. A custom resource in one of kube's own groups is refused, as
 * a CRD for it would be.
 */
export function serveResource(registry: ResourceRegistry, given: MemoryResource): void {
  if (isCustomResource(given)) checkCustomResource(given);
  const resource = isCustomResource(given) ? given.crd : given;
  const types = isCrd(resource) ? crdResourceTypes(resource) : [customType(resource as CustomResource)];
  const fresh = types.filter((t) => registry.lookup(t.group, t.version, t.resource) === undefined);
  const first = fresh[0];
  if (first === undefined) return;
  if (!isCrd(resource) && isBuiltinGroup(registry, first.group)) {
    throw new UnknownResourceError(
      `cannot serve "${first.resource}" in "${apiVersionOf(first)}" as a custom resource: ` +
        `${first.group === '' ? 'the core group' : `group "${first.group}"`} is kube's own and has no such resource (a custom resource's group is a domain with a dot)`,
    );
  }
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
  // The words of a kubeClient against the embedded API server, which finds the same through discovery;
  // for a group of one's own, what the server would need (a CRD) is, here, the `resources` option.
  const error = registry.servesGroupVersion(group, version)
    ? unknownKind(apiVersion, kind, registry.all().filter((t) => t.group === group && t.version === version).map((t) => t.kind))
    : unknownApiVersion(apiVersion);
  if (!isBuiltinGroup(registry, group)) {
    error.message += '; declare custom resources with the memory client\'s `resources` option ({ group, version, resource, kind } or the CRD object)';
  }
  throw error;
}

/**
 * The type serving a resource, or the `ListWatchError` a list-watch of the
 * embedded API server ends with for it (404, with the same words).
 */
export function typeOfResource(
  registry: ResourceRegistry,
  ref: ResourceRef,
  selectors: { labelSelector?: string | undefined; fieldSelector?: string | undefined } = {},
): ResourceType {
  const found = registry.lookup(ref.group ?? '', ref.version, ref.resource);
  if (found !== undefined) return found;
  const notFound = { code: 404, reason: 'NotFound', message: 'the server could not find the requested resource', retryAfterSeconds: undefined };
  throw fatalStatusError(notFound, 'list', ref, selectors) as Error;
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
