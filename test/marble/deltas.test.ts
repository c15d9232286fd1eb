import { expect } from 'chai';
import { from, lastValueFrom, toArray } from 'rxjs';
import { deltas, InvalidObjectError, type DeltaEvent, type KubeObject, type ListWatchEvent } from 'rxkube';
import { obj, testScheduler } from '../support/objects.js';
import { errorOf, unhandledErrorsOf } from './callbackErrors.support.js';

type E = ListWatchEvent<KubeObject>;

function run(events: E[]): Promise<DeltaEvent[]> {
  return lastValueFrom(from(events).pipe(deltas(), toArray()));
}

describe('deltas', () => {
  it('turns the first list into initial Added deltas and passes Synced on, in virtual time', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const a = obj('a', '1');
      const b = obj('b', '2');
      const input = cold<E>('r-a-b-s', {
        r: { type: 'Restart' },
        a: { type: 'Listed', object: a },
        b: { type: 'Listed', object: b },
        s: { type: 'Synced', resourceVersion: '2' },
      });
      expectObservable(input.pipe(deltas())).toBe('--a-b-s', {
        a: { type: 'Added', key: 'default/a', object: a, initial: true },
        b: { type: 'Added', key: 'default/b', object: b, initial: true },
        s: { type: 'Synced', resourceVersion: '2' },
      });
    });
  });

  it('makes a new resourceVersion an Updated with the old object, and a repeat a Sync', async () => {
    const a1 = obj('a', '1');
    const a2 = obj('a', '2');
    const out = await run([
      { type: 'Restart' },
      { type: 'Listed', object: a1 },
      { type: 'Synced', resourceVersion: '1' },
      { type: 'Modified', object: a2 },
      { type: 'Modified', object: a2 },
      { type: 'Added', object: obj('a', '3') },
    ]);
    expect(out.slice(2)).to.deep.equal([
      { type: 'Updated', key: 'default/a', object: a2, old: a1 },
      { type: 'Sync', key: 'default/a', object: a2, old: a2 },
      // A watch ADDED for a key already known is an update of it, not a second object.
      { type: 'Updated', key: 'default/a', object: obj('a', '3'), old: a2 },
    ]);
  });

  it('compares resource versions as opaque strings, never as numbers', async () => {
    const out = await run([
      { type: 'Listed', object: obj('a', '10') },
      { type: 'Synced', resourceVersion: '10' },
      // "9" < "10" as numbers; it is still a different version, so it is applied.
      { type: 'Modified', object: obj('a', '9') },
      // "010" equals 10 as a number, but is another string.
      { type: 'Modified', object: obj('a', '010') },
    ]);
    expect(out.slice(2).map((d) => d.type)).to.deep.equal(['Updated', 'Updated']);
  });

  it('emits Deleted for a watched delete and drops a delete of a key it never saw', async () => {
    const a = obj('a', '1');
    const out = await run([
      { type: 'Listed', object: a },
      { type: 'Synced', resourceVersion: '1' },
      { type: 'Deleted', object: obj('ghost', '2') },
      { type: 'Deleted', object: obj('a', '3') },
      { type: 'Deleted', object: obj('a', '3') },
    ]);
    expect(out.slice(2)).to.deep.equal([{ type: 'Deleted', key: 'default/a', object: obj('a', '3') }]);
  });

  it('after a re-list, tombstones every stored key the list did not name, before Synced', async () => {
    const a = obj('a', '1');
    const b = obj('b', '2');
    const c = obj('c', '7');
    const out = await run([
      { type: 'Restart' },
      { type: 'Listed', object: a },
      { type: 'Listed', object: b },
      { type: 'Synced', resourceVersion: '2' },
      { type: 'Restart' },
      { type: 'Listed', object: a },
      { type: 'Listed', object: c },
      { type: 'Synced', resourceVersion: '7' },
    ]);
    expect(out.slice(3)).to.deep.equal([
      { type: 'Sync', key: 'default/a', object: a, old: a },
      { type: 'Added', key: 'default/c', object: c },
      { type: 'Deleted', key: 'default/b', object: b, finalStateUnknown: true },
      { type: 'Synced', resourceVersion: '7' },
    ]);
  });

  it('tombstones keys stored before a list that failed part way and was restarted', async () => {
    const a = obj('a', '1');
    const b = obj('b', '1');
    const out = await run([
      { type: 'Restart' },
      { type: 'Listed', object: a },
      { type: 'Listed', object: b },
      // the list broke after page one; the source restarts it
      { type: 'Restart' },
      { type: 'Listed', object: a },
      { type: 'Synced', resourceVersion: '3' },
    ]);
    expect(out.filter((d) => d.type === 'Deleted')).to.deep.equal([
      { type: 'Deleted', key: 'default/b', object: b, finalStateUnknown: true, initial: true },
    ]);
  });

  it('makes an object recreated under the same key a Deleted of the old one, then an Added', async () => {
    const old = obj('a', '1', { uid: 'u1' });
    const relisted = obj('a', '5', { uid: 'u2' });
    const watched = obj('a', '9', { uid: 'u3' });
    const out = await run([
      { type: 'Listed', object: old },
      { type: 'Synced', resourceVersion: '1' },
      { type: 'Restart' },
      { type: 'Listed', object: relisted },
      { type: 'Synced', resourceVersion: '5' },
      { type: 'Added', object: watched },
    ]);
    expect(out.filter((d) => d.type !== 'Synced')).to.deep.equal([
      { type: 'Added', key: 'default/a', object: old, initial: true },
      { type: 'Deleted', key: 'default/a', object: old },
      { type: 'Added', key: 'default/a', object: relisted },
      { type: 'Deleted', key: 'default/a', object: relisted },
      { type: 'Added', key: 'default/a', object: watched },
    ]);
  });

  it('takes an update whose uid is missing, empty or not a string for an update, never for a recreation', async () => {
    const withUid = (rv: string, uid: unknown) => ({ metadata: { name: 'a', resourceVersion: rv, uid } }) as KubeObject;
    const out = await run([
      { type: 'Added', object: withUid('1', 'u1') },
      { type: 'Modified', object: withUid('2', '') },
      { type: 'Modified', object: withUid('3', null) },
      { type: 'Modified', object: withUid('4', {}) },
      { type: 'Modified', object: withUid('5', 'u1') },
    ]);
    expect(out.map((d) => d.type)).to.deep.equal(['Added', 'Updated', 'Updated', 'Updated', 'Updated']);
  });

  it('keeps each key in the order the source gave', async () => {
    const events: E[] = [{ type: 'Restart' }, { type: 'Synced', resourceVersion: '0' }];
    for (let rv = 1; rv <= 30; rv++) {
      events.push({ type: rv === 1 || rv === 2 ? 'Added' : 'Modified', object: obj(rv % 2 ? 'odd' : 'even', String(rv)) });
    }
    const out = await run(events);
    for (const key of ['default/odd', 'default/even']) {
      const versions = out
        .filter((d): d is Extract<DeltaEvent, { key: string }> => 'key' in d && d.key === key)
        .map((d) => Number(d.object.metadata.resourceVersion));
      expect(versions).to.deep.equal([...versions].sort((x, y) => x - y));
      expect(versions).to.have.length(15);
    }
  });

  it('reports an object that cannot be keyed and goes on with the rest', async () => {
    const reported: InvalidObjectError[] = [];
    const nameless = { kind: 'Pod', metadata: { namespace: 'prod' } } as KubeObject;
    const out = await lastValueFrom(
      from<E[]>([
        { type: 'Listed', object: nameless },
        { type: 'Listed', object: obj('a', '1') },
        { type: 'Synced', resourceVersion: '1' },
        { type: 'Modified', object: nameless },
        { type: 'Deleted', object: nameless },
      ]).pipe(deltas({ onInvalidObject: (err) => reported.push(err) }), toArray()),
    );
    expect(out.map((d) => d.type)).to.deep.equal(['Added', 'Synced']);
    expect(reported).to.have.length(3);
    expect(reported[0]?.message).to.equal('cannot key Pod object in namespace "prod": metadata.name is missing');
  });

  it('errors the output, naming onInvalidObject, when that callback throws, and stops reading the source', () => {
    const thrown = new Error('reporting failed');
    const nameless = { kind: 'Pod', metadata: { namespace: 'prod' } } as KubeObject;
    const a = obj('a', '1');
    let caught: { error?: unknown } = {};
    const unhandled = unhandledErrorsOf(({ cold, expectObservable, expectSubscriptions }) => {
      const input = cold<E>('a-n-b-|', { a: { type: 'Listed', object: a }, n: { type: 'Listed', object: nameless }, b: { type: 'Listed', object: obj('b', '1') } });
      const out = input.pipe(deltas({ onInvalidObject: () => { throw thrown; } }));
      expectObservable(out).toBe(
        'a-#',
        { a: { type: 'Added', key: 'default/a', object: a, initial: true } },
        new Error('deltas: onInvalidObject threw on a Listed object that cannot be keyed (cannot key Pod object in namespace "prod": metadata.name is missing): reporting failed'),
      );
      expectSubscriptions(input.subscriptions).toBe(['^-!', '^-!']);
      caught = errorOf(out);
    });
    expect(unhandled).to.deep.equal([]);
    expect((caught.error as Error).cause).to.equal(thrown);
  });

  it('calls a throwing onInvalidObject once, and emits nothing more, when the source goes on synchronously', () => {
    const reported: ListWatchEvent[] = [];
    const seen: string[] = [];
    const unhandled = unhandledErrorsOf(() => {
      from<E[]>([
        { type: 'Modified', object: { metadata: {} } as KubeObject },
        { type: 'Modified', object: obj('a', '1') },
        { type: 'Modified', object: { metadata: {} } as KubeObject },
        { type: 'Synced', resourceVersion: '1' },
      ])
        .pipe(deltas({ onInvalidObject: (_err, event) => { reported.push(event); throw 'not an Error'; } }))
        .subscribe({
          next: (d) => seen.push(d.type),
          error: (err: unknown) => seen.push(`error: ${(err as Error).message}`),
          complete: () => seen.push('complete'),
        });
    });
    expect(unhandled).to.deep.equal([]);
    expect(reported).to.have.length(1);
    expect(seen).to.deep.equal([
      'error: deltas: onInvalidObject threw on a Modified object that cannot be keyed (cannot key object: metadata.name is missing): not an Error',
    ]);
  });

  it('passes bookmarks on and the source error through', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const input = cold<E>('-b-#', { b: { type: 'Bookmark', resourceVersion: '4' } }, new Error('boom'));
      expectObservable(input.pipe(deltas())).toBe('-b-#', { b: { type: 'Bookmark', resourceVersion: '4' } }, new Error('boom'));
    });
  });

  it('starts from nothing on each subscription', async () => {
    const op = from<E[]>([{ type: 'Listed', object: obj('a', '1') }, { type: 'Synced', resourceVersion: '1' }]).pipe(deltas());
    const first = await lastValueFrom(op.pipe(toArray()));
    const second = await lastValueFrom(op.pipe(toArray()));
    expect(second).to.deep.equal(first);
  });
});
