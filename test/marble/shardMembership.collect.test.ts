import { expect } from 'chai';
import type { Subscription } from 'rxjs';
import { silentLogger } from 'rxkube';
import { isConflict, isNotFound } from '../../src/sinks/client/errors.js';
import type { Lease } from '../../src/sinks/leader/leaseRecord.js';
import type { ShardLeaseClient } from '../../src/sinks/leader/shardLeaseClient.js';
import { LeaderElectionConfigError } from '../../src/sinks/leader/leaderElection.js';
import { shardMembership, type ShardMembershipOptions, type ShardState } from '../../src/sinks/leader/shardMembership.js';
import { shardControllerLabel } from '../../src/sinks/leader/shardProtocol.js';
import { testScheduler } from '../support/objects.js';
import { virtualShardClient } from '../support/shardClients.js';
import { at } from './leaderElection.support.js';

const selector = `${shardControllerLabel}=sim`;
const collectAfter = 60_000;

/** A member Lease as a replica that died left it: held, never renewed again. */
function leftBehind(name: string): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { namespace: 'default', name, labels: { [shardControllerLabel]: 'sim' }, annotations: { 'rxkube.io/shard-slots': '0-31', 'rxkube.io/shard-slot-count': '32' } },
    spec: { holderIdentity: name, leaseDurationSeconds: 15, renewTime: '2026-12-01T00:00:00.000000Z', acquireTime: '2026-12-01T00:00:00.000000Z' },
  };
}

function member(client: ShardLeaseClient, identity: string, scheduler: ReturnType<typeof testScheduler>, states: ShardState[] = [], more: Partial<ShardMembershipOptions> = {}): Subscription {
  return shardMembership({
    client,
    namespace: 'default',
    controller: 'sim',
    identity,
    slots: 32,
    collectAfter,
    scheduler,
    random: () => 0,
    logger: silentLogger,
    ...more,
  }).subscribe((state) => states.push(state));
}

/** Records the names of the member Leases stored at `t`. */
function lookAt(ts: ReturnType<typeof testScheduler>, client: ShardLeaseClient, into: Array<{ t: number; names: string[] }>, t: number): void {
  at(ts, t, () => client.list('default', selector).subscribe((leases) => into.push({ t, names: leases.map((lease) => lease.metadata?.name ?? '?').sort() })));
}

describe('shardMembership: Leases left behind are collected', () => {
  it('deletes a member Lease seen unchanged for collectAfter, and never a live member’s or its own', () => {
    const ts = testScheduler();
    const names: Array<{ t: number; names: string[] }> = [];
    const states: ShardState[] = [];
    ts.run(() => {
      const { client, server } = virtualShardClient(ts);
      client.create(leftBehind('sim-shard-gone')).subscribe();
      const a = member(client, 'a', ts, states);
      const b = member(client, 'b', ts);
      const look = (t: number) => lookAt(ts, client, names, t);
      // Seen first at 0 by both members: unchanged for collectAfter at 60 s, deleted at their first tick after it.
      look(collectAfter - 1_000);
      look(collectAfter + 3_000);
      look(10 * collectAfter);
      at(ts, 10 * collectAfter + 1, () => {
        a.unsubscribe();
        b.unsubscribe();
        server.close();
      });
    });
    expect(names).to.deep.equal([
      { t: collectAfter - 1_000, names: ['sim-shard-a', 'sim-shard-b', 'sim-shard-gone'] },
      { t: collectAfter + 3_000, names: ['sim-shard-a', 'sim-shard-b'] },
      { t: 10 * collectAfter, names: ['sim-shard-a', 'sim-shard-b'] },
    ]);
    // The dead member counted for nothing: it was expired long before it was collected.
    expect(states.at(-1)?.members).to.deep.equal(['a', 'b']);
  });

  it('deletes with the Lease’s uid and resourceVersion as preconditions: one written since stays', () => {
    const ts = testScheduler();
    const outcomes: string[] = [];
    ts.run(() => {
      const { client, server } = virtualShardClient(ts);
      const say = (what: string) => ({
        complete: () => outcomes.push(`${what}: deleted`),
        error: (err: unknown) => outcomes.push(`${what}: ${isConflict(err) ? '409' : isNotFound(err) ? '404' : String(err)}`),
      });
      client.create(leftBehind('sim-shard-back')).subscribe((read) => {
        // The member comes back and renews: the Lease read before is no longer the one stored.
        client.update({ ...read, spec: { ...read.spec, renewTime: '2026-12-01T00:00:02.000000Z' } }).subscribe((renewed) => {
          client.delete(read).subscribe(say('as read'));
          client.get('default', 'sim-shard-back').subscribe((still) => outcomes.push(`stored: ${still?.spec?.renewTime ?? 'none'}`));
          client.delete(renewed).subscribe(say('as renewed'));
          client.delete(renewed).subscribe(say('again'));
        });
      });
      at(ts, 1, () => server.close());
    });
    expect(outcomes).to.deep.equal(['as read: 409', 'stored: 2026-12-01T00:00:02.000000Z', 'as renewed: deleted', 'again: 404']);
  });

  it('never deletes a Lease that is live by its own, longer, duration; and deletes one left behind again under the same name', () => {
    const ts = testScheduler();
    const names: Array<{ t: number; names: string[] }> = [];
    const hour = 3_600_000;
    ts.run(() => {
      const { client, server } = virtualShardClient(ts);
      client.create({ ...leftBehind('sim-shard-slow'), spec: { ...leftBehind('sim-shard-slow').spec, leaseDurationSeconds: hour / 1000 } }).subscribe();
      client.create(leftBehind('sim-shard-gone')).subscribe();
      const a = member(client, 'a', ts);
      lookAt(ts, client, names, collectAfter + 3_000);
      // The same name left behind a second time (a StatefulSet's replica, say) is collected again.
      at(ts, collectAfter + 4_000, () => client.create(leftBehind('sim-shard-gone')).subscribe());
      lookAt(ts, client, names, 2 * collectAfter + 8_000);
      lookAt(ts, client, names, hour - 1_000);
      lookAt(ts, client, names, hour + 3_000);
      at(ts, hour + 3_001, () => {
        a.unsubscribe();
        server.close();
      });
    });
    expect(names).to.deep.equal([
      { t: collectAfter + 3_000, names: ['sim-shard-a', 'sim-shard-slow'] },
      { t: 2 * collectAfter + 8_000, names: ['sim-shard-a', 'sim-shard-slow'] },
      { t: hour - 1_000, names: ['sim-shard-a', 'sim-shard-slow'] },
      { t: hour + 3_000, names: ['sim-shard-a'] },
    ]);
  });

  it('refuses a collectAfter that is not past the lease duration', () => {
    const ts = testScheduler();
    const { client, server } = virtualShardClient(ts);
    expect(() => member(client, 'a', ts, [], { collectAfter: 15_000 })).to.throw(LeaderElectionConfigError, 'collectAfter (15000 ms) must be greater than leaseDuration (15000 ms)');
    server.close();
  });

  it('says once, not at every renewal, that a member announces slots it cannot read', () => {
    const ts = testScheduler();
    const errors: string[] = [];
    const logger = { ...silentLogger, error: (_fields: unknown, message?: string) => void errors.push(message ?? '') };
    ts.run(() => {
      const { client, server } = virtualShardClient(ts);
      // b counts 64 slots, a 32: a cannot read b's announcement, while b renews every 2 s.
      const a = member(client, 'a', ts, [], { logger });
      const b = member(client, 'b', ts, [], { slots: 64 });
      at(ts, 30_000, () => {
        a.unsubscribe();
        b.unsubscribe();
        server.close();
      });
    });
    expect(errors.filter((m) => m.includes('cannot read'))).to.have.length(1);
  });

  it('creates its own Lease again when it was deleted (collected while this replica was away), starting afresh', () => {
    const ts = testScheduler();
    const holders: Array<string | undefined> = [];
    const states: ShardState[] = [];
    ts.run(() => {
      const { client, server } = virtualShardClient(ts);
      const a = member(client, 'a', ts, states);
      at(ts, 5_000, () => client.get('default', 'sim-shard-a').subscribe((own) => own !== undefined && client.delete(own).subscribe()));
      at(ts, 5_001, () => client.get('default', 'sim-shard-a').subscribe((own) => holders.push(own?.spec?.holderIdentity)));
      at(ts, 12_000, () => client.get('default', 'sim-shard-a').subscribe((own) => holders.push(own?.spec?.holderIdentity)));
      at(ts, 12_001, () => {
        a.unsubscribe();
        server.close();
      });
    });
    expect(holders).to.deep.equal([undefined, 'a']);
    // The others saw no slots of it meanwhile: it dropped them all, then joined again and took them back.
    const lost = states.findIndex((state, i) => i > 0 && !state.live);
    expect(lost, 'it dropped out').to.be.greaterThan(0);
    expect(states[lost]?.active.size).to.equal(0);
    expect(states.at(-1)).to.deep.include({ live: true });
    expect(states.at(-1)?.active.size).to.equal(32);
  });
});
