import type { KubeObject, ListWatchEvent } from '../../types.js';

/**
 * Builders of the `ListWatchEvent`s a source emits, for the values of a
 * marble diagram that scripts a watch:
 *
 * ```ts
 * watch(podAutoscalers, cold('a--b--c', {
 *   a: list([web], '1'),        // Restart, Listed(web), Synced('1'), all at frame 0
 *   b: modified(webScaled),
 *   c: deleted(webScaled),
 * }));
 * ```
 *
 * Objects are used as given: give each state of an object its own
 * `metadata.resourceVersion`, or the store sees a repeat (`Sync`), not a change.
 */

/** A list begins (a first list, or a re-list after a 410). */
export function restart<T extends KubeObject = KubeObject>(): ListWatchEvent<T> {
  return { type: 'Restart' };
}

/** One object of the list in progress. */
export function listed<T extends KubeObject>(object: T): ListWatchEvent<T> {
  return { type: 'Listed', object };
}

/** The list is complete, at this resourceVersion. */
export function synced<T extends KubeObject = KubeObject>(resourceVersion: string): ListWatchEvent<T> {
  return { type: 'Synced', resourceVersion };
}

/** A watch event: the object was created. */
export function added<T extends KubeObject>(object: T): ListWatchEvent<T> {
  return { type: 'Added', object };
}

/** A watch event: the object was changed. */
export function modified<T extends KubeObject>(object: T): ListWatchEvent<T> {
  return { type: 'Modified', object };
}

/** A watch event: the object was deleted (its last state). */
export function deleted<T extends KubeObject>(object: T): ListWatchEvent<T> {
  return { type: 'Deleted', object };
}

/** The watch's resourceVersion moved on, with no change. */
export function bookmark<T extends KubeObject = KubeObject>(resourceVersion: string): ListWatchEvent<T> {
  return { type: 'Bookmark', resourceVersion };
}

/**
 * A whole list as one marble value: `Restart`, a `Listed` per object, then
 * `Synced` at `resourceVersion` (default: the last object's, or `'0'`).
 * An empty list still syncs the store.
 */
export function list<T extends KubeObject>(objects: readonly T[], resourceVersion?: string): ListWatchEvent<T>[] {
  const last = objects.at(-1)?.metadata.resourceVersion;
  return [restart<T>(), ...objects.map((o) => listed(o)), synced<T>(resourceVersion ?? last ?? '0')];
}
