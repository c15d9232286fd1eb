import type { KubeConfig } from '@kubernetes/client-node';
import {
  asyncScheduler,
  catchError,
  EMPTY,
  from,
  ignoreElements,
  Observable,
  type ObservableInput,
  type SchedulerLike,
  Subscription,
  take,
  tap,
  timeout,
} from 'rxjs';
import { defaultLogger, type Logger } from '../../logger.js';
import type { LeaseObservation } from './leaseRecord.js';
import { splitKey, type RequestObserver } from '../../types.js';
import { isAlreadyExists, isConflict } from '../client/errors.js';
import { leaseClient, type LeaseClient } from './leaseClient.js';
import { releaseLease, tryAcquireOrRenew, type LeaseLock, type LeaseStep } from './leaseLock.js';

/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's
 * algorithm (`tools/leaderelection`), as an Observable: subscribing starts
 * campaigning, unsubscribing stops (and gives the lease up, see
 * `releaseOnCancel`). It emits `{ leading, holder }` whenever either
 * changes, the first time as soon as the lease has been read.
 *
 * The rules:
 * - Every `retryPeriod` (plus a random jitter of up to 1.2 × `retryPeriod`,
 *   client-go's `JitterFactor`) a candidate reads the lease. It takes it when
 *   nobody holds it or when the record has not changed for
 *   `leaseDurationSeconds` on this replica's own clock, counted from when it
 *   first saw that record: the timestamps written in the Lease are never
 *   compared with the local clock, so clock skew between replicas does not
 *   matter. Taking over counts one more `leaseTransitions`.
 * - The leader renews every `retryPeriod` (a write of `renewTime`, which
 *   every observer sees as a change of the record). Writes carry the
 *   resourceVersion read, so of two candidates racing for a free lease one
 *   wins and the other gets a 409, which is a lost race, not a fault.
 * - If no renewal succeeds within `renewDeadline` of the last one that did
 *   (counted from when that successful request was sent), the leader stops
 *   leading at once: it emits `leading: false` without waiting for the
 *   request in flight. Since `renewDeadline < leaseDuration`, it has stopped
 *   before any other replica can judge the lease expired. Stricter than
 *   client-go, whose deadline starts a `retryPeriod` after the last success.
 * - A leader that reads the lease and finds another holder stops leading at
 *   once (client-go would wait for its renew deadline).
 * - After losing the lease the elector campaigns again, so an Observable that
 *   stays subscribed recovers leadership when it can; client-go's `Run`
 *   returns instead and leaves the restart to the process.
 * - Each try (a read and a write) is abandoned after `renewDeadline`, so a
 *   request that hangs cannot stall the elector.
 *
 * - With `releaseOnCancel` (default), unsubscribing gives the lease up
 *   (empty holder, `leaseDurationSeconds: 1`, as client-go) so the next
 *   candidate takes it at its next try. It is one write conditional on the
 *   lease being exactly as this elector last saw it; if anything wrote since
 *   (even a new subscription under the same identity) the 409 leaves the
 *   lease alone, to expire in its own time. client-go re-reads and retries
 *   instead, which can clear a lease that a newer writer relies on. The
 *   release runs after the unsubscribe returns (one request, bounded by
 *   `renewDeadline`) and only logs its outcome.
 *
 * Gate work on `leading` and stop it as soon as `leading` turns false: that
 * is what makes "never two leaders at once" hold for the work itself. With
 * `releaseOnCancel`, unsubscribe only once the guarded work has stopped,
 * since another replica may start right after the release.
 *
 * `identity` should be unique per replica (client-go uses hostname + a
 * uuid). A replica restarted under the same identity finds the lease still
 * its own and resumes it at once, without waiting for it to expire. Two
 * subscriptions alive at once under one identity would both lead: the
 * Lease cannot tell them apart (in client-go neither).
 *
 * ```ts
 * leaderElection({ kubeConfig, lease: 'default/my-controller', identity: `${hostname()}_${randomUUID()}` })
 *   .pipe(switchMap(({ leading }) => (leading ? controller$ : EMPTY)))
 *   .subscribe();
 * ```
 */

export interface LeaderState {
  /** True while this replica holds the lease and has renewed it within the renew deadline. */
  readonly leading: boolean;
  /** The lease's holderIdentity as last observed; undefined when nobody holds it. */
  readonly holder: string | undefined;
}

/** Where the elector reports whether it leads: `leaderMetrics()` fits (`leader_election_master_status`). */
export interface LeaderStatusSink {
  /** This replica leads (or stands by for) the lease `name`. */
  setLeader(name: string, leading: boolean): void;
  /** The elector of `name` stopped. */
  remove(name: string): void;
}

/** Options of `leaderElection()`: which Lease, who this replica is, client-go's three durations, and where the lease calls go. */
export interface LeaderElectionOptions {
  /** Where the lease lives when no `client` is given. */
  kubeConfig?: KubeConfig;
  /** The calls on the lease (default: over HTTP with `kubeConfig`). */
  client?: LeaseClient;
  /** Told of every HTTP request to the lease (`rest_client_*` metrics), when no `client` is given. */
  requests?: RequestObserver;
  /** `namespace/name` of the Lease. */
  lease: string;
  /** This replica's name in `holderIdentity`; unique per replica. */
  identity: string;
  /** Ms, a whole number of seconds (the Lease stores seconds). Default 15,000. */
  leaseDuration?: number;
  /** Ms. Default 10,000. */
  renewDeadline?: number;
  /** Ms. Default 2,000. */
  retryPeriod?: number;
  /** Give the lease up on unsubscribe (or `stop`). Default true. */
  releaseOnCancel?: boolean;
  /**
   * When it first emits, the elector stops gracefully: it stops
   * campaigning, emits `leading: false` if it led, gives the lease up (with
   * `releaseOnCancel`) and completes once that write is answered, failed or
   * timed out (after `renewDeadline`). So a host that waits for completion
   * knows the lease is free for the next replica; an unsubscribe releases in
   * the background instead.
   */
  stop?: ObservableInput<unknown>;
  /** All waits and the clock (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /** Where acquiring, renewing and losing the lease are logged (default: pino to stderr). */
  logger?: Logger;
  /** Told whether this replica leads: `leaderMetrics()` sets `leader_election_master_status{name}`. */
  metrics?: LeaderStatusSink;
  /** The metric's `name` label. Default: the lease's name, as controller-runtime uses its election ID. */
  name?: string;
  /** Source of the acquire jitter, in [0, 1). Default `Math.random`. */
  random?: () => number;
}

/** client-go's `JitterFactor`: a candidate waits `retryPeriod × (1 + U[0, 1.2))` between tries. */
export const leaderElectionJitterFactor = 1.2;

export const leaderElectionDefaults = Object.freeze({
  leaseDuration: 15_000,
  renewDeadline: 10_000,
  retryPeriod: 2_000,
});

/** Thrown by `leaderElection` for options that cannot work; the message names the option. */
export class LeaderElectionConfigError extends Error {
  override readonly name = 'LeaderElectionConfigError';
}

interface Config {
  client: LeaseClient;
  namespace: string;
  leaseName: string;
  identity: string;
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
  releaseOnCancel: boolean;
  scheduler: SchedulerLike;
  /** Where the elector logs. */
  logger: Logger;
  metrics: LeaderStatusSink | undefined;
  name: string;
  random: () => number;
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function positive(value: number, option: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new LeaderElectionConfigError(`leaderElection: ${option} must be a positive number of ms, got ${String(value)}`);
  }
  return value;
}

function validate(options: LeaderElectionOptions): Config {
  if (options === null || typeof options !== 'object') {
    throw new LeaderElectionConfigError('leaderElection: options are required ({ lease, identity, ... })');
  }
  const { lease, identity } = options;
  if (typeof lease !== 'string' || lease === '') {
    throw new LeaderElectionConfigError('leaderElection: lease is required, as "namespace/name"');
  }
  let key: { namespace: string | undefined; name: string };
  try {
    key = splitKey(lease);
  } catch {
    throw new LeaderElectionConfigError(`leaderElection: lease "${lease}" is not of the form "namespace/name"`);
  }
  if (key.namespace === undefined) {
    throw new LeaderElectionConfigError(
      `leaderElection: lease "${lease}" has no namespace: Leases are namespaced, write "namespace/${lease}"`,
    );
  }
  if (typeof identity !== 'string' || identity === '') {
    throw new LeaderElectionConfigError('leaderElection: identity is required and must not be empty');
  }
  const leaseDuration = positive(options.leaseDuration ?? leaderElectionDefaults.leaseDuration, 'leaseDuration');
  const renewDeadline = positive(options.renewDeadline ?? leaderElectionDefaults.renewDeadline, 'renewDeadline');
  const retryPeriod = positive(options.retryPeriod ?? leaderElectionDefaults.retryPeriod, 'retryPeriod');
  if (leaseDuration % 1000 !== 0) {
    throw new LeaderElectionConfigError(
      `leaderElection: leaseDuration must be a whole number of seconds (the Lease stores leaseDurationSeconds), got ${leaseDuration} ms`,
    );
  }
  if (leaseDuration <= renewDeadline) {
    throw new LeaderElectionConfigError(
      `leaderElection: leaseDuration (${leaseDuration} ms) must be greater than renewDeadline (${renewDeadline} ms)`,
    );
  }
  if (renewDeadline <= leaderElectionJitterFactor * retryPeriod) {
    throw new LeaderElectionConfigError(
      `leaderElection: renewDeadline (${renewDeadline} ms) must be greater than retryPeriod × ${leaderElectionJitterFactor} (${leaderElectionJitterFactor * retryPeriod} ms)`,
    );
  }
  let client = options.client;
  if (client === undefined) {
    if (options.kubeConfig === undefined) {
      throw new LeaderElectionConfigError('leaderElection: pass a kubeConfig, or a client for the lease');
    }
    try {
      client = leaseClient(options.kubeConfig, options.requests);
    } catch (err) {
      throw new LeaderElectionConfigError(`leaderElection: cannot use the kubeConfig: ${describeError(err)}`);
    }
  }
  return {
    client,
    namespace: key.namespace,
    leaseName: key.name,
    identity,
    leaseDuration,
    renewDeadline,
    retryPeriod,
    releaseOnCancel: options.releaseOnCancel ?? true,
    scheduler: options.scheduler ?? asyncScheduler,
    logger: options.logger ?? defaultLogger({ part: 'leaderElection' }),
    metrics: options.metrics,
    name: options.name ?? key.name,
    random: options.random ?? Math.random,
  };
}

/** Campaigns for the lease while subscribed; see the rules above. Throws `LeaderElectionConfigError` for bad options. */
export function leaderElection(options: LeaderElectionOptions): Observable<LeaderState> {
  const config = validate(options);
  const { scheduler, identity, renewDeadline, retryPeriod, metrics, name } = config;
  const fields = { lease: `${config.namespace}/${config.leaseName}`, identity };
  const logger = config.logger;
  const lock: LeaseLock = {
    client: config.client,
    namespace: config.namespace,
    name: config.leaseName,
    identity,
    leaseDurationSeconds: config.leaseDuration / 1000,
    now: () => scheduler.now(),
  };

  return new Observable<LeaderState>((subscriber) => {
    let observed: LeaseObservation | undefined;
    let leading = false;
    let emitted: LeaderState | undefined;
    /** The next try, waiting its turn. */
    let pending: Subscription | undefined;
    /** The try in flight, with its timeout. */
    let inFlight: Subscription | undefined;
    /** Stepping down when no renewal succeeds in time. */
    let deadline: Subscription | undefined;

    /** Tells the metrics sink; one that throws ends the elector with an error that names it, never the event loop. */
    const report = (what: 'setLeader' | 'remove', call: (sink: LeaderStatusSink) => void): void => {
      if (metrics === undefined) return;
      try {
        call(metrics);
      } catch (err) {
        const error = new Error(`leaderElection: metrics.${what} threw: ${describeError(err)}`, { cause: err });
        // After the end (a teardown) there is no output left to tell.
        if (subscriber.closed) logger.error({ ...fields, err: error.message }, 'metrics sink failed');
        else subscriber.error(error);
      }
    };

    const emit = (): void => {
      const holder = observed === undefined || observed.record.holderIdentity === '' ? undefined : observed.record.holderIdentity;
      if (emitted !== undefined && emitted.leading === leading && emitted.holder === holder) return;
      if (emitted === undefined || emitted.leading !== leading) report('setLeader', (sink) => sink.setLeader(name, leading));
      emitted = { leading, holder };
      subscriber.next(emitted);
    };

    const stepDown = (reason: string): void => {
      deadline?.unsubscribe();
      deadline = undefined;
      if (!leading) return;
      leading = false;
      logger.warn({ ...fields, reason }, 'stopped leading');
      emit();
    };

    const scheduleNext = (): void => {
      if (subscriber.closed) return;
      // The leader renews on a fixed period; candidates spread out their tries.
      const wait = leading ? retryPeriod : retryPeriod * (1 + config.random() * leaderElectionJitterFactor);
      pending = scheduler.schedule(attempt, wait);
    };

    const onStep = (step: LeaseStep, sentAt: number): void => {
      observed = step.observation;
      const holder = observed.record.holderIdentity;
      if (step.type === 'acquired') {
        const left = sentAt + renewDeadline - scheduler.now();
        if (left <= 0) {
          // Too late to count: the deadline that protects others has passed.
          logger.warn({ ...fields }, 'a write of the lease succeeded only after the renew deadline');
        } else {
          if (!leading) logger.info({ ...fields }, 'acquired the lease: leading');
          leading = true;
          deadline?.unsubscribe();
          deadline = scheduler.schedule(() => {
            stepDown(`no renewal succeeded within the renew deadline (${renewDeadline} ms)`);
            // client-go's renew deadline also cancels the try in flight.
            if (inFlight !== undefined) {
              inFlight.unsubscribe();
              inFlight = undefined;
              scheduleNext();
            }
          }, left);
        }
      } else if (leading && holder !== identity) {
        stepDown(holder === '' ? 'the lease was released by someone else' : `the lease is held by "${holder}"`);
      }
      emit();
    };

    const onFailure = (err: unknown): void => {
      const entry = { ...fields, leading, err: describeError(err) };
      if (isConflict(err) || isAlreadyExists(err)) logger.debug(entry, 'lost a race for the lease');
      else logger.warn(entry, 'lease try failed');
    };

    function attempt(): void {
      pending = undefined;
      const sentAt = scheduler.now();
      const current = new Subscription();
      inFlight = current;
      const settle = (): void => {
        if (inFlight !== current) return;
        inFlight = undefined;
        current.unsubscribe();
        scheduleNext();
      };
      // The whole try, read and write, is bounded (not each request).
      current.add(
        scheduler.schedule(() => {
          if (inFlight !== current) return;
          onFailure(new Error(`no answer from the API server within ${renewDeadline} ms`));
          settle();
        }, renewDeadline),
      );
      current.add(
        tryAcquireOrRenew(lock, observed, (err) =>
          logger.debug({ ...fields, err: describeError(err) }, 'optimistic renewal failed: reading the lease'),
        ).subscribe({
          next: (step) => onStep(step, sentAt),
          error: (err: unknown) => {
            onFailure(err);
            settle();
          },
          complete: settle,
        }),
      );
    }

    /** Gives the lease up (with `releaseOnCancel`): one bounded write, whose outcome is only logged. */
    const release = (): Observable<never> =>
      !config.releaseOnCancel
        ? EMPTY
        : releaseLease(lock, observed).pipe(
            timeout({ first: renewDeadline, scheduler }),
            tap(() => logger.info({ ...fields }, 'released the lease')),
            catchError((err: unknown) => {
              logger.warn({ ...fields, err: describeError(err) }, 'could not release the lease');
              return EMPTY;
            }),
            ignoreElements(),
          );

    /** Stops campaigning: no try is pending or in flight, and this replica no longer leads. */
    const halt = (why: string): void => {
      pending?.unsubscribe();
      inFlight?.unsubscribe();
      inFlight = undefined;
      deadline?.unsubscribe();
      if (leading) logger.info({ ...fields }, `stopped leading: ${why}`);
      leading = false;
    };

    let released = false;
    subscriber.add(() => {
      halt('unsubscribed');
      report('remove', (sink) => sink.remove(name));
      if (!released) release().subscribe();
    });

    if (options.stop !== undefined) {
      subscriber.add(
        from(options.stop)
          .pipe(take(1))
          .subscribe({
            next: () => {
              halt('asked to stop');
              emit();
              released = true;
              subscriber.add(release().subscribe({ complete: () => subscriber.complete() }));
            },
            error: (err: unknown) => subscriber.error(err),
          }),
      );
    }
    // A stop that came at once (or an error) ended it already: it never campaigns.
    if (subscriber.closed || released) return;

    report('setLeader', (sink) => sink.setLeader(name, false));
    attempt();
  });
}
