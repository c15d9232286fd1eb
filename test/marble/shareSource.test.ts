import { expect } from 'chai';
import { Subject, map } from 'rxjs';
import { shareSource, indexer, type StoreEvent, type DeltaEvent } from 'rxkube';
import { obj, testScheduler } from '../support/objects.js';

const show = map((e: StoreEvent) => ('key' in e ? `${e.type}:${e.key.slice(8)}${e.initial ? '*' : ''}` : e.type));

describe('shareSource', () => {
  it('gives a late subscriber the current state first, then the live events, in virtual time', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const input = cold<DeltaEvent>('a-b-s-------c', {
        a: { type: 'Added', key: 'default/a', object: obj('a', '1') },
        b: { type: 'Added', key: 'default/b', object: obj('b', '2') },
        s: { type: 'Synced', resourceVersion: '2' },
        c: { type: 'Added', key: 'default/c', object: obj('c', '3') },
      });
      const shared = input.pipe(indexer(), shareSource());
      expectObservable(shared.pipe(show)).toBe('a-b-s-------c', { a: 'Added:a', b: 'Added:b', s: 'Synced', c: 'Added:c' });
      expectObservable(shared.pipe(show), '------^').toBe('------(abs)-c', { a: 'Added:a*', b: 'Added:b*', s: 'Synced', c: 'Added:c' });
    });
  });

  it('subscribes to its source once however many subscribers it has', () => {
    testScheduler().run(({ cold, expectSubscriptions }) => {
      const input = cold<DeltaEvent>('a---', { a: { type: 'Added', key: 'default/a', object: obj('a', '1') } });
      const shared = input.pipe(indexer(), shareSource());
      shared.subscribe();
      shared.subscribe();
      const late = shared.subscribe();
      late.unsubscribe();
      expectSubscriptions(input.subscriptions).toBe(['^']);
    });
  });

  it('unsubscribes from the source when the last subscriber leaves, and starts afresh for the next', () => {
    const tracked = new Subject<DeltaEvent>();
    const shared = tracked.pipe(indexer(), shareSource());
    const first = shared.subscribe();
    expect(tracked.observed).to.equal(true);
    tracked.next({ type: 'Added', key: 'default/a', object: obj('a', '1') });
    first.unsubscribe();
    expect(tracked.observed).to.equal(false);
    const seen: string[] = [];
    const second = shared.pipe(show).subscribe((e) => seen.push(e));
    // Nothing is replayed from the run that ended: its store is gone.
    expect(seen).to.deep.equal([]);
    second.unsubscribe();
  });

  it('gives every subscriber an error from upstream (a callback that threw there), and starts afresh for the next', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const input = cold<DeltaEvent>('a---s---#', {
        a: { type: 'Added', key: 'default/a', object: obj('a', '1') },
        s: { type: 'Synced', resourceVersion: '1' },
      }, new Error('predicate threw'));
      const shared = input.pipe(indexer(), shareSource());
      expectObservable(shared.pipe(show)).toBe('a---s---#', { a: 'Added:a', s: 'Synced' }, new Error('predicate threw'));
      expectObservable(shared.pipe(show), '--^').toBe('--r-s---#', { r: 'Added:a*', s: 'Synced' }, new Error('predicate threw'));
      // After the error nothing is replayed from the failed run: the next subscriber runs the source again.
      expectObservable(shared.pipe(show), '----------^').toBe('----------a---s---#', { a: 'Added:a', s: 'Synced' }, new Error('predicate threw'));
      expectSubscriptions(input.subscriptions).toBe(['^-------!', '----------^-------!']);
    });
  });
});
