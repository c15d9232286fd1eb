import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { filter, from, fromEvent, lastValueFrom, map, merge, type Observable, type ObservableInput, type SchedulerLike, Subject, takeUntil } from 'rxjs';
import type { Logger } from '../logger.js';
import { isObservableInput, type Reconciler, type ReconcileResult } from '../operators/reconciler.js';
import type { KeyTrigger } from '../operators/reconcileByKey.js';
import type { LeaderState } from '../sinks/leader/leaderElection.js';
import { shardLeaseClient, type ShardLeaseClient } from '../sinks/leader/shardLeaseClient.js';
import { shardMembership, type ShardState } from '../sinks/leader/shardMembership.js';
import { defaultShardSlots, fnv1a64, slotOfHash, slotRanges, type HashRange } from '../sinks/leader/shardSlots.js';
import { shardMetrics } from '../sinks/metrics/shardMetrics.js';
import type { Lister } from '../store/store.js';
import type { ShardSelection } from '../sources/sourceShard.js';
import { splitKey, type KubeObject, type ObjectKey, type RequestObserver } from '../types.js';

/**
 * `controller({ sharding })`: the replicas of one controller split its
 * primary keys between them (DESIGN invariant 25). See `shardMembership`
 * for how they find each other and `shardProtocol` for the handoff rule.
 */
export interface ShardingOptions {
  /**
   * `'auto'`: however many replicas are live share the keys. A number: the
   * same, and `ready()` is false while fewer than that many are live (a
   * replica short means its keys wait for a lease to expire or a member to
   * join).
   */
  replicas: 'auto' | number;
  /**
   * What a key hashes on (KEP-5866's two fields): `'namespace'` keeps a
   * namespace, and so an owner with what it owns, on one replica; `'uid'`
   * spreads evenly even with one namespace. With `'uid'`, a key's slot is
   * its object's: a deleted object keeps its last uid until its run ends
   * (up to 10,000 deleted keys are remembered); a key with no object and no
   * uid remembered runs nowhere. The guarantee is then per object: a name
   * deleted and created again is a new object, possibly in another slot,
   * and may run while the old one's last run ends elsewhere.
   */
  by: 'uid' | 'namespace';
  /** This replica's identity (default: the controller's, hostname + random). */
  identity?: string;
  /** Where the members' Leases live (default `default`). */
  namespace?: string;
  /** Slots of the hash space, a power of two (default 256); the same on every replica. */
  slots?: number;
  /** client-go's lease timing for the members' Leases (ms; defaults 15,000 / 10,000 / 2,000). */
  leaseDuration?: number;
  /** Ms without a successful renewal before this replica drops every slot. */
  renewDeadline?: number;
  /** Ms between renewals (and looks at the other members). */
  retryPeriod?: number;
  /** The calls on the Leases (default: over HTTP with the controller's kubeConfig). */
  client?: ShardLeaseClient;
  /**
   * What each replica caches. `'primary'` (default): the primary resource
   * is listed and watched with a `shardSelector` for this replica's ranges
   * (active and draining slots), so a server that honours it (KEP-5866)
   * sends about 1/N of the objects, and one that does not is filtered on
   * this side (said once in the log and in `rxkube_source_shard_filter_client_side`);
   * it lists again whenever the ranges change. Owned and watched resources
   * stay unsharded: correct for any mapping, but every replica caches all of
   * them. `'full'`: every replica caches everything, and only the
   * reconciles split (no re-list on a handoff).
   */
  cache?: 'primary' | 'full';
}

/** What the controller wires in when sharded. */
export interface ShardGate {
  /** The membership, as the leadership `reconcileWhileLeading` waits on: always leading, slots gating the keys. */
  membership(stop: Observable<void>): Observable<LeaderState>;
  /** Only keys of active slots, plus every stored key of a slot as it is gained. */
  triggers(input: Observable<KeyTrigger>): Observable<KeyTrigger>;
  /** Starts a run only in an active slot; counts runs in flight per slot; aborts them when their slot goes. */
  reconcile(inner: Reconciler): Reconciler;
  /** The last state the membership emitted. */
  state(): ShardState | undefined;
  /** Why the sharding is not ready: fewer live replicas than `replicas` asks. */
  problems(): string[];
}

interface GateParts<T extends KubeObject> {
  controller: string;
  options: ShardingOptions;
  identity: string;
  kubeConfig: KubeConfig;
  requests: RequestObserver;
  store: Lister<T>;
  scheduler: SchedulerLike;
  logger: Logger;
  registry: Registry;
  gracePeriod: number;
  /** Told the hash ranges this replica caches (active and draining slots) whenever they change. */
  onRanges?: (ranges: HashRange[]) => void;
  /** The trigger of a key of a slot just gained: an initial list of the slot (default: the bare key). */
  handoff?: (key: ObjectKey) => KeyTrigger;
}

/** Throws a `TypeError` naming what is wrong with `sharding`. */
export function validateSharding(controller: string, sharding: ShardingOptions): void {
  const { replicas, by } = sharding;
  if (replicas !== 'auto' && !(Number.isInteger(replicas) && replicas >= 1)) {
    throw new TypeError(`controller "${controller}": sharding.replicas must be 'auto' or a whole number ≥ 1, got ${String(replicas)}`);
  }
  if (by !== 'uid' && by !== 'namespace') throw new TypeError(`controller "${controller}": sharding.by must be 'uid' or 'namespace', got ${String(by)}`);
}

/** Waits for a run's end whatever form its result takes (an observable one is cut short by `signal`): the slot is busy until then. */
async function settle(result: ReturnType<Reconciler>, signal: AbortSignal): Promise<ReconcileResult | void> {
  const value: unknown = await result;
  if (value !== null && typeof value === 'object' && isObservableInput(value)) {
    const run = from(value as ObservableInput<ReconcileResult | void>).pipe(takeUntil(fromEvent(signal, 'abort')));
    return lastValueFrom(run, { defaultValue: undefined });
  }
  return value as ReconcileResult | void;
}

/** The sharding of one controller run; see `ShardingOptions`. */
export function shardGate<T extends KubeObject>(parts: GateParts<T>): ShardGate {
  const { options, store, logger, handoff } = parts;
  const slots = options.slots ?? defaultShardSlots;
  const rememberedUids = 10_000;
  const metrics = shardMetrics(parts.registry, parts.controller);
  const client = options.client ?? shardLeaseClient(parts.kubeConfig, parts.requests);
  let current: ShardState | undefined;
  const lastUid = new Map<ObjectKey, string>();
  const running = new Map<number, Set<AbortController>>();
  const gained = new Subject<ObjectKey>();

  /**
   * The slot of a key, or undefined when it has none here: sharded by uid,
   * a key with no object in the cache and no uid remembered (never seen, or
   * forgotten) belongs to no slot and runs nowhere. Hashing it on something
   * else could put it on a replica other than the one still running its
   * object.
   */
  const slotOf = (key: ObjectKey): number | undefined => {
    if (options.by === 'namespace') return slotOfHash(fnv1a64(splitKey(key).namespace ?? ''), slots);
    const uid = store.get(key)?.metadata?.uid;
    if (uid !== undefined && lastUid.get(key) !== uid) {
      lastUid.delete(key);
      lastUid.set(key, uid);
      // Remembered for deleted objects until their run here; a bounded memory, oldest first out.
      if (lastUid.size > rememberedUids + store.size) lastUid.delete(lastUid.keys().next().value as ObjectKey);
    }
    const known = uid ?? lastUid.get(key);
    return known === undefined ? undefined : slotOfHash(fnv1a64(known), slots);
  };
  const owns = (slot: number | undefined): boolean => slot !== undefined && current?.active.has(slot) === true;

  metrics.keys(() => store.keys().filter((key) => owns(slotOf(key))).length);
  let cached = '';
  const onState = (state: ShardState): void => {
    const before = current;
    current = state;
    const ranges = slotRanges([...state.active, ...state.draining], slots);
    const text = ranges.map((r) => `${r.start}-${r.end}`).join(',');
    if (parts.onRanges !== undefined && (before === undefined || text !== cached)) {
      cached = text;
      parts.onRanges(ranges);
    }
    const keep = (slot: number): boolean => (state.active.has(slot) || state.draining.has(slot)) && !state.overdue.has(slot);
    for (const [slot, controllers] of running) {
      if (keep(slot)) continue;
      for (const controller of controllers) controller.abort(new Error(`sharding: slot ${slot} left this replica`));
    }
    const keys = store.keys();
    const fresh = new Set([...state.active].filter((slot) => before === undefined || !before.active.has(slot)));
    if (fresh.size > 0) {
      // Stored keys, and deleted ones whose last run was elsewhere: the new owner reconciles them all once.
      const gone = [...lastUid.keys()].filter((key) => store.get(key) === undefined);
      for (const key of [...keys, ...gone]) {
        const slot = slotOf(key);
        if (slot !== undefined && fresh.has(slot)) gained.next(key);
      }
    }
    metrics.owned({
      slots: state.active.size,
      ranges: slotRanges(state.active, slots).length,
      members: state.members.length,
    });
    metrics.handoffs('gained', state.handoffs.gained - (before?.handoffs.gained ?? 0));
    metrics.handoffs('released', state.handoffs.released - (before?.handoffs.released ?? 0));
  };

  return {
    membership: (stop) =>
      shardMembership({
        client,
        namespace: options.namespace ?? 'default',
        controller: parts.controller,
        identity: parts.identity,
        slots,
        ...(options.leaseDuration !== undefined ? { leaseDuration: options.leaseDuration } : {}),
        ...(options.renewDeadline !== undefined ? { renewDeadline: options.renewDeadline } : {}),
        ...(options.retryPeriod !== undefined ? { retryPeriod: options.retryPeriod } : {}),
        gracePeriod: parts.gracePeriod,
        busy: (slot) => (running.get(slot)?.size ?? 0) > 0,
        stop,
        scheduler: parts.scheduler,
        logger,
      }).pipe(
        map((state) => {
          onState(state);
          return { leading: true, holder: undefined };
        }),
      ),
    triggers: (input) =>
      merge(
        input.pipe(filter((trigger) => owns(slotOf(typeof trigger === 'string' ? trigger : trigger.key)))),
        // A slot handed over is an initial list of its keys.
        handoff === undefined ? gained : gained.pipe(map(handoff)),
      ),
    reconcile: (inner) => async (key, ctx) => {
      const slot = slotOf(key);
      // Dequeued after its slot stopped being active here: the slot's new owner runs it.
      if (slot === undefined || !owns(slot)) return undefined;
      const controller = new AbortController();
      const signal = AbortSignal.any([ctx.signal, controller.signal]);
      const set = running.get(slot) ?? new Set<AbortController>();
      running.set(slot, set.add(controller));
      try {
        return await settle(inner(key, { ...ctx, signal }), signal);
      } catch (err) {
        // Cut short because its slot left this replica: not a failure to retry here; the slot's new owner runs the key.
        if (controller.signal.aborted && !ctx.signal.aborted) return undefined;
        throw err;
      } finally {
        set.delete(controller);
        if (set.size === 0) running.delete(slot);
        if (store.get(key) === undefined) lastUid.delete(key);
      }
    },
    state: () => current,
    problems: () => {
      const want = options.replicas;
      if (want === 'auto' || current === undefined) return current === undefined ? ['sharding: membership has not started'] : [];
      return current.members.length < want ? [`sharding: ${current.members.length} of ${want} replicas live`] : [];
    },
  };
}

/** Feeds a replica's ranges to its primary informer's `shardSelector`. */
export function shardRangesTo(target: { next(selection: ShardSelection): void }, by: ShardingOptions['by']): (ranges: HashRange[]) => void {
  return (ranges) => target.next({ by, ranges });
}
