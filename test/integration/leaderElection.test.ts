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
    // Each of b's tries starts with a read of the lease: what it read, and when the answer reached it
    // (on the elector's own clock, in the tick its elector judges the lease by).
    const bReads: { t: number; holder: string | undefined; renewTime: string | undefined }[] = [];
    const b = replica('replica-b', server, scheduler, runs, errors, (client) => ({
      ...client,
      get: (namespace, name) =>
        client.get(namespace, name).pipe(tap((lease) => bReads.push({ t: scheduler.now(), holder: lease?.spec?.holderIdentity, renewTime: lease?.spec?.renewTime }))),
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
      let lastRenewTime: string | undefined;
      await waitFor(() => {
        const spec = stored()?.spec;
        if (spec?.holderIdentity === 'replica-a') {
          lastRenew = Date.parse(spec.renewTime ?? '');
          lastRenewTime = spec.renewTime;
        }
        return b.last()?.leading === true;
      }, 'replica-b to take over');
      const takeover = b.states.find(([, s]) => s.leading)![0];

      // a stopped leading on its own, at its renew deadline, before b began.
      const aStopped = a.states.find(([at, s]) => at > lastRenew && !s.leading);
      expect(aStopped, 'replica-a stopped leading').to.not.equal(undefined);
      expect(aStopped![0]).to.be.lessThan(takeover);
      // Not before the lease expired, and then, in the lease's own terms rather than in milliseconds
      // (a busy machine stretches those, not this): the lease expires for b leaseDuration after b
      // first read a's last renewal, and b takes it on its first try after that, not a later one.
      expect(takeover - lastRenew).to.be.at.least(leaseDuration);
      const seen = bReads.find((r) => r.holder === 'replica-a' && r.renewTime === lastRenewTime);
      expect(seen, `b read a's last renewal (${lastRenewTime ?? '?'})`).to.not.equal(undefined);
      const expired = seen!.t + leaseDuration;
      expect(takeover).to.be.above(expired);
      // At most the one that took it. (The clock moves in whole real ms: a read within one of the
      // expiry may fall on either side.)
      const wasted = bReads.filter((r) => r.t > expired + factor && r.t <= takeover);
      expect(wasted.length, `b's tries after the lease expired in its eyes, up to the takeover (ms after expiry): ${wasted.map((r) => r.t - expired).join(', ')}`).to.be.at.most(1);

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
