import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import { fromWatchEvents, type KubeObject } from 'rxkube';
import { WatchEventError, type RawWatchEvent } from '../../src/sources/fromWatchEvents.js';
import { obj, testScheduler } from '../support/objects.js';

const bookmark = (rv: string, initialEnd = false): RawWatchEvent => ({
  type: 'BOOKMARK',
  object: {
    kind: 'ConfigMap',
    metadata: { resourceVersion: rv, ...(initialEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}) },
  } as KubeObject,
});

describe('fromWatchEvents', () => {
  it('maps each raw watch event type to its ListWatchEvent, in virtual time', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const a1 = obj('a', '1');
      const a2 = obj('a', '2');
      const raw = cold<RawWatchEvent>('-a-m-b-d-|', {
        a: { type: 'ADDED', object: a1 },
        m: { type: 'MODIFIED', object: a2 },
        b: bookmark('3'),
        d: { type: 'DELETED', object: a2 },
      });
      expectObservable(fromWatchEvents(raw)).toBe('-a-m-b-d-|', {
        a: { type: 'Added', object: a1 },
        m: { type: 'Modified', object: a2 },
        b: { type: 'Bookmark', resourceVersion: '3' },
        d: { type: 'Deleted', object: a2 },
      });
    });
  });

  it('turns initial events into Restart, Listed and Synced at the initial-events-end bookmark', async () => {
    const a = obj('a', '1');
    const b = obj('b', '2');
    const c = obj('c', '4');
    const out = await lastValueFrom(
      fromWatchEvents([{ type: 'ADDED', object: a }, { type: 'ADDED', object: b }, bookmark('3', true), { type: 'ADDED', object: c }, bookmark('5', true)], {
        initialEvents: true,
      }).pipe(toArray()),
    );
    expect(out).to.deep.equal([
      { type: 'Restart' },
      { type: 'Listed', object: a },
      { type: 'Listed', object: b },
      { type: 'Synced', resourceVersion: '3' },
      { type: 'Added', object: c },
      // After the initial events, a bookmark is just a bookmark.
      { type: 'Bookmark', resourceVersion: '5' },
    ]);
  });

  it('ends with a WatchEventError carrying the Status code on an ERROR event', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const raw = cold<RawWatchEvent>('-a-e-a', {
        a: { type: 'ADDED', object: obj('a', '1') },
        e: { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (5)' } },
      });
      const error = new WatchEventError('watch failed: too old resource version: 1 (5) (410 Expired)', 410, 'Expired');
      expectObservable(fromWatchEvents(raw)).toBe('-a-#', { a: { type: 'Added', object: obj('a', '1') } }, error);
    });
  });

  it('rejects what is not a watch event with an error naming the event and the fault', async () => {
    const cases: [unknown, string][] = [
      [null, 'watch event #0 (null): not an object'],
      [{ type: 'ADDED' }, 'has no object'],
      [{ type: 'ADDED', object: { kind: 'Pod' } }, 'object has no metadata'],
      [{ type: 'BOOKMARK', object: { metadata: {} } }, 'bookmark has no metadata.resourceVersion'],
      [{ type: 'UPSERTED', object: { metadata: { name: 'a' } } }, 'unknown type "UPSERTED"'],
    ];
    for (const [raw, message] of cases) {
      const err = await lastValueFrom(fromWatchEvents([raw as RawWatchEvent])).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(raw)).to.be.instanceOf(WatchEventError);
      expect((err as Error).message).to.contain(message);
    }
  });

  it('forwards the input error and completion', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(fromWatchEvents(cold<RawWatchEvent>('--#', undefined, new Error('socket hang up')))).toBe(
        '--#',
        undefined,
        new Error('socket hang up'),
      );
    });
  });
});
