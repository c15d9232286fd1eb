import { asyncScheduler, from, mergeMap, Observable, type ObservableInput, of, type SchedulerLike, type Subscription, take, timeout } from 'rxjs';
import { defaultLogger, type Logger } from '../../logger.js';
import { kubeMicroTime } from '../../util/time.js';
import { isConflict, isNotFound } from '../client/errors.js';
import { LeaderElectionConfigError, leaderElectionDefaults, leaderElectionJitterFactor } from './leaderElection.js';
import type { Lease } from './leaseRecord.js';
import type { ShardLeaseClient } from './shardLeaseClient.js';
import {
  announced,
  decide,
  livePeers,
  noSlots,
  observePeers,
  type PeerView,
  releaseDrained,
  shardControllerLabel,
  shardSlotCountAnnotation,
  shardSlotsAnnotation,
  type SlotState,
} from './shardProtocol.js';
import { checkSlotCount, defaultShardSlots, fnv1a64, formatSlots, slotsOf } from './shardSlots.js';

/**
 * Sharding membership: one Lease per replica, renewed with client-go's
 * timing, and the slots of the hash space this replica may reconcile, as an
 * Observable. The handoff protocol (never one slot active on two replicas
 * at once) is in `./shardProtocol.ts`; this is its shell: every
 * `retryPeriod` it writes this replica's Lease (its slots in the
 * `rxkube.io/shard-slots` annotation), then lists every member's Lease (by
 * the `rxkube.io/shard-controller` label) and decides.
 *
 * - Emits a `ShardState` whenever it changes, the first time at once (not
 *   live, no slots).
 * - No write succeeding within `renewDeadline` of the last success being
 *   sent drops every slot at once (the try in flight is cancelled): the
 *   host must abort the runs of slots no longer `active` or `draining`, at
 *   once. It keeps trying, and claims slots afresh. A 409 on its own Lease
 *   (someone else wrote it) makes the next tick read it first.
 * - Draining slots are released once `busy(slot)` says no run of it is in
 *   flight; past `gracePeriod` they are listed in `overdue`, for the host to
 *   abort their runs.
 * - `stop` drops every slot, gives the Lease up (empty holder, 1 s, no
 *   slots, so the others take over at their next tick) and completes once
 *   that write is answered or timed out. Call it once the runs have ended.
 *   Unsubscribing gives the Lease up in the background.
 * - A member's Lease seen unchanged for `collectAfter` and expired by its
 *   own duration (a replica that left or died; each rollout leaves its old
 *   replicas' Leases behind) is deleted, with its uid and resourceVersion as
 *   preconditions, so one written since stays. A replica whose own Lease is
 *   gone drops every slot and joins afresh, creating it at its next tick.
 */
export interface ShardMembershipOptions {
  /** The calls on the Leases. */
  client: ShardLeaseClient;
  /** The namespace of the members' Leases. */
  namespace: string;
  /** The sharded controller's name: the members' label, and the prefix of their Lease names. */
  controller: string;
  /** This replica's identity, unique per replica (hostname + random, say). */
  identity: string;
  /** Slots of the hash space, a power of two (default 256); every member must use the same. */
  slots?: number;
  /** Ms, a whole number of seconds. Default 15,000. */
  leaseDuration?: number;
  /** Ms. Default 10,000. */
  renewDeadline?: number;
  /** Ms between ticks. Default 2,000. */
  retryPeriod?: number;
  /** Ms a draining slot's runs may take before they are `overdue` (default 30,000). */
  gracePeriod?: number;
  /** Ms a member's Lease must be seen unchanged before it is deleted (default 30 minutes: far past any renew deadline). */
  collectAfter?: number;
  /** Whether a run of `slot` is in flight on this replica (default: never). */
  busy?: (slot: number) => boolean;
  /** When it first emits, the replica leaves: see above. */
  stop?: ObservableInput<unknown>;
  /** All waits and the local clock. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** The wall clock written in `renewTime` and `acquireTime` (default the scheduler's): only read by people, never trusted. */
  wallClock?: () => number;
  /** Where joining, handoffs and failures are logged (default: pino to stderr). */
  logger?: Logger;
  /** Jitter of the tries while not live, in [0, 1). Default `Math.random`. */
  random?: () => number;
}

/** Where this replica stands. */
export interface ShardState {
  /** Its last renewal succeeded within the renew deadline. */
  readonly live: boolean;
  /** The identities of the live members as it last saw them, itself first. */
  readonly members: readonly string[];
  /** Slots whose keys may start runs here. */
  readonly active: ReadonlySet<number>;
  /** Slots being let go: no run starts, runs in flight may finish. */
  readonly draining: ReadonlySet<number>;
  /** Draining slots whose grace period is over: abort their runs. */
  readonly overdue: ReadonlySet<number>;
  /** How many slots it has gained and released so far. */
  readonly handoffs: { readonly gained: number; readonly released: number };
}

interface Config {
  client: ShardLeaseClient;
  namespace: string;
  leaseName: string;
  label: string;
  identity: string;
  slots: number;
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
  gracePeriod: number;
  collectAfter: number;
  busy: (slot: number) => boolean;
  scheduler: SchedulerLike;
  wallClock: () => number;
  logger: Logger;
  random: () => number;
}

/** A DNS label-ish form of `text` (a Lease name part or a label value), with a hash suffix when anything had to change. */
function safeName(text: string, max: number): string {
  const cleaned = text.toLowerCase().replace(/[^a-z0-9.-]+/g, '-').replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  if (cleaned === text && text.length <= max) return text;
  const suffix = fnv1a64(text).toString(16).padStart(16, '0').slice(0, 10);
  return `${cleaned.slice(0, max - suffix.length - 1)}-${suffix}`.replace(/^-/, 'x');
}

function positive(value: number, option: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new LeaderElectionConfigError(`shardMembership: ${option} must be a positive number of ms, got ${String(value)}`);
  }
  return value;
}

function configure(options: ShardMembershipOptions): Config {
  for (const field of ['namespace', 'controller', 'identity'] as const) {
    if (typeof options[field] !== 'string' || options[field] === '') {
      throw new LeaderElectionConfigError(`shardMembership: ${field} is required and must not be empty`);
    }
  }
  const leaseDuration = positive(options.leaseDuration ?? leaderElectionDefaults.leaseDuration, 'leaseDuration');
  const renewDeadline = positive(options.renewDeadline ?? leaderElectionDefaults.renewDeadline, 'renewDeadline');
  const retryPeriod = positive(options.retryPeriod ?? leaderElectionDefaults.retryPeriod, 'retryPeriod');
  if (leaseDuration % 1000 !== 0) throw new LeaderElectionConfigError(`shardMembership: leaseDuration must be a whole number of seconds, got ${leaseDuration} ms`);
  const collectAfter = positive(options.collectAfter ?? 30 * 60_000, 'collectAfter');
  if (collectAfter <= leaseDuration) {
    throw new LeaderElectionConfigError(`shardMembership: collectAfter (${collectAfter} ms) must be greater than leaseDuration (${leaseDuration} ms): a Lease is collected only once it has expired`);
  }
  if (leaseDuration <= renewDeadline) {
    throw new LeaderElectionConfigError(`shardMembership: leaseDuration (${leaseDuration} ms) must be greater than renewDeadline (${renewDeadline} ms)`);
  }
  if (renewDeadline <= leaderElectionJitterFactor * retryPeriod) {
    throw new LeaderElectionConfigError(
      `shardMembership: renewDeadline (${renewDeadline} ms) must be greater than retryPeriod × ${leaderElectionJitterFactor} (${leaderElectionJitterFactor * retryPeriod} ms)`,
    );
  }
  let slots: number;
  try {
    slots = checkSlotCount(options.slots ?? defaultShardSlots);
  } catch (err) {
    throw new LeaderElectionConfigError(`shardMembership: ${(err as Error).message}`);
  }
  const scheduler = options.scheduler ?? asyncScheduler;
  return {
    client: options.client,
    namespace: options.namespace,
    leaseName: safeName(`${options.controller}-shard-${options.identity}`, 253),
    label: safeName(options.controller, 63),
    identity: options.identity,
    slots,
    leaseDuration,
    renewDeadline,
    retryPeriod,
    gracePeriod: positive(options.gracePeriod ?? 30_000, 'gracePeriod'),
    collectAfter,
    busy: options.busy ?? (() => false),
    scheduler,
    wallClock: options.wallClock ?? (() => scheduler.now()),
    logger: options.logger ?? defaultLogger({ part: 'shardMembership' }),
    random: options.random ?? Math.random,
  };
}

function sameSet(a: ReadonlySet<number>, b: ReadonlySet<number>): boolean {
  if (a.size !== b.size) return false;
  for (const item of a) if (!b.has(item)) return false;
  return true;
}

/** The Lease this replica writes: holder, client-go's times, and the slots it announces. */
function ownLease(config: Config, previous: Lease | undefined, slots: ReadonlySet<number>, holding: boolean): Lease {
  const now = kubeMicroTime(config.wallClock());
  const spec = previous?.spec ?? {};
  const renewing = spec.holderIdentity === config.identity;
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      ...(previous?.metadata ?? {}),
      namespace: config.namespace,
      name: config.leaseName,
      labels: { ...(previous?.metadata?.labels ?? {}), [shardControllerLabel]: config.label },
      annotations: {
        ...(previous?.metadata?.annotations ?? {}),
        [shardSlotsAnnotation]: formatSlots(slots),
        [shardSlotCountAnnotation]: String(config.slots),
      },
    },
    spec: holding
      ? {
          holderIdentity: config.identity,
          leaseDurationSeconds: config.leaseDuration / 1000,
          acquireTime: renewing && spec.acquireTime !== undefined ? spec.acquireTime : now,
          renewTime: now,
          leaseTransitions: (spec.leaseTransitions ?? 0) + (renewing || previous === undefined ? 0 : 1),
        }
      : { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: spec.leaseTransitions ?? 0 },
  };
}

/** Writes this replica's Lease: an update over the one last seen, or (not known yet) a read, then a create or an update. */
function writeOwn(config: Config, known: Lease | undefined, slots: ReadonlySet<number>, holding: boolean): Observable<Lease> {
  if (known !== undefined) return config.client.update(ownLease(config, known, slots, holding));
  return config.client.get(config.namespace, config.leaseName).pipe(
    mergeMap((found) => (found === undefined ? config.client.create(ownLease(config, undefined, slots, holding)) : config.client.update(ownLease(config, found, slots, holding)))),
  );
}

/** Joins the members of `controller` and emits the slots this replica may reconcile; see the rules above. */
export function shardMembership(options: ShardMembershipOptions): Observable<ShardState> {
  const config = configure(options);
  const { scheduler, logger, renewDeadline, retryPeriod } = config;
  const fields = { lease: `${config.namespace}/${config.leaseName}`, identity: config.identity };
  const assignments = new Map<string, ReadonlySet<number>>();
  const assign = (members: readonly string[]): ReadonlySet<number> => {
    const key = [...members].sort().join('\u0000');
    let mine = assignments.get(key);
    if (mine === undefined) {
      mine = slotsOf(config.identity, members, config.slots);
      if (assignments.size > 64) assignments.clear();
      assignments.set(key, mine);
    }
    return mine;
  };

  return new Observable<ShardState>((subscriber) => {
    let state: SlotState = noSlots;
    let peers = new Map<string, PeerView>();
    let known: Lease | undefined;
    let live = false;
    let members: readonly string[] = [];
    let overdue = new Set<number>();
    const handoffs = { gained: 0, released: 0 };
    let stopping = false;
    let emitted: ShardState | undefined;
    let pending: Subscription | undefined;
    let inFlight: Subscription | undefined;
    let deadline: Subscription | undefined;
    /** What each unreadable peer was last reported for (Lease name → reason): said once per reason, not at every renewal. */
    const unreadableSeen = new Map<string, string>();
    /** Stale Leases being deleted, and (after a failed try) when one may be tried again. */
    const collecting = new Map<string, Subscription>();
    const retryCollectAt = new Map<string, number>();

    const emit = (): void => {
      const next: ShardState = { live, members, active: state.active, draining: new Set(state.draining.keys()), overdue, handoffs: { ...handoffs } };
      if (
        emitted !== undefined &&
        emitted.live === next.live &&
        emitted.members.join('\u0000') === next.members.join('\u0000') &&
        sameSet(emitted.active, next.active) &&
        sameSet(emitted.draining, next.draining) &&
        sameSet(emitted.overdue, next.overdue)
      ) {
        return;
      }
      emitted = next;
      subscriber.next(next);
    };

    const dropAll = (reason: string): void => {
      deadline?.unsubscribe();
      deadline = undefined;
      inFlight?.unsubscribe();
      inFlight = undefined;
      const had = announced(state).size;
      if (live || had > 0) logger.warn({ ...fields, reason, slots: had }, 'sharding: dropped every slot');
      handoffs.released += state.active.size + state.draining.size;
      live = false;
      state = noSlots;
      overdue = new Set();
      emit();
    };

    const scheduleNext = (): void => {
      if (subscriber.closed || stopping) return;
      const wait = live ? retryPeriod : retryPeriod * (1 + config.random() * leaderElectionJitterFactor);
      pending = scheduler.schedule(tick, wait);
    };

    const onListed = (leases: readonly Lease[], written: ReadonlySet<number>): void => {
      const now = scheduler.now();
      const others = leases.filter((lease) => lease.metadata?.name !== config.leaseName);
      peers = observePeers(peers, others, now, config.slots);
      for (const [name, peer] of peers) {
        if (peer.unreadable === undefined) unreadableSeen.delete(name);
        else if (unreadableSeen.get(name) !== peer.unreadable) {
          unreadableSeen.set(name, peer.unreadable);
          logger.error({ ...fields, peer: peer.identity, reason: peer.unreadable }, 'sharding: a member announces slots this replica cannot read; taking it to hold them all');
        }
      }
      const before = state;
      const live = livePeers(peers, now);
      const decision = decide(state, { self: config.identity, written, live, slots: config.slots, now, assign });
      state = decision.state;
      if (decision.members.join('\u0000') !== members.join('\u0000')) logger.info({ ...fields, members: decision.members }, 'sharding: members changed');
      members = decision.members;
      const gained = [...state.active].filter((slot) => !before.active.has(slot) && !before.draining.has(slot));
      handoffs.gained += gained.length;
      if (gained.length > 0) logger.info({ ...fields, slots: formatSlots(gained) }, 'sharding: gained slots');
      emit();
      for (const name of unreadableSeen.keys()) if (!peers.has(name)) unreadableSeen.delete(name);
      collectStale(others, new Set(live), now);
    };

    /**
     * Deletes the Leases seen unchanged for `collectAfter` that no longer count as live (a peer's
     * own lease duration may be longer than ours); each member may try, the preconditions and a
     * 404 settle races.
     */
    const collectStale = (others: readonly Lease[], live: ReadonlySet<PeerView>, now: number): void => {
      for (const lease of others) {
        const name = lease.metadata?.name;
        const peer = name === undefined ? undefined : peers.get(name);
        if (name === undefined || peer === undefined || live.has(peer) || collecting.has(name)) continue;
        if (peer.observedTime + config.collectAfter > now || (retryCollectAt.get(name) ?? 0) > now) continue;
        const stale = { lease: `${config.namespace}/${name}`, holder: peer.identity };
        let ended = false;
        const done = (): void => {
          ended = true;
          collecting.delete(name);
        };
        const deleting = config.client
          .delete(lease)
          .pipe(timeout({ first: renewDeadline, scheduler }))
          .subscribe({
            complete: () => {
              done();
              retryCollectAt.delete(name);
              logger.info({ ...fields, stale, unchangedMs: now - peer.observedTime }, 'sharding: deleted a member Lease unchanged for collectAfter');
            },
            error: (err: unknown) => {
              done();
              if (isNotFound(err) || isConflict(err)) {
                // Gone already (another member collected it), or written since: nothing to do.
                retryCollectAt.delete(name);
                return;
              }
              retryCollectAt.set(name, scheduler.now() + config.collectAfter);
              logger.warn({ ...fields, stale, err: err instanceof Error ? err.message : String(err) }, 'sharding: could not delete a stale member Lease; trying again after collectAfter');
            },
          });
        // An answer given during subscribe (an in-process server) has ended it already.
        if (!ended) collecting.set(name, deleting);
      }
      for (const name of retryCollectAt.keys()) if (!peers.has(name)) retryCollectAt.delete(name);
    };

    function tick(): void {
      pending = undefined;
      const drained = releaseDrained(state, config.busy, scheduler.now(), config.gracePeriod);
      state = drained.state;
      overdue = new Set(drained.overdue);
      handoffs.released += drained.released.length;
      if (drained.released.length > 0) logger.info({ ...fields, slots: formatSlots(drained.released) }, 'sharding: released slots');
      emit();
      const written = new Set(state.claiming);
      const sentAt = scheduler.now();
      inFlight = writeOwn(config, known, announced(state), true)
        .pipe(
          mergeMap((lease) => {
            if (scheduler.now() - sentAt >= renewDeadline) throw new Error('the write of the Lease succeeded only after the renew deadline');
            known = lease;
            if (!live) logger.info({ ...fields }, 'sharding: joined');
            live = true;
            deadline?.unsubscribe();
            deadline = scheduler.schedule(() => {
              dropAll(`no renewal succeeded within the renew deadline (${renewDeadline} ms)`);
              scheduleNext();
            }, sentAt + renewDeadline - scheduler.now());
            return config.client.list(config.namespace, `${shardControllerLabel}=${config.label}`);
          }),
          timeout({ first: renewDeadline, scheduler }),
        )
        .subscribe({
          next: (leases) => onListed(leases, written),
          error: (err: unknown) => {
            inFlight = undefined;
            // Another wrote it (409): read it afresh.
            if (isConflict(err)) known = undefined;
            if (isNotFound(err)) {
              // Deleted (collected as stale while this replica was away, or by hand): the others have
              // seen no slots of it since, and may hold them now. Start afresh, as a new member.
              known = undefined;
              dropAll('its Lease is gone (deleted)');
            }
            logger.debug({ ...fields, err: err instanceof Error ? err.message : String(err) }, 'sharding: a tick failed');
            scheduleNext();
          },
          complete: () => {
            inFlight = undefined;
            scheduleNext();
          },
        });
    }

    /** Gives the Lease up: one write over the Lease last seen, bounded by the renew deadline. */
    const release = (): Observable<unknown> => {
      const lease = known;
      if (lease === undefined) return of(undefined);
      return config.client.update(ownLease(config, lease, new Set(), false)).pipe(timeout({ first: renewDeadline, scheduler }));
    };

    emit();
    tick();
    const stopSubscription =
      options.stop === undefined
        ? undefined
        : from(options.stop)
            .pipe(take(1))
            .subscribe(() => {
              stopping = true;
              pending?.unsubscribe();
              dropAll('stopping');
              logger.info({ ...fields }, 'sharding: leaving');
              release().subscribe({
                error: (err: unknown) => {
                  logger.warn({ ...fields, err: err instanceof Error ? err.message : String(err) }, 'sharding: giving the Lease up failed; it expires in its own time');
                  subscriber.complete();
                },
                complete: () => subscriber.complete(),
              });
            });
    return () => {
      stopSubscription?.unsubscribe();
      pending?.unsubscribe();
      inFlight?.unsubscribe();
      deadline?.unsubscribe();
      for (const deleting of collecting.values()) deleting.unsubscribe();
      if (!stopping && known !== undefined) {
        release().subscribe({ error: () => logger.debug({ ...fields }, 'sharding: giving the Lease up on unsubscribe failed') });
      }
    };
  });
}
