import type { Registry } from 'prom-client';
import { counterOn } from './metricRegistry.js';

/** How the waits of read-your-own-writes ended, counted. */
export interface OwnWritesMetrics {
  /** A key that waited for its own writes goes on: they were `seen` in the cache, or the wait hit its `timeout`. */
  waited(result: 'seen' | 'timeout'): void;
}

/**
 * `rxkube_own_write_waits_total{controller,result}` on `registry`: keys
 * held back until the cache showed their run's own writes (`seen`), or
 * released without that when the timeout passed (`timeout`: they ran on a
 * cache that may be stale; each is also a warning in the log). Alert on a
 * rising `timeout` rate: a watch that lags behind the writes.
 */
export function ownWritesMetrics(registry: Registry, controller: string): OwnWritesMetrics {
  const waits = counterOn(registry, 'rxkube_own_write_waits_total', 'Keys held back until the cache showed their own writes, by how the wait ended (seen, timeout).', ['controller', 'result']);
  // Both series from the start, so that a rate over them is defined before the first wait.
  waits.inc({ controller, result: 'seen' }, 0);
  waits.inc({ controller, result: 'timeout' }, 0);
  return { waited: (result) => waits.inc({ controller, result }) };
}
