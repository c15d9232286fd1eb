import { Registry } from 'prom-client';
import { counterOn, gaugeOn } from './metricRegistry.js';

/**
 * Why a watch was reopened, as `rxkube_source_watch_restarts_total{reason}`
 * counts it. `closed`: the server ended it cleanly (its timeout), resumed
 * from the last resourceVersion; `expired`: a 410, answered by a re-list;
 * `error`: a failure, retried after backoff; `idle`: silent past its idle
 * limit and presumed dead. Other strings are accepted for reasons a source
 * adds later.
 */
export type WatchRestartReason = 'closed' | 'expired' | 'error' | 'idle' | (string & {});

/**
 * What a list-watch source reports, for metrics. Each method is called
 * synchronously at the moment described, with `resource` naming the
 * resource being watched (e.g. `configmaps`, `deployments.apps`), so one
 * implementation serves every source of a process. Implementations must not
 * throw (the prom-client one does not).
 */
export interface SourceMetrics {
  /** A list request (one page) is sent. */
  listRequest(resource: string): void;
  /** A watch request is sent. */
  watchRequest(resource: string): void;
  /** A full re-list begins after the first (the `Restart` of a list that is not the first). */
  relist(resource: string): void;
  /** A watch ended and is being reopened, and why. */
  watchRestart(resource: string, reason: WatchRestartReason): void;
  /** A watch event arrived (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`). */
  eventReceived(resource: string, type: string): void;
  /** A watch line could not be parsed as an event and was skipped. */
  malformedLine(resource: string): void;
  /** The store of that resource now holds `n` objects. */
  storeSize(resource: string, n: number): void;
}

/** Reports nothing: the default for a source given no metrics. */
export const noopSourceMetrics: SourceMetrics = Object.freeze({
  listRequest: () => {},
  watchRequest: () => {},
  relist: () => {},
  watchRestart: () => {},
  eventReceived: () => {},
  malformedLine: () => {},
  storeSize: () => {},
});

/**
 * `SourceMetrics` on prom-client, under rxkube's own names (controller-runtime
 * has none for this, client-go's reflector metrics were removed):
 *
 * | metric | type | labels |
 * | --- | --- | --- |
 * | `rxkube_source_list_requests_total` | counter | `resource` |
 * | `rxkube_source_watch_requests_total` | counter | `resource` |
 * | `rxkube_source_relists_total` | counter | `resource` |
 * | `rxkube_source_watch_restarts_total` | counter | `resource`, `reason` |
 * | `rxkube_source_events_total` | counter | `resource`, `type` |
 * | `rxkube_source_malformed_lines_total` | counter | `resource` |
 * | `rxkube_store_objects` | gauge | `resource` |
 */
export function sourceMetrics(registry: Registry = new Registry()): SourceMetrics & { readonly registry: Registry } {
  const lists = counterOn(registry, 'rxkube_source_list_requests_total', 'List requests (pages) sent by list-watch sources', ['resource']);
  const watches = counterOn(registry, 'rxkube_source_watch_requests_total', 'Watch requests sent by list-watch sources', ['resource']);
  const relists = counterOn(registry, 'rxkube_source_relists_total', 'Full re-lists after the first list', ['resource']);
  const restarts = counterOn(registry, 'rxkube_source_watch_restarts_total', 'Watches reopened, by reason', ['resource', 'reason']);
  const events = counterOn(registry, 'rxkube_source_events_total', 'Watch events received, by type', ['resource', 'type']);
  const malformed = counterOn(registry, 'rxkube_source_malformed_lines_total', 'Watch lines that were not events and were skipped', [
    'resource',
  ]);
  const size = gaugeOn(registry, 'rxkube_store_objects', 'Objects held by the store of a resource', ['resource']);
  return {
    registry,
    listRequest: (resource) => lists.inc({ resource }),
    watchRequest: (resource) => watches.inc({ resource }),
    relist: (resource) => relists.inc({ resource }),
    watchRestart: (resource, reason) => restarts.inc({ resource, reason }),
    eventReceived: (resource, type) => events.inc({ resource, type }),
    malformedLine: (resource) => malformed.inc({ resource }),
    storeSize: (resource, n) => size.set({ resource }, n),
  };
}
