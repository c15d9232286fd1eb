import { expect } from 'chai';
import { concatMap, EMPTY, from, mergeMap, Observable, type SchedulerLike, type Subscription, switchMap, tap, timer } from 'rxjs';
import { silentLogger, leaderElection } from 'rxkube';
import { type LeaderState } from '../../src/sinks/leader/leaderElection.js';
import { leaseClient, type LeaseClient } from '../../src/sinks/leader/leaseClient.js';
import type { Lease } from '../../src/sinks/leader/leaseRecord.js';
import { pausable, startApiServer, type ApiServer } from 'rxkube/testing';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';

const leases = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: 'default' };
const leaseDuration = 15_000;
const retryPeriod = 2_000;
/** Scheduler ms per real ms: client-go's 15 s lease lasts 750 real ms. */
const factor = 20;
const microTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

interface Run {
  who: string;
  from: number;
  to: number;
}

/**
 * One replica of a controller: an elector over real HTTP (through a client
 * the test can pause) gating a fake reconcile that runs 500 ms (dilated)
 * every second while leading, and is cut short the moment leading ends.
 */
function replica(
  identity: string,
  server: ApiServer,
  scheduler: SchedulerLike,
  runs: Run[],
  errors: unknown[],
  wrap: (client: LeaseClient) => LeaseClient = (client) => client,
) {
  const cut = pausable(wrap(leaseClient(server.kubeConfig())));
  const states: Array<[number, LeaderState]> = [];
  const reconcile = (): Observable<never> =>
    new Observable<never>((subscriber) => {
      const from = scheduler.now();
      let done = false;
      const work = scheduler.schedule(() => {
        done = true;
        runs.push({ who: identity, from, to: scheduler.now() });
        subscriber.complete();
      }, 500);
      return () => {
        work.unsubscribe();
        if (!done) runs.push({ who: identity, from, to: scheduler.now() });
      };
    });
  const subscription: Subscription = leaderElection({
    client: cut.client,
    lease: 'default/controller',
    identity,
    scheduler,
    logger: silentLogger,
    leaseDuration,
    retryPeriod,
  })
    .pipe(
      tap((state) => states.push([scheduler.now(), state])),
      switchMap((state) => (state.leading ? timer(0, 1_000, scheduler).pipe(concatMap(reconcile)) : EMPTY)),
    )
    .subscribe({ error: (err: unknown) => errors.push(err) });
  const last = (): LeaderState | undefined => states[states.length - 1]?.[1];
  return { identity, cut, states, subscription, last };
}

describe('leaderElection against the embedded API server', () => {
  let server: ApiServer;

  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
  });

  afterEach(async () => {
    await server.close();
  });

  const stored = (): Lease | undefined => server.snapshot(leases).find((l) => l.metadata.name === 'controller') as Lease | undefined;

  it('two replicas: the leader’s renewals stop, the other takes over within the lease duration, and they never reconcile at once', async () => {
    const scheduler = dilatedScheduler(factor);
    const runs: Run[] = [];
    const errors: unknown[] = [];
    const a = replica('replica-a', server, scheduler, runs, errors);
    await waitFor(() => a.last()?.leading === true, 'replica-a to lead');
    // Each of b's tries starts with a read of the lease: when, on the elector's own clock.
    const bTries: number[] = [];
    const b = replica('replica-b', server, scheduler, runs, errors, (client) => ({
      ...client,
      get: (namespace, name) => {
        bTries.push(scheduler.now());
        return client.get(namespace, name);
      },
    }));
    try {
      await waitFor(() => b.last() !== undefined, 'replica-b to read the lease');
      expect(b.last()).to.deep.equal({ leading: false, holder: 'replica-a' });
      // Let a lead and renew for a while, reconciling.
      await waitFor(() => runs.filter((r) => r.who === 'replica-a').length >= 3, 'replica-a to reconcile');
      expect(stored()?.spec?.holderIdentity).to.equal('replica-a');

      a.cut.pause('hang');
      // A renewal already on its way may still land: watch the lease until b leads.
      let lastRenew = 0;
      await waitFor(() => {
        const spec = stored()?.spec;
        if (spec?.holderIdentity === 'replica-a') lastRenew = Date.parse(spec.renewTime ?? '');
        return b.last()?.leading === true;
      }, 'replica-b to take over');
      const takeover = b.states.find(([, s]) => s.leading)![0];

      // a stopped leading on its own, at its renew deadline, before b began.
      const aStopped = a.states.find(([at, s]) => at > lastRenew && !s.leading);
      expect(aStopped, 'replica-a stopped leading').to.not.equal(undefined);
      expect(aStopped![0]).to.be.lessThan(takeover);
      // Not before the lease expired in b's eyes, and, counted in b's own tries rather than in
      // milliseconds (a busy machine stretches those, not the count): b saw the last renewal on
      // its first try after it, so the lease expired for b at most one try later than
      // lastRenew + leaseDuration, and b took it on the try after that at the latest.
      expect(takeover - lastRenew).to.be.at.least(leaseDuration);
      const triesAfterExpiry = bTries.filter((t) => t >= lastRenew + leaseDuration && t <= takeover);
      expect(triesAfterExpiry.length, `b's tries after the lease's own expiry, up to the takeover: ${triesAfterExpiry.map((t) => t - lastRenew).join(', ')}`).to.be.within(1, 2);

      const lease = stored();
      expect(lease?.spec?.holderIdentity).to.equal('replica-b');
      expect(lease?.spec?.leaseTransitions).to.equal(1);
      expect(lease?.spec?.leaseDurationSeconds).to.equal(15);
      expect(lease?.spec?.acquireTime).to.match(microTime);
      expect(lease?.spec?.renewTime).to.match(microTime);

      await waitFor(() => runs.some((r) => r.who === 'replica-b'), 'replica-b to reconcile');
      a.cut.resume();
      await waitFor(() => a.last()?.holder === 'replica-b', 'replica-a to see replica-b lead');
      expect(a.last()).to.deep.equal({ leading: false, holder: 'replica-b' });
    } finally {
      a.subscription.unsubscribe();
      b.subscription.unsubscribe();
    }

    const overlaps = runs.flatMap((x) =>
      runs.filter((y) => x.who < y.who && x.from < y.to && y.from < x.to).map((y) => [x, y]),
    );
    expect(overlaps, 'reconciles of both replicas at once').to.deep.equal([]);
    expect(errors).to.deep.equal([]);
    expect(runs.filter((r) => r.who === 'replica-a').length).to.be.at.least(3);

    // b held the lease when unsubscribed: it gives it up for the next one at once.
    await waitFor(() => stored()?.spec?.holderIdentity === '', 'the lease to be released');
    expect(stored()?.spec).to.deep.include({ leaseDurationSeconds: 1, leaseTransitions: 1 });
  });

  it('a 409 from the API server is a lost race: of two replicas that both found no lease, one creates it and the other follows', async () => {
    const scheduler = dilatedScheduler(factor);
    const runs: Run[] = [];
    const errors: unknown[] = [];
    let bRead = false;
    // Order the race: a creates only once b has read "not found", b creates only once a leads.
    const a = replica('replica-a', server, scheduler, runs, errors, (client) => ({
      ...client,
      create: (lease) => from(waitFor(() => bRead, 'replica-b to read')).pipe(mergeMap(() => client.create(lease))),
    }));
    const b = replica('replica-b', server, scheduler, runs, errors, (client) => ({
      get: (namespace, name) => client.get(namespace, name).pipe(tap(() => (bRead = true))),
      update: (lease) => client.update(lease),
      create: (lease) =>
        from(waitFor(() => a.last()?.leading === true, 'replica-a to lead')).pipe(mergeMap(() => client.create(lease))),
    }));
    try {
      await waitFor(() => b.last()?.holder === 'replica-a', 'replica-b to follow replica-a');
      const creates = server.requestLog.filter((r) => r.verb === 'create' && r.resource === 'leases');
      expect(creates.map((r) => r.status)).to.deep.equal([201, 409]);
      expect(a.last()).to.deep.equal({ leading: true, holder: 'replica-a' });
      expect(b.last()).to.deep.equal({ leading: false, holder: 'replica-a' });
      expect(stored()?.spec).to.deep.include({ holderIdentity: 'replica-a', leaseTransitions: 0 });
      expect(errors).to.deep.equal([]);
    } finally {
      a.subscription.unsubscribe();
      b.subscription.unsubscribe();
    }
  });
});
