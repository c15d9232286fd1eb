import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * Metric families shared on one prom-client `Registry`. A registry refuses a
 * second metric of the same name, yet two controllers in one process report
 * the same families (`workqueue_depth{name="a"}`, `workqueue_depth{name="b"}`).
 * So each family is made once per registry and found again by name; a name
 * taken by a metric of another type or other labels is an error that says so,
 * rather than series silently going to the wrong family.
 */

type MetricClass = typeof Counter | typeof Gauge | typeof Histogram;

function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((label, i) => label === b[i]);
}

function existing<M>(registry: Registry, name: string, type: MetricClass, labelNames: readonly string[]): M | undefined {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return undefined;
  const labels = (metric as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
  if (!(metric instanceof type) || !sameLabels(labels, labelNames)) {
    throw new Error(
      `metric "${name}" is already registered on this registry as a ${metric.constructor.name} with labels ` +
        `[${labels.join(', ')}]; rxkube needs a ${type.name} with labels [${labelNames.join(', ')}]`,
    );
  }
  return metric as M;
}

export function counterOn<T extends string>(registry: Registry, name: string, help: string, labelNames: readonly T[]): Counter<T> {
  return (
    existing<Counter<T>>(registry, name, Counter, labelNames) ??
    new Counter<T>({ name, help, labelNames, registers: [registry] })
  );
}

export function gaugeOn<T extends string>(registry: Registry, name: string, help: string, labelNames: readonly T[]): Gauge<T> {
  return (
    existing<Gauge<T>>(registry, name, Gauge, labelNames) ?? new Gauge<T>({ name, help, labelNames, registers: [registry] })
  );
}

export function histogramOn<T extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly T[],
  buckets: readonly number[],
): Histogram<T> {
  return (
    existing<Histogram<T>>(registry, name, Histogram, labelNames) ??
    new Histogram<T>({ name, help, labelNames, buckets: [...buckets], registers: [registry] })
  );
}

/**
 * A gauge whose values are computed when the registry is scraped, by every
 * updater that shares it (one per controller on the registry).
 */
export class ScrapedGauge<T extends string> extends Gauge<T> {
  readonly updaters = new Set<() => void>();
}

export function scrapedGaugeOn<T extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly T[],
): ScrapedGauge<T> {
  const found = existing<Gauge<T>>(registry, name, Gauge, labelNames);
  if (found !== undefined) {
    if (!(found instanceof ScrapedGauge)) {
      throw new Error(`metric "${name}" is already registered on this registry by someone else; rxkube computes it at scrape time`);
    }
    return found as ScrapedGauge<T>;
  }
  return new ScrapedGauge<T>({
    name,
    help,
    labelNames,
    registers: [registry],
    collect(this: Gauge<T>) {
      for (const update of (this as ScrapedGauge<T>).updaters) update();
    },
  });
}
