import { collectDefaultMetrics, Registry, type Metric } from 'prom-client';

/** One of the metrics `collectDefaultMetrics` registers, by which a registry that has them is known. */
const marker = 'process_cpu_seconds_total';

/**
 * The collectors of the one process this code runs in, made on first use.
 * `collectDefaultMetrics` starts an event-loop-delay monitor (a 10 ms
 * native timer) and a GC observer for every registry it is given, and
 * prom-client offers no way to stop them: measured here, 500 registries
 * with their own cost about 5 % of a core while idle. What they measure is
 * the process, the same for every registry, so one set serves all: each
 * registry that asks gets these same metric objects registered. The only
 * state kept across callers, and it describes the process, not a caller.
 */
let processCollectors: Metric[] | undefined;

function collectors(): Metric[] {
  if (processCollectors === undefined) {
    const holder = new Registry();
    collectDefaultMetrics({ register: holder });
    // The registry's own metric objects, whatever its typings call them.
    processCollectors = holder.getMetricsAsArray() as unknown as Metric[];
  }
  return processCollectors;
}

/**
 * Puts prom-client's default metrics (`process_cpu_seconds_total`,
 * `process_resident_memory_bytes`, `process_open_fds`, … and `nodejs_*`:
 * event loop lag, heap, GC) on `registry`, as controller-runtime registers
 * the process and Go collectors by default. Once per registry: a registry
 * that has them already is left alone, so controllers sharing one can
 * each ask. They are read when the registry is collected (a scrape);
 * nothing of them keeps the process alive. Returns the registry.
 *
 * A registry that holds some of those names from another source, but not
 * `process_cpu_seconds_total`, cannot take them: the error says which, and
 * the registry is left as it was.
 */
export function withProcessMetrics(registry: Registry): Registry {
  if (registry.getSingleMetric(marker) !== undefined) return registry;
  const all = collectors();
  const taken = all.map((m) => (m as unknown as { name: string }).name).filter((name) => registry.getSingleMetric(name) !== undefined);
  if (taken.length > 0) {
    throw new Error(`cannot add prom-client's default process and nodejs metrics to this registry: it already has ${taken.join(', ')}`);
  }
  for (const metric of all) registry.registerMetric(metric);
  return registry;
}
