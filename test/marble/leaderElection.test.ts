import { expect } from 'chai';
import { Registry } from 'prom-client';
import { of } from 'rxjs';
import { leaderMetrics } from 'rxkube';
import { type LeaderMetrics } from '../../src/sinks/metrics/leaderMetrics.js';
import { kubeMicroTime } from '../../src/util/time.js';
import { pausable } from 'rxkube/testing';
import { at, campaign, following, heldBy, leading, sample, virtually } from './leaderElection.support.js';

const spec = (lease: { spec?: object } | undefined): object | undefined => lease?.spec;

describe('leaderElection', () => {
  describe('acquiring', () => {
    it('creates a missing lease and leads at once, writing the record as client-go does', () => {
      const { log, lease } = virtually((ts, client) => ({
        log: campaign(ts, client, 'a', 0, 1_000),
        lease: sample(ts, 500, () => client.lease('default', 'lock')),
      }));
      expect(log).to.deep.equal([[0, leading('a')]]);
      expect(spec(lease.value)).to.deep.equal({
        holderIdentity: 'a',
        leaseDurationSeconds: 15,
        acquireTime: '1970-01-01T00:00:00.000000Z',
        renewTime: '1970-01-01T00:00:00.000000Z',
        leaseTransitions: 0,
      });
    });

    it('takes a lease nobody holds, counting one more transition', () => {
      const { log, lease } = virtually((ts, client) => {
        client.put(heldBy('', { leaseTransitions: 7 }));
        return {
          log: campaign(ts, client, 'b', 0, 1_000),
          lease: sample(ts, 500, () => client.lease('default', 'lock')),
        };
      });
      expect(log).to.deep.equal([
        [0, following(undefined)],
        [0, leading('b')],
      ]);
      expect(spec(lease.value)).to.deep.include({ holderIdentity: 'b', leaseTransitions: 8 });
    });

    it('follows a holder that keeps renewing, and never leads', () => {
      const { a, b } = virtually((ts, client) => ({
        a: campaign(ts, client, 'a', 0, 120_000),
        b: campaign(ts, client, 'b', 100, 120_000, { releaseOnCancel: false }),
      }));
      expect(a).to.deep.equal([[0, leading('a')]]);
      expect(b).to.deep.equal([[100, following('a')]]);
    });

    it('takes over a silent holder only leaseDuration after it first saw the record, whatever the timestamps in the Lease say', () => {
      // One lease renewed "in the future", one "long ago": both are judged
      // from when this replica saw them, so both are taken at the same time.
      for (const renewTime of ['2999-01-01T00:00:00.000000Z', '2000-01-01T00:00:00.000000Z']) {
        const { log, lease } = virtually((ts, client) => {
          client.put(heldBy('x', { renewTime }));
          return {
            log: campaign(ts, client, 'b', 0, 20_000, { releaseOnCancel: false }),
            lease: sample(ts, 19_000, () => client.lease('default', 'lock')),
          };
        });
        // Seen at 0; tries every 2 s; 14 000 is still within the 15 s, 16 000 is not.
        expect(log, renewTime).to.deep.equal([
          [0, following('x')],
          [16_000, leading('b')],
        ]);
        expect(spec(lease.value)).to.deep.equal({
          holderIdentity: 'b',
          leaseDurationSeconds: 15,
          acquireTime: kubeMicroTime(16_000),
          renewTime: kubeMicroTime(18_000),
          leaseTransitions: 4,
        });
      }
    });

    it('restarts the wait when it sees the record change', () => {
      const log = virtually((ts, client) => {
        client.put(heldBy('x'));
        // The holder renews once more at 7 s and then goes silent.
        at(ts, 7_000, () => client.put(heldBy('x', { renewTime: '2024-05-01T10:00:07.000000Z' })));
        return campaign(ts, client, 'b', 0, 30_000, { releaseOnCancel: false });
      });
      // The change is seen at the try of 8 s; 8 s + 15 s = 23 s, next try 24 s.
      expect(log).to.deep.equal([
        [0, following('x')],
        [24_000, leading('b')],
      ]);
    });

    it('reads the expiry from leaseDurationSeconds in the lease, not from its own leaseDuration', () => {
      const log = virtually((ts, client) => {
        client.put(heldBy('x', { leaseDurationSeconds: 5 }));
        return campaign(ts, client, 'b', 0, 20_000, { releaseOnCancel: false });
      });
      expect(log).to.deep.equal([
        [0, following('x')],
        [6_000, leading('b')],
      ]);
    });

    it('spreads a candidate’s tries over retryPeriod × (1 + U[0, 1.2))', () => {
      const takeover = (random: number): number | undefined => {
        const log = virtually((ts, client) => {
          client.put(heldBy('x'));
          return campaign(ts, client, 'b', 0, 30_000, { random: () => random, releaseOnCancel: false });
        });
        return log.find(([, state]) => state.leading)?.[0];
      };
      expect(takeover(0)).to.equal(16_000); // tries every 2 000
      expect(takeover(0.5)).to.equal(16_000); // every 3 200: …, 12 800, 16 000
      expect(takeover(0.75)).to.equal(15_200); // every 3 800: …, 11 400, 15 200
    });

    it('lets exactly one of two candidates racing for a missing lease win; the other follows without an error', () => {
      // 10 ms each way: both read "not found" before either create lands.
      const { a, b } = virtually(
        (ts, client) => ({ a: campaign(ts, client, 'a', 0, 10_000), b: campaign(ts, client, 'b', 0, 10_000) }),
        10,
      );
      expect(a).to.deep.equal([[40, leading('a')]]);
      // b's create lost (409 AlreadyExists); its next try, 2 s later, reads a's lease.
      expect(b).to.deep.equal([[2_060, following('a')]]);
    });
  });

  describe('leading', () => {
    it('renews every retryPeriod with one write, keeping acquireTime and the transition count', () => {
      const { log, lease, calls } = virtually((ts, client) => ({
        log: campaign(ts, client, 'a', 0, 10_000),
        lease: sample(ts, 9_000, () => client.lease('default', 'lock')),
        calls: sample(ts, 9_000, () => ({ ...client.calls })),
      }));
      expect(log).to.deep.equal([[0, leading('a')]]);
      expect(spec(lease.value)).to.deep.include({
        holderIdentity: 'a',
        acquireTime: kubeMicroTime(0),
        renewTime: kubeMicroTime(8_000),
        leaseTransitions: 0,
      });
      // The first try reads and creates; the renewals at 2, 4, 6, 8 s are one optimistic update each.
      expect(calls.value).to.deep.equal({ get: 1, create: 1, update: 4 });
    });

    it('stops leading at once when renewals fail for renewDeadline after the last one that succeeded, and leads again once it can renew', () => {
      const log = virtually((ts, client) => {
        const cut = pausable(client);
        at(ts, 5_000, () => cut.pause('fail'));
        at(ts, 19_000, () => cut.resume());
        return campaign(ts, cut.client, 'a', 0, 30_000);
      });
      // Last success sent at 4 s: out at 14 s. Nobody else wrote meanwhile,
      // so the lease is still its own and the try at 20 s takes it back.
      expect(log).to.deep.equal([
        [0, leading('a')],
        [14_000, following('a')],
        [20_000, leading('a')],
      ]);
    });

    it('abandons a renewal that hangs and stops leading at the deadline all the same', () => {
      const { log, before, after } = virtually((ts, client) => {
        const cut = pausable(client);
        const log = campaign(ts, cut.client, 'a', 0, 40_000);
        at(ts, 5_000, () => cut.pause('hang'));
        const before = sample(ts, 30_000, () => client.calls.update);
        at(ts, 30_000, () => cut.resume());
        return { log, before, after: sample(ts, 30_000, () => client.calls.update) };
      });
      expect(log).to.deep.equal([
        [0, leading('a')],
        [14_000, following('a')],
        // The try of 28 s, held by the pause, goes through on resume.
        [30_000, leading('a')],
      ]);
      // The renewal hung at 6 s and the tries abandoned at their deadline were
      // cancelled, not queued: only the one try still waiting writes on resume.
      expect(before.value).to.equal(2);
      expect(after.value).to.equal(3);
    });

    it('stops leading as soon as it reads another holder in the lease', () => {
      const log = virtually((ts, client) => {
        at(ts, 5_000, () => client.put(heldBy('x')));
        return campaign(ts, client, 'a', 0, 10_000);
      });
      // The renewal at 6 s conflicts, the re-read shows x.
      expect(log).to.deep.equal([
        [0, leading('a')],
        [6_000, following('x')],
      ]);
    });

    it('does not lead on a write that answers only at the renew deadline of its try', () => {
      const log = virtually((ts, client) => {
        client.put(heldBy(''));
        const cut = pausable(client);
        cut.pause('hang');
        // The first try's read is held until 10 s, its deadline: read and
        // write then go through at once, too late to lead on.
        at(ts, 10_000, () => cut.resume());
        return campaign(ts, cut.client, 'a', 0, 11_000);
      });
      expect(log).to.deep.equal([
        [10_000, following(undefined)],
        [10_000, following('a')],
      ]);
    });

    it('hands over: when the leader cannot renew, the other takes over only after the leader stopped', () => {
      const { a, b } = virtually((ts, client) => {
        const cutA = pausable(client);
        at(ts, 5_000, () => cutA.pause('fail'));
        at(ts, 30_000, () => cutA.resume());
        return { a: campaign(ts, cutA.client, 'a', 0, 40_000), b: campaign(ts, client, 'b', 1_000, 40_000) };
      });
      // a's last renewal: sent at 4 s (out at 14 s), seen by b at 5 s (taken at 21 s).
      expect(a).to.deep.equal([
        [0, leading('a')],
        [14_000, following('a')],
        [30_000, following('b')],
      ]);
      expect(b).to.deep.equal([
        [1_000, following('a')],
        [21_000, leading('b')],
      ]);
    });
  });

  describe('stopping', () => {
    it('releases the lease on unsubscribe as client-go does, so another takes over at its next try', () => {
      const { b, lease } = virtually((ts, client) => {
        campaign(ts, client, 'a', 0, 5_000);
        return {
          b: campaign(ts, client, 'b', 500, 10_000),
          lease: sample(ts, 5_001, () => client.lease('default', 'lock')),
        };
      });
      expect(spec(lease.value)).to.deep.equal({
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: kubeMicroTime(5_000),
        renewTime: kubeMicroTime(5_000),
        leaseTransitions: 0,
      });
      // Without the release b would wait until 4.5 s + 15 s.
      expect(b).to.deep.equal([
        [500, following('a')],
        [6_500, following(undefined)],
        [6_500, leading('b')],
      ]);
    });

    it('on `stop`, steps down, releases the lease and completes once the release is answered', () => {
      // 10 ms each way: a reads and creates the lease by 40; its release, sent at 5 000, reaches the store at 5 010 and is answered at 5 020.
      const { a, b, lease } = virtually((ts, client) => {
        const stop = ts.createHotObservable('5000ms a');
        return {
          a: campaign(ts, client, 'a', 0, 60_000, { stop }),
          b: campaign(ts, client, 'b', 500, 60_000),
          lease: sample(ts, 5_015, () => client.lease('default', 'lock')),
        };
      }, 10);
      expect(a).to.deep.equal([
        [40, leading('a')],
        [5_000, following('a')],
        [5_020, { leading: false, holder: '<complete>' }],
      ]);
      expect(spec(lease.value)).to.deep.include({ holderIdentity: '', leaseDurationSeconds: 1 });
      // b tries at 500, 2 520, 4 540 and 6 560 (2 s after each try ends): the last finds the lease free and takes it by 6 600.
      expect(b.at(-1)).to.deep.equal([6_600, leading('b')]);
    });

    it('on `stop`, completes at once when it does not hold the lease, writing nothing', () => {
      const { log, calls } = virtually((ts, client) => {
        client.put(heldBy('x'));
        const stop = ts.createHotObservable('3000ms a');
        const log = campaign(ts, client, 'b', 0, 60_000, { stop });
        return { log, calls: sample(ts, 3_000, () => client.calls.update + client.calls.create) };
      });
      expect(log).to.deep.equal([
        [0, following('x')],
        [3_000, { leading: false, holder: '<complete>' }],
      ]);
      expect(calls.value).to.equal(0);
    });

    it('given a `stop` that has emitted already, completes at once and never campaigns', () => {
      const { log, calls } = virtually((ts, client) => {
        const log = campaign(ts, client, 'a', 0, 60_000, { stop: of(1) });
        return { log, calls: sample(ts, 10_000, () => client.calls.get + client.calls.update + client.calls.create) };
      });
      expect(log).to.deep.equal([
        [0, following(undefined)],
        [0, { leading: false, holder: '<complete>' }],
      ]);
      expect(calls.value).to.equal(0);
    });

    it('errors with the error of its `stop`, and releases the lease it held', () => {
      const { log, lease } = virtually((ts, client) => {
        const stop = ts.createColdObservable('3000ms #', undefined, new Error('stop broke'));
        return { log: campaign(ts, client, 'a', 0, 60_000, { stop }), lease: sample(ts, 3_001, () => client.lease('default', 'lock')) };
      });
      expect(log).to.deep.equal([
        [0, leading('a')],
        [3_000, { leading: false, holder: '<error: Error: stop broke>' }],
      ]);
      expect(spec(lease.value)).to.deep.include({ holderIdentity: '', leaseDurationSeconds: 1 });
    });

    it('on `stop` with releaseOnCancel false, steps down and completes without a write', () => {
      const { log, lease } = virtually((ts, client) => {
        const stop = ts.createHotObservable('3000ms a');
        return { log: campaign(ts, client, 'a', 0, 60_000, { stop, releaseOnCancel: false }), lease: sample(ts, 3_001, () => client.lease('default', 'lock')) };
      });
      expect(log).to.deep.equal([
        [0, leading('a')],
        [3_000, following('a')],
        [3_000, { leading: false, holder: '<complete>' }],
      ]);
      expect(spec(lease.value)).to.deep.include({ holderIdentity: 'a' });
    });

    it('leaves the lease to expire when releaseOnCancel is false', () => {
      const { b, lease } = virtually((ts, client) => {
        campaign(ts, client, 'a', 0, 5_000, { releaseOnCancel: false });
        return {
          b: campaign(ts, client, 'b', 500, 30_000, { releaseOnCancel: false }),
          lease: sample(ts, 5_001, () => client.lease('default', 'lock')),
        };
      });
      expect(spec(lease.value)).to.deep.include({ holderIdentity: 'a' });
      // a's last renewal (4 s) seen by b at 4.5 s: free from 19.5 s, taken at the try of 20.5 s.
      expect(b).to.deep.equal([
        [500, following('a')],
        [20_500, leading('b')],
      ]);
    });

    it('releases nothing when it does not hold the lease', () => {
      const lease = virtually((ts, client) => {
        client.put(heldBy('x'));
        campaign(ts, client, 'b', 0, 5_000);
        return sample(ts, 6_000, () => client.lease('default', 'lock'));
      });
      expect(spec(lease.value)).to.deep.include({ holderIdentity: 'x' });
    });

    it('never clears a lease written since it last saw it, not even by a new subscription with its own identity', () => {
      // 10 ms each way: the new subscription's takeover lands at 5 000,
      // the old one's release (sent at 5 000) reaches the store at 5 010.
      const { second, lease } = virtually((ts, client) => {
        campaign(ts, client, 'a', 0, 5_000);
        return {
          second: campaign(ts, client, 'a', 4_970, 10_000, { releaseOnCancel: false }),
          lease: sample(ts, 5_100, () => client.lease('default', 'lock')),
        };
      }, 10);
      expect(second).to.deep.equal([
        [4_990, following('a')],
        [5_010, leading('a')],
      ]);
      expect(spec(lease.value)).to.deep.include({ holderIdentity: 'a', leaseDurationSeconds: 15 });
    });

    it('stops all its timers on unsubscribe: nothing more is sent', () => {
      const { before, after } = virtually((ts, client) => {
        campaign(ts, client, 'a', 0, 5_000, { releaseOnCancel: false });
        const total = (): number => client.calls.get + client.calls.update + client.calls.create;
        return { before: sample(ts, 5_000, total), after: sample(ts, 60_000, total) };
      });
      expect(before.value).to.equal(4);
      expect(after.value).to.equal(before.value);
    });
  });

  describe('metrics', () => {
    it('sets leader_election_master_status for its lease as it leads and stops, and removes the series when unsubscribed', async () => {
      const registry = new Registry();
      const real = leaderMetrics(registry);
      const calls = virtually((ts, client) => {
        const calls: Array<[number, string, boolean]> = [];
        const metrics: LeaderMetrics = {
          registry,
          setLeader: (name, isLeader) => {
            calls.push([ts.now(), name, isLeader]);
            real.setLeader(name, isLeader);
          },
          remove: (name) => {
            calls.push([ts.now(), `remove ${name}`, false]);
            real.remove(name);
          },
        };
        const cut = pausable(client);
        campaign(ts, cut.client, 'a', 0, 20_000, { metrics });
        at(ts, 5_000, () => cut.pause('fail'));
        return calls;
      });
      expect(calls).to.deep.equal([
        [0, 'lock', false],
        [0, 'lock', true],
        [14_000, 'lock', false],
        [20_000, 'remove lock', false],
      ]);
      expect(await registry.metrics()).to.not.include('name="lock"');
    });

    it('labels the series with the name given', () => {
      const names = virtually((ts, client) => {
        const names: string[] = [];
        const metrics: LeaderMetrics = {
          registry: new Registry(),
          setLeader: (name) => names.push(name),
          remove: (name) => names.push(name),
        };
        campaign(ts, client, 'a', 0, 1_000, { metrics, name: 'apps-controller' });
        return names;
      });
      expect(new Set(names)).to.deep.equal(new Set(['apps-controller']));
    });
  });
});
