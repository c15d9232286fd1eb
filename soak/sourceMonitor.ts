import type { ListWatchMonitor } from '../src/sources/listWatch.js';
import { bump } from './stats.js';

export interface SourceStats {
  listRequests: number;
  watchRequests: number;
  /** Lists after the first, by reason (`expired`, `continue-expired`, `retry`). */
  relists: Record<string, number>;
  watchRestarts: Record<string, number>;
  /** Backoff waits after a failed list or watch, by verb. */
  retries: Record<string, number>;
  malformedLines: number;
  events: number;
}

/** A `ListWatchMonitor` that counts what the sources of an informer factory do. */
export function countingMonitor(): ListWatchMonitor & { readonly stats: SourceStats } {
  const stats: SourceStats = { listRequests: 0, watchRequests: 0, relists: {}, watchRestarts: {}, retries: {}, malformedLines: 0, events: 0 };
  return {
    stats,
    request: (verb) => {
      if (verb === 'list') stats.listRequests++;
      else stats.watchRequests++;
    },
    relist: (_resource, reason) => {
      if (reason !== 'initial') bump(stats.relists, reason);
    },
    watchRestart: (_resource, reason) => bump(stats.watchRestarts, reason),
    retry: (info) => bump(stats.retries, info.verb),
    malformedLine: () => void stats.malformedLines++,
    event: () => void stats.events++,
  };
}
