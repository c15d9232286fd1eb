import type { Registry } from 'prom-client';
import { counterOn, gaugeOn, scrapedGaugeOn } from './metricRegistry.js';

/** What `clusterMetrics` reads of one cluster at scrape time: its stores' sizes, by resource name. */
export type ClusterStoreSizes = () => Iterable<{ cluster: string; resource: string; size: number }>;

/** The per-cluster metrics of a controller with `clusters`. */
export interface ClusterMetrics {
  /** The clusters joined now. */
  joined(n: number): void;
  /** One run of a key of `cluster` ended so (`controller_runtime_reconcile_total`'s result values; `dropped` counts as `error`). */
  outcome(cluster: string, result: 'success' | 'error' | 'requeue' | 'requeue_after' | 'dropped'): void;
  /** `cluster` has left: its series go. */
  left(cluster: string): void;
}

const results = ['success', 'error', 'requeue', 'requeue_after'] as const;

/**
 * The metrics of a multi-cluster controller that say which cluster, beside
 * controller-runtime's families, which keep their labels and count every
 * cluster together (so that existing dashboards and alerts read the same):
 *
 * | metric | type | labels |
 * | --- | --- | --- |
 * | `rxkube_clusters` | gauge | `controller` |
 * | `rxkube_cluster_reconcile_total` | counter | `controller`, `cluster`, `result` |
 * | `rxkube_cluster_store_objects` | gauge (read at scrape time) | `controller`, `cluster`, `resource` |
 *
 * A cluster's series are removed when it leaves, so that clusters coming
 * and going do not grow the registry.
 */
export function clusterMetrics(registry: Registry, controller: string, sizes: ClusterStoreSizes): ClusterMetrics {
  const clusters = gaugeOn(registry, 'rxkube_clusters', 'Clusters a multi-cluster controller reconciles now', ['controller']);
  const total = counterOn(registry, 'rxkube_cluster_reconcile_total', 'Reconciliations per controller and cluster', ['controller', 'cluster', 'result']);
  const objects = scrapedGaugeOn(registry, 'rxkube_cluster_store_objects', 'Objects cached per controller, cluster and resource', ['controller', 'cluster', 'resource']);
  objects.updaters.add(() => {
    // Whatever is not set again belongs to a cluster that has left.
    for (const { cluster, resource } of seen.values()) objects.remove({ controller, cluster, resource });
    seen.clear();
    for (const { cluster, resource, size } of sizes()) {
      objects.set({ controller, cluster, resource }, size);
      seen.set(`${cluster}\n${resource}`, { cluster, resource });
    }
  });
  const seen = new Map<string, { cluster: string; resource: string }>();
  const counted = new Set<string>();
  clusters.set({ controller }, 0);
  return {
    joined: (n) => clusters.set({ controller }, n),
    outcome: (cluster, result) => {
      if (!counted.has(cluster)) {
        counted.add(cluster);
        for (const r of results) total.inc({ controller, cluster, result: r }, 0);
      }
      total.inc({ controller, cluster, result: result === 'dropped' ? 'error' : result });
    },
    left: (cluster) => {
      counted.delete(cluster);
      for (const r of results) total.remove({ controller, cluster, result: r });
    },
  };
}
