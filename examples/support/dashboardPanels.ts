/**
 * The panels of the Grafana dashboards controller-runtime users already
 * run, as test data: for each panel, the samples its queries read, the
 * labels they group or filter by (besides the scrape target's own: `job`,
 * `namespace`, `pod`, `instance`, `container`), and what "has data" takes.
 * Written down from the dashboards' JSON (metric names and labels only);
 * `examples/main.test.ts` checks the main job's `/metrics` against it.
 */

export interface DashboardPanel {
  dashboard: string;
  title: string;
  /**
   * What the panel's queries read. `series`: a sample of that name exists
   * (a rate of a counter at 0 is a flat line, which is data). `observed`:
   * a histogram whose `_count` is above 0 (a quantile or a mean of nothing
   * is NaN). `positive`: a gauge above 0 (a ratio's denominator).
   */
  reads: Array<{ sample: string; labels?: string[]; needs: 'series' | 'observed' | 'positive' }>;
  /** Why rxkube shows nothing there, when it cannot; the panel is then left out of the check. */
  unsupported?: string;
}

export const dashboardOrigins = {
  'Controller-Runtime-Metrics':
    'kubernetes-sigs/kubebuilder pkg/plugins/optional/grafana/v1alpha/scaffolds/internal/templates/runtime.go @186061d93ecff2a1c5aa8b53d3fcaa2ad9500dcd',
  'Controller-Resources-Metrics':
    'kubernetes-sigs/kubebuilder pkg/plugins/optional/grafana/v1alpha/scaffolds/internal/templates/resources.go @186061d93ecff2a1c5aa8b53d3fcaa2ad9500dcd',
  'cluster-api controller-runtime':
    'kubernetes-sigs/cluster-api hack/observability/grafana/dashboards/controller-runtime.json @fd23e95b3426ee6aa4de823596d07d8c8c0f270b (its controller_runtime_*, workqueue_*, rest_client_* and process_* panels)',
} as const;

type Dashboard = keyof typeof dashboardOrigins;

const panel = (dashboard: Dashboard, title: string, reads: DashboardPanel['reads'], unsupported?: string): DashboardPanel =>
  unsupported === undefined ? { dashboard, title, reads } : { dashboard, title, reads, unsupported };

const kb: Dashboard = 'Controller-Runtime-Metrics';
const res: Dashboard = 'Controller-Resources-Metrics';
const capi: Dashboard = 'cluster-api controller-runtime';

const nativeHistogram =
  'the query reads the histogram by its bare name, which only a native histogram answers; prom-client exposes classic histograms ' +
  '(_bucket, _sum, _count) only, as controller-runtime does to a Prometheus that scrapes the text format';

const noWebhooks = 'the main job serves no admission or conversion webhooks (rxkube has no webhook server yet: src/sinks/webhooks is still to come)';

export const dashboardPanels: DashboardPanel[] = [
  // kubebuilder's Controller-Runtime-Metrics: 9 panels.
  panel(kb, 'Number of workers in use', [{ sample: 'controller_runtime_active_workers', labels: ['controller'], needs: 'series' }]),
  panel(kb, 'Total Reconciliation Count Per Controller', [{ sample: 'controller_runtime_reconcile_total', needs: 'series' }]),
  panel(kb, 'Reconciliation Error Count Per Controller', [{ sample: 'controller_runtime_reconcile_errors_total', needs: 'series' }]),
  panel(kb, 'WorkQueue Depth', [{ sample: 'workqueue_depth', needs: 'series' }]),
  panel(kb, 'Seconds For Items Stay In Queue (before being requested) (P50, P90, P99)', [
    { sample: 'workqueue_queue_duration_seconds', labels: ['name'], needs: 'observed' },
  ]),
  panel(kb, 'Work Queue Add Rate', [{ sample: 'workqueue_adds_total', labels: ['name'], needs: 'series' }]),
  panel(kb, 'Unfinished Seconds', [{ sample: 'workqueue_unfinished_work_seconds', needs: 'series' }]),
  panel(kb, 'Seconds Processing Items From WorkQueue (P50, P90, P99)', [
    { sample: 'workqueue_work_duration_seconds', labels: ['name'], needs: 'observed' },
  ]),
  panel(kb, 'Work Queue Retries Rate', [{ sample: 'workqueue_retries_total', labels: ['name'], needs: 'series' }]),

  // kubebuilder's Controller-Resources-Metrics: 2 panels.
  panel(res, 'Controller CPU Usage', [{ sample: 'process_cpu_seconds_total', needs: 'series' }]),
  panel(res, 'Controller Memory Usage', [{ sample: 'process_resident_memory_bytes', needs: 'positive' }]),

  // cluster-api's controller-runtime dashboard: the panels on controller-runtime, workqueue, REST client and process metrics.
  panel(capi, 'Controller Active Workers', [{ sample: 'controller_runtime_active_workers', labels: ['controller'], needs: 'series' }]),
  panel(capi, 'Controller Worker Utilization', [
    { sample: 'controller_runtime_active_workers', labels: ['controller'], needs: 'series' },
    { sample: 'controller_runtime_max_concurrent_reconciles', labels: ['controller'], needs: 'positive' },
  ]),
  panel(capi, 'Reconcile Total', [{ sample: 'controller_runtime_reconcile_total', labels: ['controller'], needs: 'series' }]),
  panel(capi, 'Reconcile Total by Controller', [{ sample: 'controller_runtime_reconcile_total', labels: ['controller'], needs: 'series' }]),
  panel(capi, 'Reconcile Total by Result', [{ sample: 'controller_runtime_reconcile_total', labels: ['controller', 'result'], needs: 'series' }]),
  panel(capi, 'Reconcile Total by Controller, Result', [
    { sample: 'controller_runtime_reconcile_total', labels: ['controller', 'result'], needs: 'series' },
  ]),
  panel(capi, 'Reconcile Errors', [{ sample: 'controller_runtime_reconcile_errors_total', labels: ['controller'], needs: 'series' }]),
  panel(capi, 'Reconcile Errors by Controller', [{ sample: 'controller_runtime_reconcile_errors_total', labels: ['controller'], needs: 'series' }]),
  panel(capi, 'Reconcile Duration', [{ sample: 'controller_runtime_reconcile_time_seconds', needs: 'observed' }]),
  panel(capi, 'Reconcile Duration Quantils', [{ sample: 'controller_runtime_reconcile_time_seconds', needs: 'observed' }]),
  panel(capi, 'Reconcile Duration by Controller', [{ sample: 'controller_runtime_reconcile_time_seconds', labels: ['controller'], needs: 'observed' }]),
  panel(capi, 'Reconcile Duration Quantils by Controller', [
    { sample: 'controller_runtime_reconcile_time_seconds', labels: ['controller'], needs: 'observed' },
  ]),
  panel(capi, 'Reconcile Duration (histogram)', [{ sample: 'controller_runtime_reconcile_time_seconds', needs: 'observed' }], nativeHistogram),
  panel(capi, 'Reconcile Duration (heatmap)', [{ sample: 'controller_runtime_reconcile_time_seconds', needs: 'observed' }], nativeHistogram),
  panel(capi, 'Workqueue Depth (priority != 100)', [{ sample: 'workqueue_depth', labels: ['name', 'priority'], needs: 'series' }]),
  panel(
    capi,
    'Workqueue Depth (priority == -100)',
    [{ sample: 'workqueue_depth', labels: ['name', 'priority'], needs: 'series' }],
    "the series with priority=\"-100\" is the low-priority lane of controller-runtime's priority queue (keys of the initial list); " +
      "rxkube's queue has one lane, reported as priority=\"\", which the panel beside this one shows",
  ),
  panel(capi, 'Workqueue Adds', [{ sample: 'workqueue_adds_total', labels: ['name'], needs: 'series' }]),
  panel(capi, 'Workqueue Retries', [{ sample: 'workqueue_retries_total', labels: ['name'], needs: 'series' }]),
  panel(capi, 'Workqueue Longest Running Processor', [{ sample: 'workqueue_longest_running_processor_seconds', labels: ['name'], needs: 'series' }]),
  panel(capi, 'Workqueue Unfinished Work', [{ sample: 'workqueue_unfinished_work_seconds', labels: ['name'], needs: 'series' }]),
  panel(capi, 'Workqueue Work Duration Quantils', [{ sample: 'workqueue_work_duration_seconds', labels: ['name'], needs: 'observed' }]),
  panel(capi, 'Workqueue Queue Duration Quantils', [{ sample: 'workqueue_queue_duration_seconds', labels: ['name'], needs: 'observed' }]),
  panel(capi, 'Workqueue Work Duration (histogram)', [{ sample: 'workqueue_work_duration_seconds', labels: ['name'], needs: 'observed' }], nativeHistogram),
  panel(capi, 'Workqueue Work Duration (heatmap)', [{ sample: 'workqueue_work_duration_seconds', labels: ['name'], needs: 'observed' }], nativeHistogram),
  panel(capi, 'Workqueue Queue Duration (histogram)', [{ sample: 'workqueue_queue_duration_seconds', labels: ['name'], needs: 'observed' }], nativeHistogram),
  panel(capi, 'Workqueue Queue Duration (heatmap)', [{ sample: 'workqueue_queue_duration_seconds', labels: ['name'], needs: 'observed' }], nativeHistogram),
  ...['Webhook Total by Code != 200', 'Webhook Total by Path', 'Webhook Total by Code'].map((title) =>
    panel(capi, title, [{ sample: 'controller_runtime_webhook_requests_total', labels: ['code', 'webhook'], needs: 'series' }], noWebhooks),
  ),
  panel(capi, 'Webhook Total by Path (its second panel of that title: latency)', [{ sample: 'controller_runtime_webhook_latency_seconds', labels: ['webhook'], needs: 'observed' }], noWebhooks),
  panel(capi, 'Webhook Latency (histogram)', [{ sample: 'controller_runtime_webhook_latency_seconds', needs: 'observed' }], noWebhooks),
  panel(capi, 'Webhook Latency (heatmap)', [{ sample: 'controller_runtime_webhook_latency_seconds', needs: 'observed' }], noWebhooks),
  panel(capi, 'Client Requests by Method, Code', [{ sample: 'rest_client_requests_total', labels: ['code', 'method'], needs: 'series' }]),
  panel(capi, 'Process Open File Descriptors', [{ sample: 'process_open_fds', needs: 'positive' }]),
  panel(capi, 'Process Open File Descriptors Derivative', [{ sample: 'process_open_fds', needs: 'positive' }]),
];
