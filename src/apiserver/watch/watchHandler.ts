import { parseResourceVersion } from '../storage/list.js';
import type { StoredObject } from '../storage/objectStore.js';
import type { WatchRequest } from '../http/requestContext.js';
import { apiVersionOf } from '../api/resourceType.js';
import { escapeFieldValue } from '../selectors/fieldSelector.js';
import { isSelective, matchesFilter, parseFilter } from '../selectors/selectors.js';
import { parseShardFilter } from '../selectors/shardFilter.js';
import { ApiError, badRequest, invalid, tooLargeResourceVersion, type FieldError } from '../api/statusError.js';
import { tableOptions, toTable } from '../http/table.js';
import { checkTarget, metadataTarget, partialObjectMetadata } from '../http/partialMetadata.js';
import { Watcher } from './watcher.js';
import { WatchStream } from './watchStream.js';

/**
 * Opens a watch: picks where it starts (synthetic ADDED events for the
 * current objects when started without a resourceVersion or with
 * `sendInitialEvents`, else a replay of the history after the given
 * version, or 410 Expired when the history no longer reaches it). The
 * watcher is registered and starts catching up in one synchronous step, so
 * no change falls between the two (see watcher.ts).
 */

function watchOptionsInvalid(errors: FieldError[]): Error {
  return invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', errors);
}

/** The longest timeout a Node timer holds (about 24.8 days); a longer one would fire at once. */
const maxTimeoutSeconds = Math.floor((2 ** 31 - 1) / 1000);

function parseTimeout(text: string | null): number | undefined {
  if (text === null || text === '') return undefined;
  if (!/^\d+$/.test(text)) throw badRequest(`timeoutSeconds: Invalid value: ${JSON.stringify(text)}: must be a non-negative integer`);
  const seconds = Number(text);
  return seconds === 0 ? undefined : Math.min(seconds, maxTimeoutSeconds);
}

function checkStreamingOptions(sendInitial: string | null, match: string | null, bookmarks: boolean): void {
  if (sendInitial !== null) {
    const errors: FieldError[] = [];
    if (match !== 'NotOlderThan') {
      errors.push({ field: 'resourceVersionMatch', type: 'Forbidden', detail: 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan' });
    }
    if (sendInitial === 'true' && !bookmarks) {
      errors.push({ field: 'allowWatchBookmarks', type: 'Forbidden', detail: 'sendInitialEvents requires setting allowWatchBookmarks to true' });
    }
    if (errors.length > 0) throw watchOptionsInvalid(errors);
  } else if (match !== null && match !== '') {
    throw watchOptionsInvalid([
      { field: 'resourceVersionMatch', type: 'Forbidden', detail: 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided' },
    ]);
  }
}

export function handleWatch(r: WatchRequest): void {
  const { cluster } = r.server;
  const faults = r.watchFaults;
  const store = cluster.store;
  const q = r.query;
  let fieldText = q.get('fieldSelector');
  if (r.name !== undefined) {
    const byName = `metadata.name=${escapeFieldValue(r.name)}`;
    fieldText = fieldText === null || fieldText === '' ? byName : `${fieldText},${byName}`;
  }
  const filter = { ...parseFilter(r.type, q.get('labelSelector'), fieldText), shard: parseShardFilter(q.get('shardSelector'), r.server.shardedListAndWatch) };
  const bookmarks = q.get('allowWatchBookmarks') === 'true';
  const sendInitial = q.get('sendInitialEvents');
  checkStreamingOptions(sendInitial, q.get('resourceVersionMatch'), bookmarks);
  const timeoutSeconds = parseTimeout(q.get('timeoutSeconds'));
  const rvText = q.get('resourceVersion') ?? '';
  const current = store.resourceVersion;
  const startsWithState = sendInitial === 'true' || rvText === '' || rvText === '0';
  let from = current;
  let expired: ApiError | undefined;
  if (rvText !== '' && rvText !== '0') {
    from = parseResourceVersion(rvText);
    if (from > current) throw tooLargeResourceVersion(from, current);
    if (!startsWithState) {
      try {
        store.assertResumable(r.type.storageKey, from);
      } catch (error) {
        if (!(error instanceof ApiError) || faults.expiredWatchAsHttp) throw error;
        expired = error;
      }
    }
  }

  if (r.method === 'HEAD') {
    // The head a watch would get, and the end: a stream that never ends would hold the connection for ever.
    r.log.status = 200;
    r.res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    r.res.end();
    return;
  }
  const table = tableOptions(r.headers.accept, q);
  const metadataOnly = table === undefined ? metadataTarget(r.headers.accept) : undefined;
  if (metadataOnly !== undefined) checkTarget(metadataOnly, 'watch');
  const namespace = r.type.namespaced ? r.namespace : undefined;
  let initial: StoredObject[] | undefined;
  if (startsWithState) {
    const snapshot = store.current(r.type.storageKey);
    const prefix = namespace === undefined ? undefined : `${namespace}/`;
    initial = [];
    for (const key of snapshot.keys) {
      if (prefix !== undefined && !key.startsWith(prefix)) continue;
      const stored = snapshot.objects.get(key) as StoredObject;
      if (isSelective(filter) && !matchesFilter(filter, stored.object)) continue;
      initial.push(stored);
    }
  }
  const stream: WatchStream = new WatchStream(r.res, {
    kind: r.type.kind,
    apiVersion: apiVersionOf(r.type),
    bookmarks,
    bookmarkIntervalMs: r.server.bookmarkIntervalMs,
    timeoutSeconds,
    bookmarkResourceVersion: (): number | undefined => watcher.bookmarkResourceVersion,
    onClosed: () => cluster.hub.remove(watcher),
    lineDelay: () => faults.watchDelayFor({ verb: 'watch', group: r.type.group, version: r.type.version, resource: r.type.resource, kind: r.type.kind, ...(namespace !== undefined ? { namespace } : {}) }),
  });
  const watcher: Watcher = new Watcher(store, r.type.storageKey, r.type, namespace, filter, stream, from, {
    initial,
    endBookmark: sendInitial === 'true' ? { 'k8s.io/initial-events-end': 'true' } : undefined,
    encode:
      table !== undefined
        ? (stored: StoredObject) => JSON.stringify(toTable(r.type, [stored], { rv: stored.rv }, table))
        : metadataOnly !== undefined
          ? (stored: StoredObject) => JSON.stringify(partialObjectMetadata(r.type, stored))
          : undefined,
  });
  r.log.status = 200;
  if (expired !== undefined) {
    // The watch cache's answer: a 200 whose only event is the 410, then the end.
    stream.open(false);
    stream.writeRaw(`${JSON.stringify({ type: 'ERROR', object: expired.toStatus() })}\n`);
    stream.end();
    return;
  }
  stream.open(faults.watchesSilenced);
  cluster.hub.add(watcher);
  watcher.catchUp();
}
