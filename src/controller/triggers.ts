import { catchError, defer, filter, isObservable, map, throwError, type Observable, type SchedulerLike } from 'rxjs';
import { periodicKeys } from '../operators/periodicKeys.js';
import { LOW_PRIORITY } from '../operators/priorityLanes.js';
import type { KeyTrigger } from '../operators/reconcileByKey.js';
import type { Lister } from '../store/store.js';
import { isDelta, objectKey, type Delta, type KubeObject, type ObjectKey } from '../types.js';
import type { Informer } from '../informers/informerFactory.js';

/** What a trigger emits: a primary key (`namespace/name`, or `name` when cluster-scoped), or an object, which stands for its key. */
export type TriggerValue = ObjectKey | KubeObject;

/** What a trigger made by a function gets from its controller, each time the controller starts reconciling. */
export interface TriggerParts<T extends KubeObject = KubeObject> {
  /** The primary resource's store. */
  readonly store: Lister<T>;
  /** The primary resource's deltas: every stored object first (as `initial`), then each change. */
  readonly changes: Observable<Delta<T>>;
  /** The controller's scheduler: wait on it, so that virtual time stays virtual. */
  readonly scheduler: SchedulerLike;
}

/**
 * Keys from outside the cluster (controller-runtime's `source.Channel`,
 * kube-rs's `reconcile_on`, java-operator-sdk's event sources): a channel,
 * a timer, the push notifications of a Git provider. `keys` is an
 * Observable, or a function that makes one from the controller's parts
 * (see `perObjectTimer`). Each value it emits triggers its key, as a
 * change of the cluster would: the queue's rules hold (a trigger during a
 * run means one more run, triggers of a waiting key coalesce).
 */
export interface ControllerTrigger<T extends KubeObject = KubeObject> {
  /** Names it in the timeline (the cause's `resource`), in logs and in its errors. */
  readonly name: string;
  /** The keys, or objects standing for them. */
  readonly keys: Observable<TriggerValue> | ((parts: TriggerParts<T>) => Observable<TriggerValue>);
  /** The priority of its keys in the queue (default `NORMAL_PRIORITY`; `perObjectTimer` takes `LOW_PRIORITY`, as a resync). */
  readonly priority?: number;
}

/** A trigger failed (its Observable errored, or it emitted something that is no key): the controller fails with this. */
export class TriggerError extends Error {
  /** The trigger's name. */
  readonly trigger: string;
  constructor(trigger: string, cause: unknown) {
    super(`trigger "${trigger}" failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'TriggerError';
    this.trigger = trigger;
  }
}

/**
 * A trigger that reconciles every primary object on its own timer, every
 * `intervalMs` (kopf's `@timer`), for state no watch shows: an external
 * system's, a certificate's expiry. Each key fires at its own phase of the
 * interval, from a hash of the key (`periodicKeys`), on the controller's
 * scheduler: ten thousand objects make no storm. An object's timer stops
 * when it is deleted. Unlike `resyncPeriod`, it concerns the primary
 * objects only and shows in the timeline as this trigger (`name`, default
 * `every <intervalMs>ms`). Its keys wait at `LOW_PRIORITY` by default, as a
 * resync's do: a change of the cluster goes first.
 */
export function perObjectTimer<T extends KubeObject = KubeObject>(intervalMs: number, options: { name?: string; priority?: number } = {}): ControllerTrigger<T> {
  // Checked here, where the caller is, not at the first subscription.
  periodicKeys(intervalMs);
  return {
    name: options.name ?? `every ${intervalMs}ms`,
    priority: options.priority ?? LOW_PRIORITY,
    keys: ({ changes, scheduler }) => changes.pipe(periodicKeys(intervalMs, { scheduler })),
  };
}

/** A trigger as given to `controller()`: a `ControllerTrigger`, or a bare Observable, named by its place. */
export type TriggerOption<T extends KubeObject = KubeObject> = ControllerTrigger<T> | Observable<TriggerValue>;

/** The triggers of `options`, each with a name; throws a TypeError naming a malformed one. */
export function normalizeTriggers<T extends KubeObject>(controller: string, triggers: readonly TriggerOption<T>[] | undefined): ControllerTrigger<T>[] {
  if (triggers === undefined) return [];
  if (!Array.isArray(triggers)) throw new TypeError(`controller "${controller}": triggers must be an array`);
  return triggers.map((trigger, i) => {
    if (isObservable(trigger)) return { name: `triggers[${i}]`, keys: trigger as Observable<TriggerValue> };
    const { name, keys, priority } = (trigger ?? {}) as Partial<ControllerTrigger<T>>;
    if (typeof name !== 'string' || name === '' || !(isObservable(keys) || typeof keys === 'function')) {
      throw new TypeError(`controller "${controller}": triggers[${i}] needs a non-empty name and keys (an Observable, or a function that returns one)`);
    }
    if (priority !== undefined && !(typeof priority === 'number' && Number.isFinite(priority))) {
      throw new TypeError(`controller "${controller}": triggers[${i}] ("${name}") has priority ${String(priority)}; it must be a finite number`);
    }
    return priority === undefined ? { name, keys } : { name, keys, priority };
  });
}

/** The key a trigger's value stands for; a TypeError saying what it got instead. */
export function keyOfTriggerValue(value: unknown): ObjectKey {
  if (typeof value === 'string') {
    if (value === '' || value.startsWith('/') || value.split('/').length > 2) throw new TypeError(`it emitted ${JSON.stringify(value)}, which is no key ("namespace/name" or "name")`);
    return value;
  }
  return objectKey(value as KubeObject);
}

/**
 * One trigger's values, as they enter the queue: each mapped to its key,
 * which `tell` hears before it goes on; an error (of the trigger, or a
 * value that is no key) becomes a `TriggerError` naming it. The function
 * form is called anew at each subscription: each time the controller
 * starts reconciling.
 */
export function triggerSource<T extends KubeObject>(
  trigger: ControllerTrigger<T>,
  primary: Informer<T>,
  scheduler: SchedulerLike,
  keys: (values: Observable<TriggerValue>) => Observable<KeyTrigger>,
): Observable<KeyTrigger> {
  return defer(() => {
    const values =
      typeof trigger.keys === 'function'
        ? trigger.keys({ store: primary.store, changes: primary.events.pipe(filter(isDelta), map((delta) => delta as Delta<T>)), scheduler })
        : trigger.keys;
    if (!isObservable(values)) throw new TypeError('its function returned no Observable');
    return keys(values);
  }).pipe(catchError((err: unknown) => throwError(() => new TriggerError(trigger.name, err))));
}
