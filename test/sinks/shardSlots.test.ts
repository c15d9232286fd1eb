import { expect } from 'chai';
import { decide, noSlots, observePeers, livePeers, releaseDrained } from '../../src/sinks/leader/shardProtocol.js';
import { formatSlots, parseSlots, slotOfHash, slotRanges, slotsOf } from '../../src/sinks/leader/shardSlots.js';

describe('shard slots', () => {
  it('rendezvous hashing gives every slot to exactly one member, and a member leaving moves only its own slots', () => {
    const three = ['a', 'b', 'c'];
    const shares = three.map((m) => slotsOf(m, three, 256));
    expect(shares.reduce((n, s) => n + s.size, 0)).to.equal(256);
    expect(new Set(shares.flatMap((s) => [...s])).size).to.equal(256);
    for (const share of shares) expect(share.size).to.be.within(50, 120);
    const two = ['a', 'b'];
    for (const [i, m] of two.entries()) for (const slot of shares[i]!) expect(slotsOf(m, two, 256).has(slot), `slot ${slot} stays with ${m}`).to.equal(true);
  });

  it('a slot is the top bits of the hash, and adjacent slots make one range', () => {
    expect(slotOfHash(0n, 256)).to.equal(0);
    expect(slotOfHash((1n << 64n) - 1n, 256)).to.equal(255);
    expect(slotOfHash(1n << 56n, 256)).to.equal(1);
    expect(slotRanges([2, 0, 1, 5], 256)).to.deep.equal([
      { start: 0n, end: 3n << 56n },
      { start: 5n << 56n, end: 6n << 56n },
    ]);
    expect(slotRanges([255], 256)).to.deep.equal([{ start: 255n << 56n, end: 1n << 64n }]);
  });

  it('writes and reads the annotation, and names what it cannot read', () => {
    expect(formatSlots([5, 0, 1, 2, 7, 8])).to.equal('0-2,5,7-8');
    expect([...parseSlots('0-2,5,7-8', 256)]).to.deep.equal([0, 1, 2, 5, 7, 8]);
    expect(parseSlots('', 256).size).to.equal(0);
    expect(() => parseSlots('0-300', 256)).to.throw(TypeError, '"0-300" is not a slot or a range of slots below 256');
    expect(() => parseSlots('x', 256)).to.throw(TypeError, '"x"');
  });

  it('takes a member whose annotation it cannot read, or that counts slots differently, to hold every slot', () => {
    const lease = (name: string, annotations: Record<string, string>) => ({ metadata: { name, annotations }, spec: { holderIdentity: name, leaseDurationSeconds: 15, renewTime: 't' } });
    const peers = observePeers(new Map(), [lease('x', { 'rxkube.io/shard-slots': 'garbage' }), lease('y', { 'rxkube.io/shard-slot-count': '512' })], 0, 16);
    expect(peers.get('x')!.slots.size).to.equal(16);
    expect(peers.get('x')!.unreadable).to.contain('garbage');
    expect(peers.get('y')!.slots.size).to.equal(16);
    const { state } = decide(noSlots, { self: 'z', written: new Set(), live: livePeers(peers, 1_000), slots: 16, now: 1_000 });
    expect(state.claiming.size).to.equal(0);
  });

  it('claims free slots first, confirms them only once written, and withdraws a claim another live member announces', () => {
    const first = decide(noSlots, { self: 'a', written: new Set(), live: [], slots: 4, now: 0 });
    expect([...first.state.claiming]).to.deep.equal([0, 1, 2, 3]);
    expect(first.state.active.size).to.equal(0);
    const other = { identity: 'b', slots: new Set([2]), record: 'r', observedTime: 0, duration: 15_000 };
    // b is live but desires nothing of a's: a's claim of 2 still meets b's announcement and is withdrawn.
    const second = decide(first.state, { self: 'a', written: new Set([0, 1, 2, 3]), live: [other], slots: 4, now: 10, assign: () => new Set([0, 1, 2, 3]) });
    expect([...second.state.active].sort()).to.deep.equal([0, 1, 3]);
    expect(second.state.claiming.has(2)).to.equal(false);
  });

  it('drains a slot no longer desired and releases it only once no run of it is in flight', () => {
    const state = { active: new Set([1]), draining: new Map<number, number>(), claiming: new Set<number>() };
    const next = decide(state, { self: 'a', written: new Set(), live: [], slots: 4, now: 100, assign: () => new Set([0]) }).state;
    expect([...next.draining.keys()]).to.deep.equal([1]);
    expect(releaseDrained(next, () => true, 200, 1_000).released).to.deep.equal([]);
    expect(releaseDrained(next, () => true, 1_100, 1_000).overdue).to.deep.equal([1]);
    expect(releaseDrained(next, () => false, 200, 1_000).released).to.deep.equal([1]);
  });
});
