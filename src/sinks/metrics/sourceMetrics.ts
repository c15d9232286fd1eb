import { Registry } from 'prom-client';
import { counterOn, gaugeOn } from './metricRegistry.js';

/**
 * What list-watch sources and their stores report, for metrics: the hooks
 * of `listWatch`'s `monitor` option, every one present (it is one, by
 * shape: metrics import no source), plus the size of the store a source
 * feeds. `resource` names the resource watched (`configmaps`,
 * `deployments.apps`), so one object serves every source of a process.
 */
export interface SourceMetrics {
  /** An HTTP request of the source is about to be sent. */
  request(verb: 'list' | 'watch', resource: string): void;
  /** A list begins (`initial`, or a re-list and why). */
  relist(resource: string, reason: string): void;
  /** A watch ended and will be reopened, and why. */
  watchRestart(resource: string, reason: string): void;
  /** One watch event arrived, of this type. */
  event(resource: string, type: string): void;
  /** A watch line could not be read. */
  malformedLine(resource: string, error: Error): void;
  /** After a failure, the source waits before trying `verb` again. */
  retry(info: { resource: string; verb: 'list' | 'watch'; delayMs: number; reason: string; code?: number }): void;
  /** The source began failing, or recovered. */
  status(resource: string, status: { healthy: boolean }): void;
  /** An object over the largest size kept was skipped. */
  skipped(resource: string, info: { verb: 'list' | 'watch'; bytes: number }): void;
  /** The store of that resource now holds `n` objects. */
  storeSize(resource: string, n: number): void;
  /** A sharded source's share is cut by the server, or (`client`) on this side. */
  shardFilter(resource: string, where: 'server' | 'client'): void;
}

/**
 * `SourceMetrics` on prom-client, under rxkube's own names (controller-runtime
 * has none for this; client-go's reflector metrics were removed):
 *
 * | metric | type | labels | hook |
 * | --- | --- | --- | --- |
 * | `rxkube_source_list_requests_total` | counter | `resource` | `request('list')`, one per page |
 * | `rxkube_source_watch_requests_total` | counter | `resource` | `request('watch')` |
 * | `rxkube_source_relists_total` | counter | `resource`, `reason` | `relist`, except the `initial` list |
 * | `rxkube_source_watch_restarts_total` | counter | `resource`, `reason` | `watchRestart` |
 * | `rxkube_source_events_total` | counter | `resource`, `type` | `event` |
 * | `rxkube_source_malformed_lines_total` | counter | `resource` | `malformedLine` |
 * | `rxkube_source_retries_total` | counter | `resource`, `verb` | `retry` (a backoff wait after a failure) |
 * | `rxkube_source_auth_retries_total` | counter | `resource`, `verb`, `code` | `retry` after a 401 or 403 (RBAC not granted yet, a token being rotated) |
 * | `rxkube_source_skipped_objects_total` | counter | `resource`, `verb` | `skipped` (an object over `maxObjectBytes`) |
 * | `rxkube_source_failing` | gauge | `resource` | `status`: 1 while the source retries a failure or waits for its resource type to be served, 0 once answered |
 * | `rxkube_store_objects` | gauge | `resource` | `storeSize` |
 * | `rxkube_source_shard_filter_client_side` | gauge | `resource` | `shardFilter`: 1 while a sharded source filters on its side (the server ignored `shardSelector`), 0 when the server filters |
 *
 * The registry is the caller's (default: a new one, never the global);
 * sources sharing one registry share the families. None of the methods throws.
 */
export function sourceMetrics(registry: Registry = new Registry()): SourceMetrics & { readonly registry: Registry } {
  const lists = counterOn(registry, 'rxkube_source_list_requests_total', 'List requests (pages) sent by list-watch sources', ['resource']);
  const watches = counterOn(registry, 'rxkube_source_watch_requests_total', 'Watch requests sent by list-watch sources', ['resource']);
  const relists = counterOn(registry, 'rxkube_source_relists_total', 'Lists after the first one, by reason', ['resource', 'reason']);
  const restarts = counterOn(registry, 'rxkube_source_watch_restarts_total', 'Watches reopened, by reason', ['resource', 'reason']);
  const events = counterOn(registry, 'rxkube_source_events_total', 'Watch events received, by type', ['resource', 'type']);
  const malformed = counterOn(registry, 'rxkube_source_malformed_lines_total', 'Watch lines that could not be read', ['resource']);
  const retries = counterOn(registry, 'rxkube_source_retries_total', 'Backoff waits after a failed list or watch', ['resource', 'verb']);
  const authRetries = counterOn(registry, 'rxkube_source_auth_retries_total', 'Backoff waits after a list or watch answered 401 or 403', ['resource', 'verb', 'code']);
  const skipped = counterOn(registry, 'rxkube_source_skipped_objects_total', 'Objects skipped for being larger than the largest kept', ['resource', 'verb']);
  const failing = gaugeOn(registry, 'rxkube_source_failing', 'Whether a list-watch source is retrying a failure (1) or getting answers (0)', ['resource']);
  const size = gaugeOn(registry, 'rxkube_store_objects', 'Objects held by the store of a resource', ['resource']);
  const clientSide = gaugeOn(
    registry,
    'rxkube_source_shard_filter_client_side',
    'Whether a sharded list-watch source filters its share on the client side (1: the server ignored shardSelector) or the server does (0)',
    ['resource'],
  );
  return {
    registry,
    request: (verb, resource) => (verb === 'list' ? lists : watches).inc({ resource }),
    relist: (resource, reason) => {
      if (reason !== 'initial') relists.inc({ resource, reason });
    },
    watchRestart: (resource, reason) => restarts.inc({ resource, reason }),
    event: (resource, type) => events.inc({ resource, type }),
    malformedLine: (resource) => malformed.inc({ resource }),
    retry: (info) => {
      retries.inc({ resource: info.resource, verb: info.verb });
      if (info.code === 401 || info.code === 403) authRetries.inc({ resource: info.resource, verb: info.verb, code: String(info.code) });
    },
    status: (resource, status) => failing.set({ resource }, status.healthy ? 0 : 1),
    skipped: (resource, info) => skipped.inc({ resource, verb: info.verb }),
    storeSize: (resource, n) => size.set({ resource }, n),
    shardFilter: (resource, where) => clientSide.set({ resource }, where === 'client' ? 1 : 0),
  };
}
