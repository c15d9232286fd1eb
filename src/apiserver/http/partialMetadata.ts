import type { KubeObject } from '../../types.js';
import { toVersion } from '../api/conversion.js';
import type { ResourceType } from '../api/resourceType.js';
import { ApiError } from '../api/statusError.js';
import type { StoredObject } from '../storage/objectStore.js';

/**
 * kube's metadata-only answers: a client that asks for
 * `Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`
 * on a list (`as=PartialObjectMetadata` on a get or a watch) gets each
 * object as `{ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1',
 * metadata }`, the list as a `PartialObjectMetadataList` with the list's
 * resourceVersion and continue token. This is what client-go's metadata
 * informer, controller-runtime's `OnlyMetadata` and kube-rs's
 * `metadata_watcher` ask for. As kube, the first acceptable type in the
 * header wins (plain JSON before it means plain JSON), and a list asked for
 * as a single `PartialObjectMetadata` (or an object as a list) is 406.
 */

export type MetadataTarget = 'PartialObjectMetadata' | 'PartialObjectMetadataList';

/** What a request's `Accept` asks for, if a metadata-only answer: the first JSON media type decides. */
export function metadataTarget(accept: string | undefined): MetadataTarget | undefined {
  if (accept === undefined) return undefined;
  for (const part of accept.split(',')) {
    const [type, ...rest] = part.split(';').map((p) => p.trim());
    if (type !== 'application/json' && type !== '*/*') continue;
    const params = new Map(rest.map((p) => p.split('=').map((x) => x.trim()) as [string, string]));
    const as = params.get('as');
    if (as === undefined) return undefined;
    if ((as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') && params.get('g') === 'meta.k8s.io' && (params.get('v') === 'v1' || params.get('v') === 'v1beta1')) return as;
    // Another `as` (a Table: table.ts serves it) is no metadata answer.
    return undefined;
  }
  return undefined;
}

/** kube's error for a metadata form that does not fit the request (a list asked for as one object, or the reverse). */
export function checkTarget(target: MetadataTarget, verb: 'get' | 'list' | 'watch'): void {
  const wanted: MetadataTarget = verb === 'list' ? 'PartialObjectMetadataList' : 'PartialObjectMetadata';
  if (target === wanted) return;
  throw new ApiError(
    406,
    'NotAcceptable',
    verb === 'list'
      ? 'you requested PartialObjectMetadata, but the requested object is a list'
      : 'you requested PartialObjectMetadataList, but the requested object is not a list',
  );
}

/** One stored object as kube's `PartialObjectMetadata`, in the version asked for. */
export function partialObjectMetadata(type: ResourceType, stored: StoredObject): { kind: string; apiVersion: string; metadata: KubeObject['metadata'] } {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: toVersion(type, stored.object).metadata };
}

/** A list page as kube's `PartialObjectMetadataList`. */
export function partialObjectMetadataListJson(
  type: ResourceType,
  page: { rv: number; items: readonly StoredObject[]; continueToken?: string | undefined; remainingItemCount?: number | undefined; shardSelector?: string | undefined },
): string {
  const metadata: Record<string, unknown> = { resourceVersion: String(page.rv) };
  if (page.continueToken !== undefined) metadata.continue = page.continueToken;
  if (page.remainingItemCount !== undefined) metadata.remainingItemCount = page.remainingItemCount;
  if (page.shardSelector !== undefined) metadata.shardInfo = { selector: page.shardSelector };
  const items = page.items.map((stored) => JSON.stringify(partialObjectMetadata(type, stored)));
  return `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":${JSON.stringify(metadata)},"items":[${items.join(',')}]}`;
}
