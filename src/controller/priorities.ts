import { defer, map, tap, type Observable, type OperatorFunction } from 'rxjs';
import { LOW_PRIORITY, NORMAL_PRIORITY } from '../operators/priorityLanes.js';
import type { KeyTrigger } from '../operators/reconcileByKey.js';
import { isDelta, type Delta, type ObjectKey } from '../types.js';

/** Why a key was triggered, as `PriorityOptions.of` hears it. */
export type TriggerKind = 'initial' | 'resync' | 'change' | 'trigger';

/**
 * How a controller's workqueue orders the keys waiting for a worker
 * (docs/priority.md). Priorities are numbers, higher sooner:
 * `NORMAL_PRIORITY` (0) and `LOW_PRIORITY` (-100), as controller-runtime's.
 */
export interface PriorityOptions {
  /**
   * The keys of initial lists: every stored object of every resource as the
   * controller starts reconciling (a restart, a newly won lease, a slot
   * handed over by sharding). Default `LOW_PRIORITY`, so that a change made
   * meanwhile runs before the backlog.
   */
  initial?: number;
  /**
   * The keys of objects re-sent unchanged: the periodic resync
   * (`resyncPeriod`) and unchanged objects of a re-list. Default `LOW_PRIORITY`.
   */
  resync?: number;
  /**
   * Ms a waiting key takes to gain 100 points of priority, the distance
   * from `LOW_PRIORITY` to `NORMAL_PRIORITY` (default one minute): a key
   * of an initial list waits at most this long plus the time the workers
   * take to drain the keys ahead of it then (see `reconcileByKey`). 0
   * turns priorities off: waiting keys start in arrival order.
   */
  aging?: number;
  /**
   * The priority of one trigger of one key, from the one its source gave
   * (`priority`: `initial`, `resync`, or the source's own): return it to
   * keep it. Called for every trigger; keep it cheap.
   */
  of?: (key: ObjectKey, priority: number, kind: TriggerKind) => number;
}

/** Names the option that gave a priority that is no finite number. */
function checked(controller: string, what: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new TypeError(`controller "${controller}": ${what} must be a finite number, got ${String(value)}`);
  return value;
}

/** Turns a key and why it came into what the queue reads: a bare key at `NORMAL_PRIORITY`, else `{ key, priority }`. */
export interface Prioritize {
  /** The key of `cause` (a delta of a source whose changes have priority `source`). */
  delta(cause: unknown, key: ObjectKey, source: number | undefined): KeyTrigger;
  /** A key of an external trigger whose priority is `source`, or of a sharding handoff (`initial`). */
  key(key: ObjectKey, source: number | undefined, kind: TriggerKind): KeyTrigger;
}

/** The priorities of `options`, checked; throws a TypeError naming one that is no finite number. */
export function prioritize(controller: string, options: PriorityOptions | undefined): Prioritize {
  const initial = checked(controller, 'priority.initial', options?.initial, LOW_PRIORITY);
  const resync = checked(controller, 'priority.resync', options?.resync, LOW_PRIORITY);
  const of = options?.of;
  if (of !== undefined && typeof of !== 'function') throw new TypeError(`controller "${controller}": priority.of must be a function`);
  const finish = (key: ObjectKey, priority: number, kind: TriggerKind): KeyTrigger => {
    let p = priority;
    if (of !== undefined) {
      p = of(key, priority, kind);
      if (typeof p !== 'number' || !Number.isFinite(p)) {
        throw new TypeError(`controller "${controller}": priority.of returned ${String(p)} for "${key}" (${kind}); it must return a finite number`);
      }
    }
    // Most triggers are normal: those stay bare keys, and cost the queue no object.
    return p === NORMAL_PRIORITY ? key : { key, priority: p };
  };
  const kindOf = (cause: unknown): TriggerKind => {
    const delta = cause as Delta | undefined;
    if (delta === undefined || !isDelta(delta)) return 'change';
    if (delta.initial === true) return 'initial';
    return delta.type === 'Sync' ? 'resync' : 'change';
  };
  return {
    delta: (cause, key, source) => {
      const kind = kindOf(cause);
      return finish(key, kind === 'initial' ? initial : kind === 'resync' ? resync : (source ?? NORMAL_PRIORITY), kind);
    },
    key: (key, source, kind) => finish(key, kind === 'initial' ? initial : (source ?? NORMAL_PRIORITY), kind),
  };
}

/**
 * `toKeys` over the events, each key it gives with the priority of the
 * event it came from. The mappers are synchronous (one event in, its keys
 * out before the next), so the last event seen is the one of each key.
 */
export function withPriority<E>(
  toKeys: (events: Observable<E>) => Observable<ObjectKey>,
  priority: (cause: E | undefined, key: ObjectKey) => KeyTrigger,
): OperatorFunction<E, KeyTrigger> {
  return (events) =>
    defer(() => {
      let cause: E | undefined;
      return toKeys(events.pipe(tap((event) => (cause = event)))).pipe(map((key) => priority(cause, key)));
    });
}
