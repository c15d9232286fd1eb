import { expect } from 'chai';
import fc from 'fast-check';
import { silentLogger, type KubeObject } from 'rxkube';
import { slotRanges, slotsOf } from '../../src/sinks/leader/shardSlots.js';
import { coveringRanges, maxSentShardRanges, resolveShard, SourceShard } from '../../src/sources/sourceShard.js';
import { fnv1a64, inAnyRange, type ShardRange } from '../../src/util/shardHash.js';
import { formatShardSelector, parseShardSelector, shardSelectorOf } from '../../src/util/shardSelector.js';

const top = 1n << 64n;
/** The ranges a selector text says, as the server reads it. */
const rangesOf = (text: string): ShardRange[] => parseShardSelector(text).terms.map((t) => ({ start: t.start, end: t.end }));
const size = (ranges: readonly ShardRange[]) => ranges.reduce((n, r) => n + (r.end - r.start), 0n);
const pod = (uid: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: uid, namespace: 'ns', uid } });

describe('sourceShard: what a sharded source sends, and what it keeps', () => {
  it(`sends at most ${maxSentShardRanges} ranges: a cover of the selection, bridged across its smallest gaps`, () => {
    // A replica of 1,024 slots among two owns about 260 scattered ranges.
    const owned = slotRanges(slotsOf('a', ['a', 'b'], 1024), 1024);
    expect(owned.length).to.be.greaterThan(200);
    const shard = resolveShard({ by: 'uid', ranges: owned }, 'pods');
    expect(shard.exact).to.equal(false);
    const sent = rangesOf(shard.text);
    expect(sent).to.have.length(maxSentShardRanges);
    expect(encodeURIComponent(shard.text).length).to.be.lessThan(7_000);
    for (const r of owned) expect(sent.some((s) => s.start <= r.start && r.end <= s.end), 'every owned range inside one sent').to.equal(true);
    // What it keeps is the selection itself.
    expect(shard.selector).to.deep.equal(shardSelectorOf('uid', owned));
    // A selection of few ranges is sent as it is.
    const few = slotRanges(slotsOf('a', ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], 256), 256);
    const small = resolveShard({ by: 'uid', ranges: few }, 'pods');
    expect(small).to.deep.include({ exact: true, text: formatShardSelector(shardSelectorOf('uid', few)) });
    // Touching ranges go joined: the same hashes in fewer terms; what is kept, and the key, say them as given.
    const halves = [{ start: 0n, end: 1n << 63n }, { start: 1n << 63n, end: top }];
    const whole = resolveShard({ by: 'uid', ranges: halves }, 'pods');
    expect(rangesOf(whole.text)).to.deep.equal([{ start: 0n, end: top }]);
    expect(whole).to.deep.include({ exact: true, key: formatShardSelector(shardSelectorOf('uid', halves)) });
    expect(() => coveringRanges(halves, 0)).to.throw(RangeError, 'max must be a whole number ≥ 1, got 0');
  });

  it('covers any ranges with the least added space a cover of that many ranges can add (property)', () => {
    const rangeArb = fc.tuple(fc.bigInt({ min: 0n, max: top - 2n }), fc.bigInt({ min: 1n, max: 1n << 60n })).map(([start, len]) => ({ start, end: start + len > top ? top : start + len }));
    fc.assert(
      fc.property(fc.array(rangeArb, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 10 }), (ranges, max) => {
        const cover = coveringRanges(ranges, max);
        expect(cover.length).to.be.at.most(max);
        for (let i = 1; i < cover.length; i++) expect(cover[i - 1]!.end < cover[i]!.start, 'sorted, disjoint, not touching').to.equal(true);
        for (const r of ranges) expect(cover.some((c) => c.start <= r.start && r.end <= c.end)).to.equal(true);
        // Bridging the smallest gaps adds the least: the sum of all gaps but the largest (k − 1) of the joined ranges'.
        const joined = coveringRanges(ranges, Number.MAX_SAFE_INTEGER);
        const gaps = joined.slice(1).map((r, i) => r.start - joined[i]!.end).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const bridged = gaps.slice(0, Math.max(0, joined.length - max)).reduce((n, g) => n + g, 0n);
        expect(size(cover) - size(joined)).to.equal(bridged);
      }),
      { numRuns: 300 },
    );
  });

  it('drops what a server filtered by a superset sent beyond the selection, shardInfo or not', () => {
    const owned = slotRanges(slotsOf('a', ['a', 'b'], 1024), 1024);
    const shard = new SourceShard(resolveShard({ by: 'uid', ranges: owned }, 'pods'), 'pods', silentLogger, {}, {});
    const sent = rangesOf(shard.shard.text);
    // Objects the superset lets through: some of them owned, some not.
    const through = Array.from({ length: 4000 }, (_, i) => pod(`uid-${i}`)).filter((p) => inAnyRange(sent, fnv1a64(p.metadata.uid!)));
    const mine = through.filter((p) => inAnyRange(owned, fnv1a64(p.metadata.uid!)));
    expect(mine.length).to.be.greaterThan(0);
    expect(mine.length).to.be.lessThan(through.length);
    const shardInfo = { resourceVersion: '1', shardInfo: { selector: shard.shard.text } };
    expect(through.filter((p) => shard.keepsListed(p, shardInfo))).to.deep.equal(mine);
    shard.listed(shardInfo);
    expect(through.filter((p) => shard.keepsWatched(p))).to.deep.equal(mine);
    // With an exact selector, a filtered answer is trusted as it is.
    const exact = new SourceShard(resolveShard({ by: 'uid', ranges: owned.slice(0, 10) }, 'pods'), 'pods', silentLogger, {}, {});
    exact.listed(shardInfo);
    expect(through.every((p) => exact.keepsListed(p, shardInfo) && exact.keepsWatched(p))).to.equal(true);
  });
});
