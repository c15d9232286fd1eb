import type { KubeObject } from '../types.js';
import { compactRecordOf } from '../compact/compactObject.js';
import type { ListBodyHandler, ListHead, OversizedItem } from './listBodyParser.js';
import type { ListWatchError } from './listWatchError.js';
import { shapeObject, type WatchEventSink } from './watchEvents.js';

/**
 * Where a list page's items go as the parser cuts them out: each becomes a
 * `Listed` event, with the `apiVersion` and `kind` that the server leaves
 * off list items, transformed. What is not an object is logged and skipped
 * (nothing downstream could key it; the rest of the page is still good); an
 * item too large to keep is reported and skipped. Reading stops once the
 * source is stopped or a transform throws (`fatal`).
 */
export class ListItems<T extends KubeObject> implements ListBodyHandler {
  /** The transform threw: the source ends with this. */
  fatal: ListWatchError | undefined;

  constructor(
    private readonly sink: WatchEventSink<T>,
    private readonly signal: AbortSignal,
  ) {}

  item(entry: unknown, head: ListHead): boolean {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      // What it is and how long, never what it holds: the list may be of Secrets.
      const item = entry === null ? 'null' : Array.isArray(entry) ? `an array of ${entry.length}` : `a ${typeof entry} of ${String(JSON.stringify(entry)?.length)} characters`;
      this.sink.logger.error({ resource: this.sink.resource, item }, 'list item is not an object; skipping it');
      return false;
    }
    const item = entry as T;
    // A compact view is read-only: what it lacks is set on the record behind it.
    const target: { apiVersion?: unknown; kind?: unknown } = compactRecordOf(item) ?? item;
    // Read defensively: a page with a mistyped kind or apiVersion still lists its items.
    if (target.apiVersion === undefined && typeof head.apiVersion === 'string') target.apiVersion = head.apiVersion;
    if (target.kind === undefined && typeof head.kind === 'string' && head.kind.endsWith('List')) target.kind = head.kind.slice(0, -4);
    if (this.sink.shard !== undefined && !this.sink.shard.keepsListed(item, head.metadata)) return this.signal.aborted;
    const shaped = shapeObject(this.sink, item, 'list');
    if ('error' in shaped) {
      this.fatal = shaped.error;
      return true;
    }
    this.sink.emit({ type: 'Listed', object: shaped.object });
    return this.signal.aborted;
  }

  oversized(item: OversizedItem): void {
    this.sink.logger.error(
      { resource: this.sink.resource, bytes: item.bytes, head: item.head },
      'list item larger than the largest object kept (maxObjectBytes); skipping it, the list goes on',
    );
    this.sink.monitor.skipped?.(this.sink.resource, { verb: 'list', bytes: item.bytes });
  }
}
