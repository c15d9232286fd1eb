import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import { OwnWrites, type OwnWrite } from '../../src/controller/ownWrites.js';
import { Store } from '../../src/store/store.js';
import type { StoreEvent } from '../../src/store/indexer.js';
import type { KubeObject } from '../../src/types.js';

const cm = (name: string, resourceVersion: string, uid = `uid-${name}`): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', resourceVersion, uid } });
const wrote = (name: string, resourceVersion: string | undefined, extra: Partial<OwnWrite> = {}): OwnWrite => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  namespace: 'ns',
  name,
  resourceVersion,
  uid: `uid-${name}`,
  gone: false,
  ...extra,
});
const delta = (type: 'Added' | 'Updated' | 'Deleted', object: KubeObject, store: Store): StoreEvent =>
  ({ type, key: `ns/${object.metadata.name}`, object, store: store.lister }) as StoreEvent;

/** OwnWrites over one ConfigMap store, with what its listeners heard. */
function setUp(timeout = 1000) {
  const scheduler = new TestScheduler(() => undefined);
  const store = new Store();
  const writes = new OwnWrites([{ group: '', kind: 'ConfigMap', lister: store.lister }], scheduler, timeout);
  const heard: string[] = [];
  writes.listen((key, how, unseen) => heard.push(`${key} ${how}${unseen.length > 0 ? ` ${unseen.join(',')}` : ''}`));
  return { scheduler, store, writes, heard };
}

describe('OwnWrites: when a write counts as seen', () => {
  it('counts an event of the object at the written resourceVersion, or at a later one when both are integers', () => {
    const { writes, store, heard } = setUp();
    writes.record('ns/a', wrote('a', '10'));
    writes.record('ns/b', wrote('b', '11'));
    expect(writes.pending('ns/a')).to.equal(true);
    writes.observe(0, delta('Added', cm('a', '9'), store)); // older: not yet
    expect(heard).to.deep.equal([]);
    writes.observe(0, delta('Updated', cm('a', '12'), store)); // later: the watch is past the write
    writes.observe(0, delta('Added', cm('b', '11'), store));
    expect(heard).to.deep.equal(['ns/a seen', 'ns/b seen']);
    expect(writes.pending('ns/a')).to.equal(false);
  });

  it('with resourceVersions that are not integers, counts only the written one', () => {
    const { writes, store, heard } = setUp();
    writes.record('ns/a', wrote('a', 'v-b'));
    writes.observe(0, delta('Updated', cm('a', 'v-c'), store));
    expect(heard).to.deep.equal([]);
    writes.observe(0, delta('Updated', cm('a', 'v-b'), store));
    expect(heard).to.deep.equal(['ns/a seen']);
  });

  it('counts a Bookmark at or past the write for an object the store never shows (left out by its selector)', () => {
    const { writes, store, heard } = setUp();
    writes.record('ns/a', wrote('a', '20'));
    writes.observe(0, { type: 'Bookmark', resourceVersion: '19', store: store.lister } as StoreEvent);
    expect(heard).to.deep.equal([]);
    writes.observe(0, { type: 'Bookmark', resourceVersion: '21', store: store.lister } as StoreEvent);
    expect(heard).to.deep.equal(['ns/a seen']);
    // Past the watermark already: not waited for at all.
    writes.record('ns/a', wrote('a', '21'));
    expect(writes.pending('ns/a')).to.equal(false);
  });

  it('does not wait for a write no store caches (another kind, another group)', () => {
    const { writes } = setUp();
    writes.record('ns/a', wrote('a', '5', { kind: 'Secret' }));
    writes.record('ns/a', wrote('a', '5', { apiVersion: 'example.com/v1' }));
    expect(writes.pending('ns/a')).to.equal(false);
  });

  it('counts the delete of the very object written, even when the watch brought it before the answer', () => {
    const { writes, store, heard } = setUp();
    // The finalizer's removal: the object deleted at once, its Deleted event in before the patch's answer.
    writes.observe(0, delta('Deleted', cm('a', '31'), store));
    writes.record('ns/a', wrote('a', '30'));
    expect(writes.pending('ns/a')).to.equal(false);
    // Another object of the same name (another uid) was deleted: that says nothing of this write.
    writes.observe(0, delta('Deleted', cm('b', '40', 'uid-old'), store));
    writes.record('ns/b', wrote('b', '41'));
    expect(writes.pending('ns/b')).to.equal(true);
    writes.observe(0, delta('Deleted', cm('b', '41'), store));
    expect(heard).to.deep.equal(['ns/b seen']);
  });

  it('waits for a delete until the object is gone, and gives up at the timeout naming what was unseen', () => {
    const { writes, store, heard, scheduler } = setUp(1000);
    store.apply({ type: 'Added', key: 'ns/a', object: cm('a', '50') });
    writes.record('ns/a', wrote('a', '51', { gone: true }));
    expect(writes.pending('ns/a')).to.equal(true);
    writes.observe(0, delta('Deleted', cm('a', '51'), store));
    expect(heard).to.deep.equal(['ns/a seen']);
    writes.record('ns/b', wrote('b', '60'));
    expect(writes.deadline('ns/b')).to.equal(scheduler.now() + 1000);
    writes.giveUp('ns/b');
    expect(heard).to.deep.equal(['ns/a seen', 'ns/b timeout ConfigMap ns/b']);
    expect(writes.pending('ns/b')).to.equal(false);
  });
});
