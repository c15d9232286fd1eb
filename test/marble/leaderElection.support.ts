import type { TestScheduler } from 'rxjs/testing';
import { inMemoryLeaseClient, type InMemoryLeaseClient } from 'rxkube/testing';
import { testScheduler } from '../support/objects.js';
import { silentLogger, leaderElection } from 'rxkube';
import type { LeaderElectionOptions, LeaderState } from '../../src/sinks/leader/leaderElection.js';
import type { LeaseClient } from '../../src/sinks/leader/leaseClient.js';
import type { Lease } from '../../src/sinks/leader/leaseRecord.js';

/** client-go's defaults, the ones every test here runs with unless it says otherwise. */
export const retryPeriod = 2_000;
export const renewDeadline = 10_000;
export const leaseDuration = 15_000;

export type StateLog = Array<[number, LeaderState]>;

export const leading = (holder: string): LeaderState => ({ leading: true, holder });
export const following = (holder: string | undefined): LeaderState => ({ leading: false, holder });

/** Runs `work` at virtual time `at` (ms). */
export function at(scheduler: TestScheduler, time: number, work: () => void): void {
  scheduler.schedule(work, time - scheduler.now());
}

/**
 * Subscribes an elector on `default/lock` from `from` to `until` (virtual
 * ms) and logs what it emits with the time; jitter 0 unless overridden, so
 * a candidate tries exactly every retryPeriod.
 */
export function campaign(
  scheduler: TestScheduler,
  client: LeaseClient,
  identity: string,
  from: number,
  until: number,
  extra: Partial<LeaderElectionOptions> = {},
): StateLog {
  const log: StateLog = [];
  at(scheduler, from, () => {
    const subscription = leaderElection({
      client,
      lease: 'default/lock',
      identity,
      scheduler,
      random: () => 0,
      logger: silentLogger,
      ...extra,
    }).subscribe({
      next: (state) => log.push([scheduler.now(), state]),
      // The elector never ends on its own: an end shows up in the log, so
      // every comparison of logs would fail on it.
      error: (err: unknown) => log.push([scheduler.now(), { leading: false, holder: `<error: ${String(err)}>` }]),
      complete: () => log.push([scheduler.now(), { leading: false, holder: '<complete>' }]),
    });
    at(scheduler, until, () => subscription.unsubscribe());
  });
  return log;
}

export function heldBy(holder: string, spec: Partial<NonNullable<Lease['spec']>> = {}): Lease {
  return {
    metadata: { namespace: 'default', name: 'lock' },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: 15,
      acquireTime: '2024-05-01T10:00:00.000000Z',
      renewTime: '2024-05-01T10:00:00.000000Z',
      leaseTransitions: 3,
      ...spec,
    },
  };
}

/**
 * Runs a scenario in virtual time on a fresh in-memory lease store and
 * returns what `body` returned, read after the run: logs and samples fill
 * in as the scheduler flushes.
 */
export function virtually<T>(
  body: (scheduler: TestScheduler, client: InMemoryLeaseClient) => T,
  latency?: number | (() => number),
): T {
  const scheduler = testScheduler();
  let result: T | undefined;
  scheduler.run(() => {
    result = body(scheduler, inMemoryLeaseClient({ scheduler, latency }));
  });
  return result as T;
}

/** The value of `read()` at virtual time `time` (after what else runs then was scheduled before). */
export function sample<T>(scheduler: TestScheduler, time: number, read: () => T): { value?: T } {
  const box: { value?: T } = {};
  at(scheduler, time, () => (box.value = read()));
  return box;
}
