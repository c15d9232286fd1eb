import type { ChangeEvent, ObjectStore, StoredObject } from '../storage/objectStore.js';
import type { ResourceType } from '../api/resourceType.js';
import type { ObjectFilter } from '../selectors/selectors.js';
import { lineFor, lineForStored, type HubWatcher, type WatchTarget } from './watchHub.js';
import type { WatchStream } from './watchStream.js';

/**
 * One watch's position in the stream of changes. A watcher is either live
 * (it gets each change as it is committed) or catching up: after its
 * initial objects, from a resourceVersion in the past, or after its client
 * fell behind (the socket filled, or the watch was silenced). Catching up
 * reads the shared history from the watcher's cursor, as fast as the client
 * takes it, until it reaches the present and turns live. Nothing is queued
 * per watcher; a watcher whose cursor falls out of the history window is
 * ended cleanly, as kube ends watchers too slow to keep up, and its client
 * resumes from its last resourceVersion (or gets 410 Expired).
 */
export class Watcher implements WatchTarget, HubWatcher {
  private live = false;
  private initial: readonly StoredObject[];
  private initialIndex = 0;
  private endBookmark: Record<string, string> | undefined;

  constructor(
    private readonly store: ObjectStore,
    readonly storageKey: string,
    readonly type: ResourceType,
    readonly namespace: string | undefined,
    readonly filter: ObjectFilter,
    readonly stream: WatchStream,
    /** The last resourceVersion this watcher has seen (sent or skipped). */
    private cursor: number,
    options: { initial?: readonly StoredObject[]; endBookmark?: Record<string, string>; encode?: (stored: StoredObject) => string } = {},
  ) {
    this.initial = options.initial ?? [];
    this.endBookmark = options.endBookmark;
    this.encode = options.encode;
  }

  readonly encode: ((stored: StoredObject) => string) | undefined;

  /** The resourceVersion a bookmark may report now, or undefined while catching up. */
  get bookmarkResourceVersion(): number | undefined {
    return this.live ? this.store.resourceVersion : undefined;
  }

  deliver(event: ChangeEvent): void {
    if (!this.live) return;
    if (!this.stream.writable) {
      this.fallBehind();
      return;
    }
    this.cursor = event.rv;
    const line = lineFor(this, event);
    if (line !== undefined && !this.stream.send(line)) this.fallBehind();
  }

  private fallBehind(): void {
    this.live = false;
    this.stream.onWritable(() => this.catchUp());
  }

  /** Sends what the watcher has not seen yet, as far as the client takes it; turns live when done. */
  catchUp(): void {
    if (this.stream.isClosed) return;
    if (!this.stream.writable) {
      this.fallBehind();
      return;
    }
    while (this.initialIndex < this.initial.length) {
      const stored = this.initial[this.initialIndex++];
      if (!this.stream.send(lineForStored(this, 'ADDED', stored))) {
        this.fallBehind();
        return;
      }
    }
    if (this.endBookmark !== undefined) {
      const annotations = this.endBookmark;
      this.endBookmark = undefined;
      this.stream.bookmark(annotations, this.cursor);
    }
    this.initial = [];
    if (this.cursor < this.store.oldestResumable(this.storageKey)) {
      // Too slow for the history window: end it; the client resumes from the last version it saw.
      this.stream.end();
      return;
    }
    for (const event of this.store.changesSince(this.storageKey, this.cursor)) {
      this.cursor = event.rv;
      const line = lineFor(this, event);
      if (line !== undefined && !this.stream.send(line)) {
        this.fallBehind();
        return;
      }
    }
    this.live = true;
  }
}
