import type { ObjectStore, Snapshot, StoredObject } from './objectStore.js';
import type { ResourceType } from '../api/resourceType.js';
import { isSelective, matchesFilter, type ObjectFilter } from '../selectors/selectors.js';
import { badRequest, invalid, tooLargeResourceVersion, type FieldError } from '../api/statusError.js';

/**
 * Lists as kube-apiserver serves them: `resourceVersion` and
 * `resourceVersionMatch` choose the snapshot, `limit` cuts it into pages,
 * and the `continue` token carries the snapshot's resourceVersion and the
 * last key, so every page of one list is read at the same resourceVersion,
 * whatever changed in between, until the history no longer reaches it (410).
 */

export interface ListQuery {
  namespace: string | undefined;
  filter: ObjectFilter;
  limit: number | undefined;
  continueToken: string | undefined;
  resourceVersion: string | undefined;
  resourceVersionMatch: string | undefined;
}

export interface ListPage {
  rv: number;
  items: StoredObject[];
  continueToken?: string;
  remainingItemCount?: number;
  /** The `shardSelector` the list applied, echoed in `metadata.shardInfo` (KEP-5866). */
  shardSelector?: string;
}

interface ContinueKey {
  v: 'meta.k8s.io/v1';
  /** The snapshot's resourceVersion; -1 continues at the latest (the token a 410 offers). */
  rv: number;
  /** The last key returned: the next page starts after it. */
  start: string;
}

export function encodeContinue(rv: number, start: string): string {
  const key: ContinueKey = { v: 'meta.k8s.io/v1', rv, start };
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

function decodeContinue(token: string): ContinueKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badRequest(`continue key is not valid: the token ${JSON.stringify(token)} is not base64-encoded JSON`);
  }
  const key = parsed as Partial<ContinueKey> | null;
  if (key === null || typeof key !== 'object' || key.v !== 'meta.k8s.io/v1' || typeof key.start !== 'string' || !Number.isInteger(key.rv)) {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  if ((key.rv as number) === 0 || (key.rv as number) < -1) throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  return key as ContinueKey;
}

function listOptionsInvalid(errors: FieldError[]): Error {
  return invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', errors);
}

/** Parses a resourceVersion the server issued (a decimal counter); anything else is a client mistake. */
export function parseResourceVersion(text: string): number {
  if (!/^\d+$/.test(text)) throw badRequest(`invalid resource version: ${JSON.stringify(text)} is not a resourceVersion this server issued`);
  return Number(text);
}

export const continueExpiredMessage =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
  'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
  'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

const tooOldListMessage = 'The resourceVersion for the provided list is too old.';

function snapshotFor(store: ObjectStore, type: ResourceType, query: ListQuery): { snapshot: Snapshot; start: string | undefined } {
  const current = store.resourceVersion;
  if (query.continueToken !== undefined && query.continueToken !== '') {
    if (query.resourceVersion !== undefined && query.resourceVersion !== '' && query.resourceVersion !== '0') {
      throw badRequest('specifying resource version is not allowed when using continue');
    }
    const key = decodeContinue(query.continueToken);
    if (key.rv === -1) return { snapshot: store.current(type.storageKey), start: key.start };
    if (key.rv > current) throw tooLargeResourceVersion(key.rv, current);
    const latest = encodeContinue(-1, key.start);
    return { snapshot: store.at(type.storageKey, key.rv, continueExpiredMessage, latest), start: key.start };
  }
  const rvText = query.resourceVersion ?? '';
  const match = query.resourceVersionMatch ?? '';
  if (match !== '') {
    if (match !== 'NotOlderThan' && match !== 'Exact') {
      throw listOptionsInvalid([
        { field: 'resourceVersionMatch', type: 'Unsupported value', detail: `${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan"` },
      ]);
    }
    if (rvText === '') {
      throw listOptionsInvalid([{ field: 'resourceVersionMatch', type: 'Forbidden', detail: 'resourceVersionMatch is forbidden unless resourceVersion is provided' }]);
    }
    if (match === 'Exact' && rvText === '0') {
      throw listOptionsInvalid([{ field: 'resourceVersionMatch', type: 'Forbidden', detail: 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"' }]);
    }
  }
  if (rvText === '' || rvText === '0') return { snapshot: store.current(type.storageKey), start: undefined };
  const rv = parseResourceVersion(rvText);
  if (rv > current) throw tooLargeResourceVersion(rv, current);
  // With a limit and no match, kube reads exactly at the version (the etcd path); without, not older than it.
  const exact = match === 'Exact' || (match === '' && query.limit !== undefined && query.limit > 0);
  if (!exact) return { snapshot: store.current(type.storageKey), start: undefined };
  return { snapshot: store.at(type.storageKey, rv, tooOldListMessage), start: undefined };
}

/** Index of the first key after `start` (or at it, when `inclusive`), by binary search. */
function firstIndexFrom(keys: readonly string[], start: string, inclusive: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] < start || (!inclusive && keys[mid] === start)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function listPage(store: ObjectStore, type: ResourceType, query: ListQuery): ListPage {
  const { snapshot, start } = snapshotFor(store, type, query);
  const keys = snapshot.keys;
  const prefix = type.namespaced && query.namespace !== undefined ? `${query.namespace}/` : undefined;
  let i = start === undefined ? 0 : firstIndexFrom(keys, start, false);
  if (prefix !== undefined) i = Math.max(i, firstIndexFrom(keys, prefix, true));
  const limit = query.limit !== undefined && query.limit > 0 ? query.limit : Infinity;
  const selective = isSelective(query.filter);
  const items: StoredObject[] = [];
  let lastKey: string | undefined;
  let more = false;
  let remaining = 0;
  for (; i < keys.length; i++) {
    const key = keys[i];
    if (prefix !== undefined) {
      if (!key.startsWith(prefix)) {
        if (key > prefix) break;
        continue;
      }
    }
    const stored = snapshot.objects.get(key) as StoredObject;
    if (selective && !matchesFilter(query.filter, stored.object)) continue;
    if (items.length < limit) {
      items.push(stored);
      lastKey = key;
    } else {
      more = true;
      if (selective) break;
      remaining += 1;
    }
  }
  const page: ListPage = { rv: snapshot.rv, items };
  if (more && lastKey !== undefined) {
    page.continueToken = encodeContinue(snapshot.rv, lastKey);
    if (!selective) page.remainingItemCount = remaining;
  }
  return page;
}
