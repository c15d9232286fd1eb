import { expect } from 'chai';
import type { Observable } from 'rxjs';
import { and, annotationsChanged, filterDeltas, generationChanged, labelsChanged, not, or, resourceVersionChanged, type Predicate, type StoreEvent, type Delta, type DeltaEvent, type KubeObject } from 'rxkube';
import { isSync } from '../../src/operators/predicates.js';
import { obj, testScheduler } from '../support/objects.js';
import { errorOf, unhandledErrorsOf } from './callbackErrors.support.js';

const at = (rv: string, options: Parameters<typeof obj>[2] = {}) => obj('a', rv, options);
const updated = (old: KubeObject, object: KubeObject): Delta => ({ type: 'Updated', key: 'default/a', object, old });
const sync = (object: KubeObject): Delta => ({ type: 'Sync', key: 'default/a', object, old: object });
const added = (object: KubeObject): Delta => ({ type: 'Added', key: 'default/a', object });
const deleted = (object: KubeObject): Delta => ({ type: 'Deleted', key: 'default/a', object });

describe('predicates', () => {
  it('generationChanged passes an update that bumps the generation and drops one that does not', () => {
    expect(generationChanged(updated(at('1', { generation: 1 }), at('2', { generation: 2 })))).to.equal(true);
    expect(generationChanged(updated(at('1', { generation: 1 }), at('2', { generation: 1 })))).to.equal(false);
  });

  it('generationChanged drops a resync, whose object is the one stored', () => {
    expect(generationChanged(sync(at('1', { generation: 3 })))).to.equal(false);
  });

  it('resourceVersionChanged passes any write and drops a resync', () => {
    expect(resourceVersionChanged(updated(at('1'), at('2')))).to.equal(true);
    expect(resourceVersionChanged(sync(at('1')))).to.equal(false);
  });

  it('labelsChanged sees a label added, removed or changed, and takes no labels to equal empty labels', () => {
    expect(labelsChanged(updated(at('1'), at('2', { labels: { app: 'web' } })))).to.equal(true);
    expect(labelsChanged(updated(at('1', { labels: { app: 'web' } }), at('2')))).to.equal(true);
    expect(labelsChanged(updated(at('1', { labels: { app: 'web' } }), at('2', { labels: { app: 'api' } })))).to.equal(true);
    expect(labelsChanged(updated(at('1', { labels: { a: '1' } }), at('2', { labels: { b: '1' } })))).to.equal(true);
    expect(labelsChanged(updated(at('1', { labels: { a: '1', b: '2' } }), at('2', { labels: { b: '2', a: '1' } })))).to.equal(false);
    expect(labelsChanged(updated(at('1'), at('2', { labels: {} })))).to.equal(false);
  });

  it('annotationsChanged sees annotations, not labels', () => {
    const withAnnotations = (rv: string, annotations: Record<string, string>, labels?: Record<string, string>): KubeObject => {
      const o = at(rv, labels ? { labels } : {});
      return { ...o, metadata: { ...o.metadata, annotations } };
    };
    expect(annotationsChanged(updated(withAnnotations('1', { note: 'x' }), withAnnotations('2', { note: 'y' })))).to.equal(true);
    expect(annotationsChanged(updated(withAnnotations('1', { note: 'x' }), withAnnotations('2', { note: 'x' }, { l: '1' })))).to.equal(false);
  });

  it('every built-in predicate passes created and deleted objects, and an update without an old object', () => {
    for (const p of [generationChanged, resourceVersionChanged, labelsChanged, annotationsChanged]) {
      expect(p(added(at('1')))).to.equal(true);
      expect(p(deleted(at('1')))).to.equal(true);
      expect(p({ type: 'Updated', key: 'default/a', object: at('2') })).to.equal(true);
    }
  });

  it('combines with and, or and not', () => {
    const labelOnly = updated(at('1', { generation: 1 }), at('2', { generation: 1, labels: { a: 'b' } }));
    const specOnly = updated(at('1', { generation: 1 }), at('2', { generation: 2 }));
    expect(and(generationChanged, labelsChanged)(labelOnly)).to.equal(false);
    expect(or(generationChanged, labelsChanged)(labelOnly)).to.equal(true);
    expect(and(resourceVersionChanged, not(labelsChanged))(specOnly)).to.equal(true);
    expect(and(resourceVersionChanged, not(labelsChanged))(labelOnly)).to.equal(false);
    expect(and()(specOnly)).to.equal(true);
    expect(or()(specOnly)).to.equal(false);
    expect(or(generationChanged, isSync)(sync(at('1')))).to.equal(true);
  });

  it('name the combinator and the position of a predicate that throws, and the delta, with what it threw as cause', () => {
    const thrown = new Error('boom');
    const isBad: Predicate = () => {
      throw thrown;
    };
    const delta = updated(at('1', { generation: 1 }), at('2', { generation: 2 }));
    const errorFrom = (p: Predicate): Error => {
      try {
        p(delta);
      } catch (err) {
        return err as Error;
      }
      throw new Error('the predicate did not throw');
    };
    const nested = errorFrom(and(generationChanged, or(labelsChanged, not(isBad))));
    expect(nested.message).to.equal('and argument 1 > or argument 1 > not: predicate "isBad" threw on Updated "default/a": boom');
    expect(nested.cause).to.equal(thrown);
    expect(errorFrom(or((() => { throw 'no Error'; }) as Predicate)).message).to.equal('or argument 0: the predicate threw on Updated "default/a": no Error');
    // A combinator that never asks the throwing predicate does not throw.
    expect(or(generationChanged, isBad)(delta)).to.equal(true);
  });

  it('refuses a combinator argument that is not a function, naming its position', () => {
    expect(() => and(generationChanged, undefined as unknown as Predicate)).to.throw(TypeError, 'and: argument 1 is not a predicate function (got undefined)');
    expect(() => filterDeltas('generation' as unknown as Predicate)).to.throw(TypeError, 'filterDeltas: argument 0');
  });
});

describe('filterDeltas', () => {
  it('filters updates and resyncs by the predicate, and always passes adds, deletes and list markers (its doc diagram)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const g1 = at('1', { generation: 1 });
      const g1b = at('2', { generation: 1 });
      const g2 = at('3', { generation: 2 });
      const values: Record<string, DeltaEvent> = {
        a: added(g1),
        u: updated(g1, g1b),
        v: updated(g1b, g2),
        s: sync(g2),
        m: { type: 'Synced', resourceVersion: '3' },
        b: { type: 'Bookmark', resourceVersion: '4' },
        d: deleted(g2),
      };
      const input = cold<DeltaEvent>('-a-u-v-s-m-b-d-|', values);
      expectObservable(input.pipe(filterDeltas(generationChanged))).toBe('-a---v---m-b-d-|', values);
    });
  });

  it('errors the output when the predicate throws, naming filterDeltas, the predicate and the delta, and asks it nothing more', () => {
    const thrown = new TypeError("Cannot read properties of undefined (reading 'nodeName')");
    const asked: string[] = [];
    const onNode: Predicate = (d) => {
      asked.push(d.object.metadata.resourceVersion ?? '');
      if (d.object.metadata.resourceVersion === '2') throw thrown;
      return true;
    };
    const values = {
      a: added(at('1', { generation: 1 })),
      u: updated(at('1', { generation: 1 }), at('2', { generation: 2 })),
      v: updated(at('2', { generation: 2 }), at('3', { generation: 3 })),
    };
    let caught: { error?: unknown } = {};
    const unhandled = unhandledErrorsOf(({ cold, expectObservable, expectSubscriptions }) => {
      const input = cold<Delta>('a-u-v|', values);
      expectObservable(input.pipe(filterDeltas(and(generationChanged, onNode)))).toBe(
        'a-#',
        { a: values.a },
        Object.assign(new Error(`filterDeltas > and argument 1: predicate "onNode" threw on Updated "default/a": ${thrown.message}`), { name: 'PredicateError' }),
      );
      expectSubscriptions(input.subscriptions).toBe('^-!');
    });
    expect(unhandled).to.deep.equal([]);
    expect(asked).to.deep.equal(['2']);
    testScheduler().run(({ cold }) => {
      caught = errorOf(cold<Delta>('u', values).pipe(filterDeltas(onNode)));
    });
    expect((caught.error as Error).message).to.equal(`filterDeltas: predicate "onNode" threw on Updated "default/a": ${thrown.message}`);
    expect((caught.error as Error).cause).to.equal(thrown);
  });

  it('passes adds and deletes even when the predicate would drop them', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const values = { a: added(at('1')), d: deleted(at('1')), u: updated(at('1'), at('2')) };
      const never: Predicate = () => false;
      expectObservable(cold<Delta>('aud|', values).pipe(filterDeltas(never))).toBe('a-d|', values);
    });
  });

  it('keeps the type of what it filters, store events included', () => {
    interface Pod extends KubeObject {
      spec: { nodeName?: string };
    }
    const onNode: Predicate<Pod> = (d) => d.object.spec.nodeName !== undefined;
    const typed = (events: Observable<StoreEvent<Pod>>): Observable<StoreEvent<Pod>> =>
      events.pipe(filterDeltas(and(generationChanged, onNode)));
    const plain = (events: Observable<DeltaEvent<Pod>>): Observable<DeltaEvent<Pod>> => events.pipe(filterDeltas(labelsChanged));
    expect(typed).to.be.a('function');
    expect(plain).to.be.a('function');
  });
});
