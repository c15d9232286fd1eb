import { collectDefaultMetrics, type Registry } from 'prom-client';

/** One of the metrics `collectDefaultMetrics` registers, by which a registry that has them is known. */
const marker = 'process_cpu_seconds_total';

/**
 * Puts prom-client's default metrics (`process_cpu_seconds_total`,
 * `process_resident_memory_bytes`, `process_open_fds`, … and `nodejs_*`:
 * event loop lag, heap, GC) on `registry`, as controller-runtime registers
 * the process and Go collectors by default. Once per registry: a registry
 * that has them already is left alone, so controllers sharing one can
 * each ask. They are read when the registry is collected (a scrape);
 * nothing of them keeps the process alive. Returns the registry.
 *
 * Each registry that gets them also gets prom-client's event-loop-delay
 * monitor (a 10 ms native timer, unref'd) and a GC observer, which
 * prom-client offers no way to stop: measured here, 500 such registries
 * cost about 5 % of a core while idle. A process that makes many
 * controllers should give them one registry.
 *
 * A registry that holds some of those names from another source, but not
 * `process_cpu_seconds_total`, cannot take them: the error says which.
 */
export function withProcessMetrics(registry: Registry): Registry {
  if (registry.getSingleMetric(marker) !== undefined) return registry;
  try {
    collectDefaultMetrics({ register: registry });
  } catch (err) {
    throw new Error(
      `cannot add prom-client's default process and nodejs metrics to this registry: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  return registry;
}
