import type { KubeObject } from '../../types.js';
import { servesStoredForm, toVersion } from '../api/conversion.js';
import { StoredObject, type ChangeEvent, type WatchEventType } from '../storage/objectStore.js';
import type { ResourceType } from '../api/resourceType.js';
import { isSelective, matchesFilter, type ObjectFilter } from '../selectors/selectors.js';
import type { WatchStream } from './watchStream.js';

/**
 * The open watches, by resource, and the lines each change makes for them.
 *
 * The fast path: a watcher of the stored version without selectors gets the
 * line cached on the change event, built once for all such watchers.
 * Selector-aware watchers see what kube's watch cache shows them: an object
 * that starts matching arrives as ADDED, one that stops matching leaves as
 * DELETED (its previous state, at the new resourceVersion).
 */
/** What decides the lines a watch gets. */
export interface WatchTarget {
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly filter: ObjectFilter;
  /** A different encoding of objects (a Table for kubectl); disables the shared line cache. */
  readonly encode?: (stored: StoredObject) => string;
}

/** An open watch as the hub sees it. */
export interface HubWatcher {
  /** The storage key of the resource it watches. */
  readonly storageKey: string;
  /** The HTTP stream it writes to. */
  readonly stream: WatchStream;
  /** Takes a change just committed. */
  deliver(event: ChangeEvent): void;
}

export function watchLine(type: WatchEventType, json: string): string {
  return `{"type":"${type}","object":${json}}\n`;
}

/** The line for `object` as `watcher` sees it, converting when it watches another version. */
export function lineForStored(watcher: WatchTarget, type: WatchEventType, stored: StoredObject): string {
  if (watcher.encode !== undefined) return watchLine(type, watcher.encode(stored));
  if (servesStoredForm(watcher.type, stored)) return watchLine(type, stored.json);
  return watchLine(type, JSON.stringify(toVersion(watcher.type, stored.object)));
}

function cachedLine(watcher: WatchTarget, event: ChangeEvent, type: WatchEventType, stored: StoredObject): string {
  if (watcher.encode !== undefined || !servesStoredForm(watcher.type, stored)) return lineForStored(watcher, type, stored);
  const lines = event.lines as Record<WatchEventType, string | undefined>;
  let line = lines[type];
  if (line === undefined) {
    line = watchLine(type, stored.json);
    lines[type] = line;
  }
  return line;
}

function leftAt(event: ChangeEvent, prev: StoredObject): StoredObject {
  const object: KubeObject = { ...prev.object, metadata: { ...prev.object.metadata, resourceVersion: String(event.rv) } };
  return new StoredObject(JSON.stringify(object), event.rv, object);
}

/** The line `event` makes for `watcher`, or undefined when the watcher should not see it. */
export function lineFor(watcher: WatchTarget, event: ChangeEvent): string | undefined {
  if (watcher.namespace !== undefined && event.namespace !== watcher.namespace) return undefined;
  if (!isSelective(watcher.filter)) return cachedLine(watcher, event, event.type, event.current);
  const before = event.prev !== undefined && matchesFilter(watcher.filter, event.prev.object);
  if (event.type === 'DELETED') return before ? cachedLine(watcher, event, 'DELETED', event.current) : undefined;
  const now = matchesFilter(watcher.filter, event.current.object);
  if (now) return cachedLine(watcher, event, before ? 'MODIFIED' : 'ADDED', event.current);
  if (!before || event.prev === undefined) return undefined;
  // The object left the selection: the watcher sees its last matching state go.
  const lines = event.lines as Record<WatchEventType, string | undefined>;
  if (watcher.encode === undefined && servesStoredForm(watcher.type, event.prev)) {
    lines.DELETED ??= watchLine('DELETED', leftAt(event, event.prev).json);
    return lines.DELETED;
  }
  return lineForStored(watcher, 'DELETED', leftAt(event, event.prev));
}

/** The open watches by resource: every committed change goes to the watchers of its resource. */
export class WatchHub {
  private readonly byStorage = new Map<string, Set<HubWatcher>>();

  /** Starts delivering changes of its resource to `watcher`. */
  add(watcher: HubWatcher): void {
    let set = this.byStorage.get(watcher.storageKey);
    if (set === undefined) {
      set = new Set();
      this.byStorage.set(watcher.storageKey, set);
    }
    set.add(watcher);
  }

  /** Stops delivering to `watcher`. */
  remove(watcher: HubWatcher): void {
    const set = this.byStorage.get(watcher.storageKey);
    set?.delete(watcher);
    if (set?.size === 0) this.byStorage.delete(watcher.storageKey);
  }

  /** Delivers a committed change to every watcher of its resource. */
  dispatch(event: ChangeEvent): void {
    const set = this.byStorage.get(event.storageKey);
    if (set === undefined) return;
    for (const watcher of set) watcher.deliver(event);
  }

  /** Every open watch. */
  all(): HubWatcher[] {
    const out: HubWatcher[] = [];
    for (const set of this.byStorage.values()) out.push(...set);
    return out;
  }

  /** How many watches are open. */
  count(): number {
    let n = 0;
    for (const set of this.byStorage.values()) n += set.size;
    return n;
  }

  /** Watchers of one resource (to end them when a CRD stops serving it). */
  of(storageKey: string): HubWatcher[] {
    return [...(this.byStorage.get(storageKey) ?? [])];
  }
}
