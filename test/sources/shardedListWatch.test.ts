import { expect } from 'chai';
import { Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { silentLogger, type KubeObject, type ListWatchEvent } from 'rxkube';
import { shardedListWatch } from '../../src/sources/shardedListWatch.js';
import { resolveShard, type ShardSelection, type SourceShard } from '../../src/sources/sourceShard.js';
import { slotRanges, slotsOf } from '../../src/sinks/leader/shardSlots.js';
import { ShardSelectorError } from '../../src/util/shardSelector.js';
import { evenRanges, type ShardRange } from '../../src/util/shardHash.js';

const [lower, upper] = evenRanges(2) as [ShardRange, ShardRange];
const by = (...ranges: ShardRange[]): ShardSelection => ({ by: 'uid', ranges });
const restart: ListWatchEvent = { type: 'Restart' };
const synced: ListWatchEvent = { type: 'Synced', resourceVersion: '' };

function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });
}

describe('shardedListWatch: one list-watch per selection (virtual time)', () => {
  it('starts a list-watch per different selection, unsubscribing the old one first; an equal selection changes nothing', () => {
    const asked: string[] = [];
    scheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // Each list-watch emits the first letter of what it was asked for (l for lower, u for upper).
      const lowerSource = cold<ListWatchEvent>('-a-b--', { a: restart, b: synced });
      const upperSource = cold<ListWatchEvent>('-c---', { c: restart });
      const selections = hot<ShardSelection>('l--l--u-----', { l: by(lower), u: by(upper) });
      const out = shardedListWatch(selections, {
        resource: 'configmaps',
        logger: silentLogger,
        monitor: {},
        signal: undefined,
        source: (shard: SourceShard) => {
          asked.push(shard.shard.text);
          return shard.shard.text.includes("'0x0000000000000000'") ? lowerSource : upperSource;
        },
      });
      expectObservable(out).toBe('-a-b---c----', { a: restart, b: synced, c: restart });
      expectSubscriptions(lowerSource.subscriptions).toBe('^-----!');
      expectSubscriptions(upperSource.subscriptions).toBe('------^');
    });
    expect(asked).to.deep.equal([
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
      "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
    ]);
  });

  it('starts a list-watch when the ranges change though their cover (the selector sent) does not', () => {
    // A 1,024-slot replica's ranges, and the same with one more slot: one cover of 64 ranges, two selections.
    const owned = slotRanges(slotsOf('a', ['a', 'b'], 1024), 1024);
    const slots = slotsOf('a', ['a', 'b'], 1024);
    const extra = [...Array(1024).keys()].find((slot) => !slots.has(slot) && resolveShard(by(...slotRanges([...slots, slot], 1024)), 'x').text === resolveShard(by(...owned), 'x').text);
    expect(extra, 'a slot whose gain leaves the cover as it is').to.not.equal(undefined);
    const more = slotRanges([...slots, extra as number], 1024);
    const kept: number[] = [];
    scheduler().run(({ cold, hot, expectObservable }) => {
      const source = cold<ListWatchEvent>('-a', { a: restart });
      const out = shardedListWatch(hot<ShardSelection>('o--m', { o: by(...owned), m: by(...more) }), {
        resource: 'configmaps',
        logger: silentLogger,
        monitor: {},
        signal: undefined,
        source: (shard: SourceShard) => ((kept.push(shard.shard.selector.terms.length)), source),
      });
      expectObservable(out).toBe('-a--a', { a: restart });
    });
    expect(kept).to.have.length(2);
  });

  it('for ranges that own nothing sends no request: Restart and Synced, which empty the store', () => {
    let sources = 0;
    scheduler().run(({ hot, expectObservable }) => {
      const out = shardedListWatch(hot<ShardSelection>('n--', { n: by() }), {
        resource: 'configmaps',
        logger: silentLogger,
        monitor: {},
        signal: undefined,
        source: () => {
          sources++;
          return new Observable<ListWatchEvent<KubeObject>>();
        },
      });
      expectObservable(out).toBe('(rs)', { r: restart, s: synced });
    });
    expect(sources).to.equal(0);
  });

  it('errors with the problem named when a selection is malformed', () => {
    let error: unknown;
    scheduler().run(({ hot }) => {
      shardedListWatch(hot<ShardSelection>('l-x', { l: by(lower), x: 'shardRange(' }), {
        resource: 'configmaps',
        logger: silentLogger,
        monitor: {},
        signal: undefined,
        source: () => new Observable<ListWatchEvent<KubeObject>>(),
      }).subscribe({ error: (e: unknown) => (error = e) });
    });
    expect(error).to.be.instanceOf(ShardSelectorError);
    expect((error as Error).message).to.contain('listWatch of configmaps: found the end of the selector, expected a field path');
  });

  it('completes when its signal aborts, even while waiting for a selection', () => {
    scheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const source = cold<ListWatchEvent>('-a---', { a: restart });
      const stop = new AbortController();
      const out = shardedListWatch(hot<ShardSelection>('l-----', { l: by(lower) }), {
        resource: 'configmaps',
        logger: silentLogger,
        monitor: {},
        signal: stop.signal,
        source: () => source,
      });
      cold('---x').subscribe(() => stop.abort());
      expectObservable(out).toBe('-a-|', { a: restart });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
