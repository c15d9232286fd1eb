import { expect } from 'chai';
import { Subject, from, lastValueFrom, map, toArray } from 'rxjs';
import { deltas, NAMESPACE_INDEX, indexer, type StoreEvent, Store, type DeltaEvent, type KubeObject, type ListWatchEvent, type OwnerReference } from 'rxkube';
import { byLabel, byOwnerUid } from '../../src/store/indexFunctions.js';
import { IndexFunctionError, UnknownIndexError } from '../../src/store/store.js';
import { obj, testScheduler } from '../support/objects.js';
import { unhandledErrorsOf } from './callbackErrors.support.js';

describe('indexer', () => {
  it('emits each delta after applying it, with the store attached, in virtual time', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const a1 = obj('a', '1');
      const a2 = obj('a', '2');
      const input = cold<DeltaEvent>('-a-u-s-d', {
        a: { type: 'Added', key: 'default/a', object: a1 },
        u: { type: 'Updated', key: 'default/a', object: a2, old: a1 },
        s: { type: 'Synced', resourceVersion: '2' },
        d: { type: 'Deleted', key: 'default/a', object: a2 },
      });
      // What the store held when each event came out, read at that moment.
      const seen = input.pipe(
        indexer(),
        map((e) => ({ type: e.type, stored: e.store.get('default/a')?.metadata.resourceVersion ?? null, synced: e.store.synced, size: e.store.size })),
      );
      expectObservable(seen).toBe('-a-u-s-d', {
        a: { type: 'Added', stored: '1', synced: false, size: 1 },
        u: { type: 'Updated', stored: '2', synced: false, size: 1 },
        s: { type: 'Synced', stored: '2', synced: true, size: 1 },
        d: { type: 'Deleted', stored: null, synced: true, size: 0 },
      });
    });
  });

  it('keeps a namespace index by default and answers byIndex, indexKeys and listIndexValues', async () => {
    const events: DeltaEvent[] = [
      { type: 'Added', key: 'prod/a', object: obj('a', '1', { namespace: 'prod' }) },
      { type: 'Added', key: 'prod/b', object: obj('b', '2', { namespace: 'prod' }) },
      { type: 'Added', key: 'dev/a', object: obj('a', '3', { namespace: 'dev' }) },
      { type: 'Added', key: 'node-1', object: { metadata: { name: 'node-1', resourceVersion: '4' } } },
    ];
    const last = await lastValueFrom(from(events).pipe(indexer()));
    const store = last.store;
    expect(store.indexKeys(NAMESPACE_INDEX, 'prod').sort()).to.deep.equal(['prod/a', 'prod/b']);
    expect(store.byIndex(NAMESPACE_INDEX, 'dev').map((o) => o.metadata.resourceVersion)).to.deep.equal(['3']);
    expect(store.indexKeys(NAMESPACE_INDEX, '')).to.deep.equal(['node-1']);
    expect(store.listIndexValues(NAMESPACE_INDEX).sort()).to.deep.equal(['', 'dev', 'prod']);
    expect(store.byIndex(NAMESPACE_INDEX, 'nowhere')).to.deep.equal([]);
    expect(store.keys().sort()).to.deep.equal(['dev/a', 'node-1', 'prod/a', 'prod/b']);
    expect(store.list()).to.have.length(4);
    expect(store.resourceVersion).to.equal('4');
  });

  it('moves an updated object between index values and drops values left empty', () => {
    const store = new Store({ indexers: { app: byLabel('app') } });
    const v1 = obj('a', '1', { labels: { app: 'web' } });
    const v2 = obj('a', '2', { labels: { app: 'db' } });
    store.apply({ type: 'Added', key: 'default/a', object: v1 });
    expect(store.indexKeys('app', 'web')).to.deep.equal(['default/a']);
    store.apply({ type: 'Updated', key: 'default/a', object: v2, old: v1 });
    expect(store.indexKeys('app', 'web')).to.deep.equal([]);
    expect(store.indexKeys('app', 'db')).to.deep.equal(['default/a']);
    expect(store.listIndexValues('app')).to.deep.equal(['db']);
    store.apply({ type: 'Deleted', key: 'default/a', object: v2 });
    expect(store.listIndexValues('app')).to.deep.equal([]);
    expect(store.listIndexValues(NAMESPACE_INDEX)).to.deep.equal([]);
  });

  it('indexes an object under every value its index function returns', () => {
    const store = new Store({ indexers: { owner: byOwnerUid } });
    const owned: KubeObject = {
      metadata: {
        name: 'rs',
        namespace: 'default',
        resourceVersion: '1',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'A', name: 'x', uid: 'u-x' },
          { apiVersion: 'v1', kind: 'B', name: 'y', uid: 'u-y' },
        ],
      },
    };
    store.apply({ type: 'Added', key: 'default/rs', object: owned });
    expect(store.indexKeys('owner', 'u-x')).to.deep.equal(['default/rs']);
    expect(store.indexKeys('owner', 'u-y')).to.deep.equal(['default/rs']);
    expect(store.listIndexValues('owner').sort()).to.deep.equal(['u-x', 'u-y']);
  });

  it('names the index when asked for one it does not keep', () => {
    const store = new Store();
    expect(() => store.byIndex('app', 'web')).to.throw(UnknownIndexError, 'no index named "app" (this store has: namespace)');
  });

  it('throws an IndexFunctionError naming the index and the key when an index function throws, having stored the object out of that index only', () => {
    const cause = new Error('bad label');
    const store = new Store({ indexers: { broken: () => { throw cause; } } });
    let thrown: unknown;
    try {
      store.apply({ type: 'Added', key: 'default/a', object: obj('a', '1') });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).to.be.instanceOf(IndexFunctionError);
    expect(thrown).to.deep.include({ index: 'broken', key: 'default/a', message: 'the index function "broken" threw for "default/a": bad label', cause });
    expect(store.get('default/a')).to.not.equal(undefined);
    expect(store.listIndexValues('broken')).to.deep.equal([]);
    expect(store.indexKeys(NAMESPACE_INDEX, 'default')).to.deep.equal(['default/a']);
  });

  it('leaves no index entry behind when the index function throws for an object it indexed before', () => {
    let failing = false;
    const store = new Store({
      indexers: {
        flaky: (o) => {
          if (failing) throw new Error('lookup failed');
          return [o.metadata.labels?.app ?? ''];
        },
      },
    });
    const a1 = obj('a', '1', { labels: { app: 'web' } });
    const a2 = obj('a', '2', { labels: { app: 'db' } });
    store.apply({ type: 'Added', key: 'default/a', object: a1 });
    failing = true;
    expect(() => store.apply({ type: 'Updated', key: 'default/a', object: a2, old: a1 })).to.throw(IndexFunctionError, 'the index function "flaky" threw for "default/a"');
    expect(store.listIndexValues('flaky'), 'moved out of "web" though its old values could not be computed').to.deep.equal([]);
    failing = false;
    store.apply({ type: 'Updated', key: 'default/a', object: a1, old: a2 });
    expect(store.indexKeys('flaky', 'web')).to.deep.equal(['default/a']);
    failing = true;
    expect(() => store.apply({ type: 'Deleted', key: 'default/a', object: a1 })).to.throw(IndexFunctionError);
    expect(store.listIndexValues('flaky')).to.deep.equal([]);
    expect(store.byIndex('flaky', 'web')).to.deep.equal([]);
  });

  it('errors its output with an IndexFunctionError naming the index and the key when an index function throws, and leaves no stale index entry', () => {
    // Throws for the object at resourceVersion 2 only.
    const cause = new Error('lookup failed');
    const app = (o: KubeObject) => {
      if (o.metadata.resourceVersion === '2') throw cause;
      return [o.metadata.labels?.app ?? ''];
    };
    const store = new Store({ indexers: { app } });
    const a1 = obj('a', '1', { labels: { app: 'web' } });
    const a2 = obj('a', '2', { labels: { app: 'db' } });
    const unhandled = unhandledErrorsOf(({ cold, expectObservable }) => {
      const input = cold<DeltaEvent>('a-u-s|', {
        a: { type: 'Added', key: 'default/a', object: a1 },
        u: { type: 'Updated', key: 'default/a', object: a2, old: a1 },
        s: { type: 'Synced', resourceVersion: '2' },
      });
      const out = input.pipe(
        indexer({ store }),
        map((e) => `${e.type}:${e.store.indexKeys('app', 'web').length}`),
      );
      expectObservable(out).toBe('a-#', { a: 'Added:1' }, new IndexFunctionError('app', 'default/a', 'the index function "app" threw for "default/a": lookup failed', { cause }));
    });
    expect(unhandled).to.deep.equal([]);
    // The update was applied whole: the new object is stored, under the namespace index, and under no "app" value.
    expect(store.get('default/a')).to.equal(a2);
    expect(store.indexKeys(NAMESPACE_INDEX, 'default')).to.deep.equal(['default/a']);
    expect(store.listIndexValues('app'), 'no entry left under "web"').to.deep.equal([]);
  });

  it('deletes an object from every index when the index function throws for it as it is deleted, then errors its output', () => {
    let failing = false;
    const store = new Store({
      indexers: {
        app: (o) => {
          if (failing) throw new TypeError('labels gone');
          return [o.metadata.labels?.app ?? ''];
        },
      },
    });
    const a = obj('a', '1', { labels: { app: 'web' } });
    store.apply({ type: 'Added', key: 'default/a', object: a });
    failing = true;
    const seen: string[] = [];
    const unhandled = unhandledErrorsOf(({ cold }) => {
      cold<DeltaEvent>('d-s|', { d: { type: 'Deleted', key: 'default/a', object: a }, s: { type: 'Synced', resourceVersion: '2' } })
        .pipe(indexer({ store }))
        .subscribe({
          next: (e) => seen.push(e.type),
          error: (err: unknown) => seen.push(`error: ${String(err)}`),
          complete: () => seen.push('complete'),
        });
    });
    expect(unhandled).to.deep.equal([]);
    expect(seen).to.deep.equal(['error: IndexFunctionError: the index function "app" threw for "default/a": labels gone']);
    expect(store.has('default/a')).to.equal(false);
    expect(store.listIndexValues('app')).to.deep.equal([]);
    expect(store.listIndexValues(NAMESPACE_INDEX)).to.deep.equal([]);
  });

  it('throws an IndexFunctionError when an index function returns no array, having stored the object out of that index only', () => {
    // A JavaScript caller's `o => o.metadata.labels && [o.metadata.labels.app]`.
    const app = ((o: KubeObject) => o.metadata.labels && [o.metadata.labels.app]) as unknown as (o: KubeObject) => string[];
    const store = new Store({ indexers: { app } });
    const bare = obj('a', '1');
    const labelled = obj('a', '2', { labels: { app: 'web' } });
    expect(() => store.apply({ type: 'Added', key: 'default/a', object: bare })).to.throw(
      IndexFunctionError,
      'the index function "app" returned undefined for "default/a"; expected an array of strings',
    );
    expect(() => store.apply({ type: 'Updated', key: 'default/a', object: labelled, old: bare })).to.throw(IndexFunctionError);
    expect(store.indexKeys('app', 'web')).to.deep.equal(['default/a']);
    expect(() => store.apply({ type: 'Updated', key: 'default/a', object: bare, old: labelled })).to.throw(IndexFunctionError);
    expect(store.listIndexValues('app')).to.deep.equal([]);
    expect(store.get('default/a')).to.equal(bare);
  });

  it('keeps only string resourceVersions: a mistyped one from a broken source is ignored', () => {
    const store = new Store();
    store.apply({ type: 'Added', key: 'a', object: { metadata: { name: 'a', resourceVersion: '5' } } });
    store.apply({ type: 'Updated', key: 'a', object: { metadata: { name: 'a', resourceVersion: 6 as unknown as string } } });
    store.apply({ type: 'Bookmark', resourceVersion: {} as unknown as string });
    store.apply({ type: 'Updated', key: 'a', object: { metadata: { name: 'a', resourceVersion: '' } } });
    expect(store.resourceVersion).to.equal('5');
  });

  it('indexes by owner uid and by label only under string values', () => {
    const odd = {
      metadata: {
        name: 'a',
        labels: { app: 7 } as unknown as Record<string, string>,
        ownerReferences: [null, { uid: 5 }, {}, { uid: '' }, { uid: 'o1' }] as unknown as OwnerReference[],
      },
    };
    expect(byOwnerUid(odd)).to.deep.equal(['o1']);
    expect(byOwnerUid({ metadata: { name: 'a', ownerReferences: 'x' as unknown as OwnerReference[] } })).to.deep.equal([]);
    expect(byLabel('app')(odd)).to.deep.equal([]);
  });

  it('stays synced across a re-list and tracks the latest resourceVersion, bookmarks included', async () => {
    const events: ListWatchEvent[] = [
      { type: 'Restart' },
      { type: 'Listed', object: obj('a', '1') },
      { type: 'Synced', resourceVersion: '5' },
      { type: 'Bookmark', resourceVersion: '8' },
      { type: 'Restart' },
    ];
    const out = await lastValueFrom(from(events).pipe(deltas(), indexer(), toArray()));
    const store = out[out.length - 1]?.store;
    expect(store?.synced).to.equal(true);
    expect(store?.resourceVersion).to.equal('8');
    expect(out.map((e) => e.type)).to.deep.equal(['Added', 'Synced', 'Bookmark']);
  });

  it('gives readers a view that cannot change the store', async () => {
    const last = await lastValueFrom(from<DeltaEvent[]>([{ type: 'Added', key: 'default/a', object: obj('a', '1') }]).pipe(indexer()));
    expect((last.store as unknown as { apply?: unknown }).apply).to.equal(undefined);
    expect(Object.isFrozen(last.store)).to.equal(true);
  });

  it('fills a store passed in, so a Lister can be held before the stream starts', () => {
    const store = new Store();
    const input = new Subject<DeltaEvent>();
    const seen: StoreEvent[] = [];
    input.pipe(indexer({ store })).subscribe((e) => seen.push(e));
    expect(store.lister.size).to.equal(0);
    input.next({ type: 'Added', key: 'default/a', object: obj('a', '1') });
    expect(store.lister.get('default/a')?.metadata.resourceVersion).to.equal('1');
    expect(seen[0]?.store).to.equal(store.lister);
  });

  it('keeps a separate store per subscription', async () => {
    const stream = from<DeltaEvent[]>([{ type: 'Added', key: 'default/a', object: obj('a', '1') }]).pipe(indexer());
    const one = await lastValueFrom(stream);
    const two = await lastValueFrom(stream);
    expect(one.store).to.not.equal(two.store);
    expect(two.store.size).to.equal(1);
  });
});
