import { expect } from 'chai';
import type { Subscription } from 'rxjs';
import { silentLogger } from 'rxkube';
import { isConflict, isNotFound } from '../../src/sinks/client/errors.js';
import type { Lease } from '../../src/sinks/leader/leaseRecord.js';
import type { ShardLeaseClient } from '../../src/sinks/leader/shardLeaseClient.js';
import { shardMembership, type ShardState } from '../../src/sinks/leader/shardMembership.js';
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

function member(client: ShardLeaseClient, identity: string, scheduler: ReturnType<typeof testScheduler>, states: ShardState[] = []): Subscription {
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
  }).subscribe((state) => states.push(state));
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
      const look = (t: number) =>
        at(ts, t, () =>
          client.list('default', selector).subscribe((leases) => names.push({ t, names: leases.map((lease) => lease.metadata?.name ?? '?').sort() })),
        );
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

  it('creates its own Lease again when it was deleted (collected while this replica was away), and stays live', () => {
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
    expect(states.every((state, i) => i === 0 || state.live), 'live throughout once joined').to.equal(true);
    expect(states.at(-1)?.active.size).to.equal(32);
  });
});
