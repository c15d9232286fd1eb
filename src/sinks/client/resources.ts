import { collectionPath, type ResourceRef } from '../../types.js';
import type { KubeRequest } from './kubeTransport.js';
import { isNotFound } from './errors.js';

/** Where a kind lives on the server, as discovery tells it: its resource (group always set, '' for core), kind and scope. */
export interface ResourceInfo extends Required<Omit<ResourceRef, 'namespace'>> {
  /** The kind (`Deployment`). */
  kind: string;
  /** Whether its objects live in namespaces. */
  namespaced: boolean;
}

/** A kind the server does not serve (unknown group/version, or no such kind in it). */
export class UnknownResourceError extends Error {
  override readonly name = 'UnknownResourceError';
}

/** The error for an apiVersion the server does not serve (shared with the memory client, which must say the same). */
export function unknownApiVersion(apiVersion: string, cause?: unknown): UnknownResourceError {
  return new UnknownResourceError(`the server does not serve apiVersion "${apiVersion}"`, cause === undefined ? undefined : { cause });
}

/** The error for a kind that a served apiVersion lacks, with the kinds it has. */
export function unknownKind(apiVersion: string, kind: string, served: Iterable<string>): UnknownResourceError {
  const kinds = [...new Set(served)].sort();
  return new UnknownResourceError(`apiVersion "${apiVersion}" has no kind "${kind}" (it serves: ${kinds.join(', ') || 'nothing'})`);
}

interface ApiResource {
  name: string;
  /** The kind of the resource's objects. */
  kind: string;
  /** Whether its objects live in namespaces. */
  namespaced: boolean;
}

interface ApiResourceList {
  resources?: ApiResource[];
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/**
 * The URL path of a collection (no name) or of one object, optionally a
 * subresource of it. The namespace is used for namespaced kinds only.
 */
export function resourcePath(info: ResourceInfo, namespace: string | undefined, name?: string, subresource?: string): string {
  const collection = collectionPath({
    group: info.group,
    version: info.version,
    resource: info.resource,
    namespace: info.namespaced ? namespace : undefined,
  });
  const one = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  const sub = subresource === undefined ? '' : `/${subresource}`;
  return `${collection}${one}${sub}`;
}

/**
 * Finds the resource of a kind through discovery (`GET /api/v1`,
 * `GET /apis/<group>/<version>`), once per group version and client: the
 * answer is cached, and concurrent lookups share one request. A kind missing
 * from a cached list is looked up once more, since a CRD may have been
 * created since; a failed discovery is not cached.
 */
/** Finds where a kind lives: its resource, group version and scope. */
export interface KindResolver {
  /** Where `kind` of `apiVersion` lives, or an `UnknownResourceError` naming what the server serves instead. */
  resolve(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ResourceInfo>;
}

/** How the resolver sends its discovery requests (the client's own way, retries included). */
export type DiscoveryRequest = <T>(request: KubeRequest, signal: AbortSignal | undefined) => Promise<T>;

export class ResourceResolver implements KindResolver {
  private readonly lists = new Map<string, Promise<ApiResourceList>>();

  constructor(private readonly request: DiscoveryRequest) {}

  private fetchList(apiVersion: string, signal?: AbortSignal): Promise<ApiResourceList> {
    const { group, version } = splitApiVersion(apiVersion);
    const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    const pending = this.request<ApiResourceList>({ method: 'GET', path, describe: { verb: 'discover', resource: apiVersion } }, signal)
      .catch((err: unknown) => {
        this.lists.delete(apiVersion);
        if (isNotFound(err)) throw unknownApiVersion(apiVersion, err);
        throw err;
      });
    this.lists.set(apiVersion, pending);
    return pending;
  }

  /**
   * Where `kind` of `apiVersion` lives, from discovery (cached per apiVersion, looked up again once for a kind the cache lacks).
   */
  async resolve(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ResourceInfo> {
    if (typeof apiVersion !== 'string' || apiVersion === '' || typeof kind !== 'string' || kind === '') {
      throw new UnknownResourceError(
        `cannot address an object without apiVersion and kind (got apiVersion ${JSON.stringify(apiVersion)}, kind ${JSON.stringify(kind)})`,
      );
    }
    const cached = this.lists.get(apiVersion);
    let list = await (cached ?? this.fetchList(apiVersion, signal));
    let found = find(list, kind);
    if (found === undefined && cached !== undefined) {
      list = await this.fetchList(apiVersion, signal);
      found = find(list, kind);
    }
    if (found === undefined) {
      throw unknownKind(apiVersion, kind, (list.resources ?? []).filter((r) => !r.name.includes('/')).map((r) => r.kind));
    }
    const { group, version } = splitApiVersion(apiVersion);
    return { group, version, resource: found.name, kind, namespaced: found.namespaced };
  }
}

function find(list: ApiResourceList, kind: string): ApiResource | undefined {
  return list.resources?.find((r) => r.kind === kind && !r.name.includes('/'));
}
