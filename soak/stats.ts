/** Summary of a set of durations (ms). */
export interface Distribution {
  count: number;
  median: number;
  p95: number;
  p99: number;
  worst: number;
}

/** Median, tail percentiles and worst of `values` (nearest-rank); zeros for none. */
export function distribution(values: readonly number[]): Distribution {
  if (values.length === 0) return { count: 0, median: 0, p95: 0, p99: 0, worst: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (q: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
  return { count: sorted.length, median: rank(0.5), p95: rank(0.95), p99: rank(0.99), worst: sorted[sorted.length - 1] as number };
}

/** Adds one to `counts[key]`. */
export function bump(counts: Record<string, number>, key: string, by = 1): void {
  counts[key] = (counts[key] ?? 0) + by;
}
