import type { Logger } from '../logger.js';
import { isTooLargeResourceVersion, type FailedResponse } from './http.js';
import type { KubeObject, ListWatchEvent } from '../types.js';
import type { MetadataInterner } from '../compact/metadataInterner.js';
import type { ListWatchMonitor } from './listWatch.js';
import type { ListWatchError } from './listWatchError.js';
import { transformError } from './listWatchFaults.js';
import type { WatchEnd, WatchLineHandler } from './listWatchTransport.js';
import type { MalformedWatchLineError, WatchLine } from './watchLineReader.js';
import type { SourceShard } from './sourceShard.js';
import { sealCompact } from '../compact/compactCodec.js';

/** What reading watch events needs from its source. */
export interface WatchEventSink<T extends KubeObject> {
  resource: string;
  logger: Logger;
  monitor: ListWatchMonitor;
  transform: ((object: T) => T) | undefined;
  /** Keep only `metadata` of each object, as a `PartialObjectMetadata`. */
  metadataOnly: boolean;
  /** Shares repeated metadata values between the objects handed on (metadata-only sources). */
  interner?: MetadataInterner | undefined;
  emit(event: ListWatchEvent<T>): void;
  /** A watch request was answered 200: the source is healthy again. */
  opened(): void;
  /** The share of the resource read (`shardSelector`), and whether objects must be tested here. */
  shard?: SourceShard | undefined;
}

/**
 * An object as the source hands it on: reduced to its metadata for a
 * metadata-only source (a server that ignored the `PartialObjectMetadata`
 * negotiation sent it whole), then through the user's transform, then
 * through the source's interner, if it has one. A transform that throws is
 * a fault no retry fixes.
 */
export function shapeObject<T extends KubeObject>(
  sink: Pick<WatchEventSink<T>, 'metadataOnly' | 'transform' | 'resource' | 'interner'>,
  object: T,
  verb: 'list' | 'watch',
): { object: T } | { error: ListWatchError } {
  let out = object;
  if (sink.metadataOnly && out.kind !== 'PartialObjectMetadata') out = asPartialObjectMetadata(out);
  const { transform, interner } = sink;
  if (transform !== undefined) {
    try {
      // A compact object's metadata is frozen once its transform is done with it.
      out = sealCompact(transform(out), out);
    } catch (err) {
      return { error: transformError(out, err, sink.resource, verb) };
    }
  }
  return { object: interner === undefined ? out : interner.intern(out) };
}

/** What kube's `PartialObjectMetadata` negotiation answers for `object`. */
function asPartialObjectMetadata<T extends KubeObject>(object: T): T {
  return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: object.metadata ?? {} } as T;
}

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

const WATCH_TYPES = { ADDED: 'Added', MODIFIED: 'Modified', DELETED: 'Deleted' } as const;

/**
 * Turns the lines of one watch response into `ListWatchEvent`s, and keeps
 * the resourceVersion the next watch resumes from. Every event moves it on;
 * a line it cannot trust, an `ERROR` event or a throwing transform ends the
 * watch with the `WatchEnd` that says so.
 *
 * A streaming list (`listing`) emits its `ADDED` events as `Listed` and ends
 * its list at the bookmark annotated `k8s.io/initial-events-end` (`Synced`);
 * the same response then carries on as a watch. Until that bookmark,
 * `resourceVersion` stays undefined: a streaming list cut short is no list.
 */
export class WatchEvents<T extends KubeObject> implements WatchLineHandler {
  // The sink's parts, one property load away: `line` runs for every event of a busy watch.
  private readonly resource: string;
  private readonly logger: Logger;
  private readonly monitor: ListWatchMonitor;
  private readonly sink: WatchEventSink<T>;
  private readonly emit: (event: ListWatchEvent<T>) => void;

  constructor(
    sink: WatchEventSink<T>,
    /** Still in a streaming list's initial events. */
    public listing: boolean,
    /** The newest version seen, to resume from; undefined while `listing`. */
    public resourceVersion: string | undefined,
  ) {
    this.resource = sink.resource;
    this.logger = sink.logger;
    this.monitor = sink.monitor;
    this.sink = sink;
    this.emit = sink.emit;
  }

  opened(): void {
    this.sink.opened();
  }

  /** A line too large to keep was skipped; the watch goes on (reopening it would only send the same line again). */
  oversized(bytes: number): WatchEnd | undefined {
    this.logger.error(
      { resource: this.resource, resourceVersion: this.resourceVersion, bytes },
      'watch line larger than the largest object kept (maxObjectBytes); skipping it, the watch goes on',
    );
    this.monitor.skipped?.(this.resource, { verb: 'watch', bytes });
    return undefined;
  }

  line(line: WatchLine): WatchEnd | undefined {
    this.monitor.event?.(this.resource, line.type);
    const object = line.object as T;
    switch (line.type) {
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED': {
        if (this.listing) return line.type === 'ADDED' ? this.emitObject('Listed', object) : undefined;
        const rv = object.metadata?.resourceVersion;
        if (typeof rv === 'string' && rv !== '') this.resourceVersion = rv;
        return this.emitObject(WATCH_TYPES[line.type], object);
      }
      case 'BOOKMARK': {
        const rv = object.metadata?.resourceVersion;
        if (typeof rv !== 'string' || rv === '') return this.untrusted('bookmark without metadata.resourceVersion');
        if (this.listing) {
          if (object.metadata.annotations?.[INITIAL_EVENTS_END] !== 'true') return undefined;
          this.listing = false;
          this.resourceVersion = rv;
          this.emit({ type: 'Synced', resourceVersion: rv });
          return undefined;
        }
        this.resourceVersion = rv;
        this.emit({ type: 'Bookmark', resourceVersion: rv });
        return undefined;
      }
      case 'ERROR': {
        const status = line.object as { code?: unknown; reason?: unknown; message?: unknown };
        const code = typeof status.code === 'number' ? status.code : 500;
        const message = typeof status.message === 'string' ? status.message : 'watch ERROR event without a message';
        if (code === 410) return { kind: 'expired', message };
        const reason = typeof status.reason === 'string' ? status.reason : 'Unknown';
        const failure: FailedResponse = { code, reason, message, retryAfterSeconds: undefined };
        if (isTooLargeResourceVersion(code, status)) failure.tooLargeResourceVersion = true;
        return { kind: 'failed', failure };
      }
      default:
        return this.untrusted(`unknown event type "${line.type}"`);
    }
  }

  /** A line that is not JSON or not an event: reported, and the watch reopened from the last good version. */
  malformed(error: MalformedWatchLineError): WatchEnd {
    this.logMalformed(error.message);
    this.monitor.malformedLine?.(this.resource, error);
    return { kind: 'malformed' };
  }

  /** An event that parsed but cannot be trusted: the watch is reopened as for a malformed line. */
  private untrusted(why: string): WatchEnd {
    this.logMalformed(why);
    return { kind: 'malformed' };
  }

  private logMalformed(error: string): void {
    this.logger.error(
      { resource: this.resource, resourceVersion: this.resourceVersion, error },
      'malformed watch line; reopening the watch from the last good resourceVersion',
    );
  }

  /** Emits the object, shaped; a transform that throws ends the watch, and the source. */
  private emitObject(type: 'Listed' | 'Added' | 'Modified' | 'Deleted', object: T): WatchEnd | undefined {
    if (this.sink.shard !== undefined && !this.sink.shard.keepsWatched(object)) return undefined;
    if (this.sink.transform === undefined && !this.sink.metadataOnly) {
      this.emit({ type, object });
      return undefined;
    }
    const shaped = shapeObject(this.sink, object, type === 'Listed' ? 'list' : 'watch');
    if ('error' in shaped) return { kind: 'fatal', error: shaped.error };
    this.emit({ type, object: shaped.object });
    return undefined;
  }
}
