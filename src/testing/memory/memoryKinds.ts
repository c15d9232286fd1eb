import { UnknownResourceError, type ResourceInfo } from '../../sinks/client/resources.js';
import type { KubeObject } from '../../types.js';
import { crdResourceTypes } from '../../apiserver/api/crd.js';
import { ResourceRegistry } from '../../apiserver/api/registry.js';
import { allVerbs, apiVersionOf, type ResourceType } from '../../apiserver/api/resourceType.js';

/**
 * A kind the memory client serves besides the built-ins (which it knows as
 * kube-apiserver 1.32 serves them): a custom resource, in the shape of a
 * controller's `WatchedResource`, or a `CustomResourceDefinition` object.
 */
export type MemoryResource =
  | {
      /** The API group; '' or omitted for the core group. */
      group?: string;
      version: string;
      /** The plural name (`podautoscalers`). */
      resource: string;
      kind: string;
      /** Default true. */
      namespaced?: boolean;
      /** Whether it has a `/status` subresource (default true, as most custom resources declare). */
      status?: boolean;
    }
  | KubeObject;

function isCrd(resource: MemoryResource): resource is KubeObject {
  return (resource as KubeObject).kind === 'CustomResourceDefinition' && typeof (resource as KubeObject).metadata === 'object';
}

function customType(r: Exclude<MemoryResource, KubeObject>): ResourceType {
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

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/**
 * The kinds a memory client serves, found by kind (for writes) or by
 * resource (for watches). It reuses the embedded API server's registry of
 * built-ins, so scope, plural and status subresource are kube's.
 */
export class MemoryKinds {
  private readonly registry = new ResourceRegistry();

  constructor(resources: readonly MemoryResource[] = []) {
    for (const r of resources) this.add(r);
  }

  /** Serves one more kind; a kind already served (a built-in, say) keeps its definition. */
  add(resource: MemoryResource): void {
    const types = isCrd(resource) ? crdResourceTypes(resource) : [customType(resource as Exclude<MemoryResource, KubeObject>)];
    const fresh = types.filter((t) => this.registry.lookup(t.group, t.version, t.resource) === undefined);
    const first = fresh[0];
    if (first === undefined) return;
    const others = this.registry.crdTypes(`${first.resource}.${first.group}`);
    this.registry.setCrdTypes(`${first.resource}.${first.group}`, [...others, ...fresh], apiVersionOf(first));
  }

  /** The type of a kind at an apiVersion, or an `UnknownResourceError` that says how to declare it. */
  byKind(apiVersion: string, kind: string): ResourceType {
    if (typeof apiVersion !== 'string' || apiVersion === '' || typeof kind !== 'string' || kind === '') {
      throw new UnknownResourceError(
        `cannot address an object without apiVersion and kind (got apiVersion ${JSON.stringify(apiVersion)}, kind ${JSON.stringify(kind)})`,
      );
    }
    const { group, version } = splitApiVersion(apiVersion);
    const found = this.registry.byGroupKind(group, kind).find((t) => t.version === version);
    if (found !== undefined) return found;
    throw new UnknownResourceError(
      `apiVersion "${apiVersion}" has no kind "${kind}" in the memory client; ` +
        'declare custom resources with its `resources` option ({ group, version, resource, kind } or the CRD object)',
    );
  }

  /** The type serving a resource (`group`, `version`, plural `resource`). */
  byResource(ref: { group?: string; version: string; resource: string }): ResourceType {
    const found = this.registry.lookup(ref.group ?? '', ref.version, ref.resource);
    if (found !== undefined) return found;
    throw new UnknownResourceError(
      `the memory client serves no resource "${ref.resource}" in "${apiVersionOf({ group: ref.group ?? '', version: ref.version })}"; ` +
        'declare custom resources with its `resources` option',
    );
  }

  info(type: ResourceType): ResourceInfo {
    return { group: type.group, version: type.version, resource: type.resource, kind: type.kind, namespaced: type.namespaced };
  }
}
