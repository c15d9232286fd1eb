import { defer, distinctUntilChanged, EMPTY, isObservable, map, NEVER, Observable, of, startWith, switchMap } from 'rxjs';
import type { Logger } from '../logger.js';
import type { KubeObject, ListWatchEvent } from '../types.js';
import type { ListWatchMonitor } from './listWatch.js';
import { resolveShard, SourceShard, type ResolvedShard, type ShardSelection } from './sourceShard.js';

/** What `shardedListWatch` needs of its source. */
export interface ShardedSourceSettings<T extends KubeObject> {
  /** The resource's name, for logs and messages. */
  resource: string;
  logger: Logger;
  monitor: ListWatchMonitor;
  /** Aborting it completes the source, even while it waits for the next selection. */
  signal: AbortSignal | undefined;
  /** One list-watch of one shard (the Reflector over HTTP in `listWatch`). */
  source: (shard: SourceShard) => Observable<ListWatchEvent<T>>;
}

/**
 * `listWatch` with a `shardSelector`: one list-watch per selection, a new one (which lists
 * again) each time the selection changes, the old one unsubscribed first so its requests are
 * aborted before the new list is sent.
 *
 * ```
 * selection: ─a─────────a────b──────────
 * output:    ─R─L─L─S─M─────R─L─S─A─────   (R Restart, L Listed, S Synced; b lists again, a again does not)
 * ```
 *
 * A selection that owns nothing sends no request: `Restart` and `Synced` (no resourceVersion),
 * which empties the store downstream, then nothing until the next selection. The mode (server or
 * client side filtering) is reported across selections once per change, not once per re-list.
 */
export function shardedListWatch<T extends KubeObject>(
  selection: ShardSelection | Observable<ShardSelection>,
  settings: ShardedSourceSettings<T>,
): Observable<ListWatchEvent<T>> {
  return defer(() => {
    const { signal } = settings;
    if (signal?.aborted) return EMPTY;
    const reported: { where?: 'server' | 'client' } = {};
    const forShard = (shard: ResolvedShard): Observable<ListWatchEvent<T>> => {
      if (shard.selector.terms.length === 0) return NEVER.pipe(startWith<ListWatchEvent<T>>({ type: 'Restart' }, { type: 'Synced', resourceVersion: '' }));
      return settings.source(new SourceShard(shard, settings.resource, settings.logger, settings.monitor, reported));
    };
    const selections = isObservable(selection) ? selection : of(selection);
    const events = selections.pipe(
      map((s) => resolveShard(s, settings.resource)),
      // By the selection itself: two selections of one cover differ in what is kept.
      distinctUntilChanged((a, b) => a.key === b.key),
      switchMap(forShard),
    );
    return signal === undefined ? events : untilAborted(events, signal);
  });
}

/** `source` until `signal` aborts, then complete (a selection Observable that never ends would hold it open). */
function untilAborted<E>(source: Observable<E>, signal: AbortSignal): Observable<E> {
  return new Observable<E>((subscriber) => {
    const onAbort = () => subscriber.complete();
    signal.addEventListener('abort', onAbort, { once: true });
    const inner = source.subscribe(subscriber);
    return () => {
      signal.removeEventListener('abort', onAbort);
      inner.unsubscribe();
    };
  });
}
