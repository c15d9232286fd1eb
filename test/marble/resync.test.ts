import { map } from 'rxjs';
import { expect } from 'chai';
import { resync, indexer, Store, type DeltaEvent, type Lister, type StoreEvent } from 'rxkube';
import { obj, testScheduler } from '../support/objects.js';
import { errorOf, unhandledErrorsOf } from './callbackErrors.support.js';

const added = (name: string): DeltaEvent => ({ type: 'Added', key: `default/${name}`, object: obj(name, '1') });

describe('resync', () => {
  it('re-emits every stored key as a Sync each period once synced, spread over slices', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const input = cold<DeltaEvent>('abcds', {
        a: added('a'),
        b: added('b'),
        c: added('c'),
        d: added('d'),
        s: { type: 'Synced', resourceVersion: '1' },
      });
      const out = input.pipe(
        indexer(),
        resync(40, { scheduler: undefined, slices: 2 }),
        map((e) => ('key' in e ? `${e.type}:${e.key.slice(8)}` : e.type)),
      );
      // Synced at frame 4; a slice every 20 frames from there, so each key every 40.
      // (A group like (ef) takes as many frames as it has characters.)
      expectObservable(out, '^ 100ms !').toBe('abcds 19ms (ef) 16ms (gh) 16ms (ef) 16ms (gh)', {
        a: 'Added:a',
        b: 'Added:b',
        c: 'Added:c',
        d: 'Added:d',
        s: 'Synced',
        e: 'Sync:a',
        f: 'Sync:b',
        g: 'Sync:c',
        h: 'Sync:d',
      });
    });
  });

  it('does nothing before the store has synced, and stops with the input', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const input = cold<DeltaEvent>('a 100ms |', { a: added('a') });
      const out = input.pipe(indexer(), resync(10), map((e) => e.type));
      expectObservable(out).toBe('a 100ms |', { a: 'Added' });
    });
  });

  it('skips a key deleted before its slice comes round and carries the object as both object and old', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const input = cold<DeltaEvent>('abs 5ms d 40ms |', {
        a: added('a'),
        b: added('b'),
        s: { type: 'Synced', resourceVersion: '1' },
        d: { type: 'Deleted', key: 'default/b', object: obj('b', '1') },
      });
      const out = input.pipe(
        indexer(),
        resync(20, { slices: 2 }),
        map((e) => ('key' in e ? `${e.type}:${e.key.slice(8)}:${e.old === e.object}` : e.type)),
      );
      // The period starts at frame 2 with keys a, b: a's slice at 12, b's at 22, when b
      // is gone; the next period (keys: a) sends a at 32; the input ends at 49.
      expectObservable(out).toBe('abs 5ms d 3ms x 19ms x 16ms |', {
        a: 'Added:a:false',
        b: 'Added:b:false',
        s: 'Synced',
        d: 'Deleted:b:false',
        x: 'Sync:a:true',
      });
    });
  });

  it('errors the output, naming resync, when reading the store throws, and stops its timer', () => {
    const thrown = new Error('store gone');
    const store = new Store();
    store.apply(added('a'));
    store.apply({ type: 'Synced', resourceVersion: '1' });
    let reads = 0;
    // The store's own view, but for a keys() that throws (a Lister of one's own).
    const broken = Object.create(store.lister, {
      keys: {
        value: () => {
          reads++;
          throw thrown;
        },
      },
    }) as Lister;
    const synced: StoreEvent = { type: 'Synced', resourceVersion: '1', store: broken };
    let caught: { error?: unknown } = {};
    const unhandled = unhandledErrorsOf(({ cold, expectObservable, expectSubscriptions }) => {
      const input = cold<StoreEvent>('s', { s: synced });
      const out = input.pipe(resync(10, { slices: 1 }));
      expectObservable(out, '^ 50ms !').toBe('s 9ms #', { s: synced }, new Error('resync: reading the store threw: store gone'));
      expectSubscriptions(input.subscriptions).toBe('^ 9ms !');
    });
    expect(unhandled).to.deep.equal([]);
    expect(reads).to.equal(1);
    testScheduler().run(({ cold }) => {
      caught = errorOf(cold<StoreEvent>('s', { s: synced }).pipe(resync(10, { slices: 1 })));
    });
    expect((caught.error as Error).cause).to.equal(thrown);
  });

  it('errors the output, naming resync, on an input event that carries no store', () => {
    const seen: string[] = [];
    const unhandled = unhandledErrorsOf(({ cold }) => {
      cold<StoreEvent>('ab|', { a: { type: 'Synced', resourceVersion: '1' } as StoreEvent, b: { type: 'Bookmark', resourceVersion: '2' } as StoreEvent })
        .pipe(resync(10))
        .subscribe({
          next: (e) => seen.push(e.type),
          error: (err: unknown) => seen.push(`error: ${(err as Error).message}`),
          complete: () => seen.push('complete'),
        });
    });
    expect(unhandled).to.deep.equal([]);
    expect(seen).to.deep.equal(['Synced', "error: resync: reading the store threw: Cannot read properties of undefined (reading 'synced')"]);
  });
});
