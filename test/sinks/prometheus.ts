import type { Registry } from 'prom-client';

/** The `# TYPE` of each metric family in a Prometheus text exposition. */
export function metricTypes(text: string): Record<string, string> {
  const types: Record<string, string> = {};
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types[match[1] as string] = match[2] as string;
  return types;
}

/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition, as a scrape reads them. */
export function samples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const [, k, v] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k as string] = v as string;
    out.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return out;
}

/**
 * The value of one sample of a registry, found by its full name (a
 * histogram's `_bucket`, `_sum`, `_count` included) and exact labels;
 * undefined when there is no such sample.
 */
export async function sampleValue(registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const families = await registry.getMetricsAsJSON();
  const wanted = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b));
  for (const family of families) {
    for (const sample of family.values as Array<{ metricName?: string; labels: Record<string, string | number>; value: number }>) {
      if ((sample.metricName ?? family.name) !== name) continue;
      const have = Object.entries(sample.labels)
        .map(([k, v]) => [k, String(v)] as const)
        .sort(([a], [b]) => a.localeCompare(b));
      if (have.length === wanted.length && have.every(([k, v], i) => k === wanted[i]?.[0] && v === wanted[i]?.[1])) {
        return sample.value;
      }
    }
  }
  return undefined;
}

/** Invariant 18's names, with the type controller-runtime gives each. */
export const controllerMetricTypes: Record<string, string> = {
  controller_runtime_reconcile_total: 'counter',
  controller_runtime_reconcile_errors_total: 'counter',
  controller_runtime_terminal_reconcile_errors_total: 'counter',
  controller_runtime_reconcile_panics_total: 'counter',
  controller_runtime_reconcile_timeouts_total: 'counter',
  controller_runtime_reconcile_time_seconds: 'histogram',
  controller_runtime_max_concurrent_reconciles: 'gauge',
  controller_runtime_active_workers: 'gauge',
  workqueue_depth: 'gauge',
  workqueue_adds_total: 'counter',
  workqueue_queue_duration_seconds: 'histogram',
  workqueue_work_duration_seconds: 'histogram',
  workqueue_retries_total: 'counter',
  workqueue_unfinished_work_seconds: 'gauge',
  workqueue_longest_running_processor_seconds: 'gauge',
};
