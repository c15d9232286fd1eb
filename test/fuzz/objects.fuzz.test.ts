import { expect } from 'chai';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import { deltas, NAMESPACE_INDEX, indexer, type StoreEvent, Store, type Lister, InvalidObjectError, isDelta, objectKey, splitKey, type KubeObject, type ListWatchEvent } from 'rxkube';
import { byLabel, byOwnerUid, type IndexFunc, type Indexers } from '../../src/store/indexFunctions.js';
import { IndexFunctionError } from '../../src/store/store.js';
import { oddValue } from './arbitraries.js';
import { CompactCodec } from '../../src/compact/compactCodec.js';
import { readable } from '../../src/compact/compactObject.js';

/**
 * Objects with missing or odd metadata through objectKey, deltas() and indexer(): names and
 * namespaces of every type, missing metadata, huge label maps, odd resourceVersions and uids.
 * Keys are either right or an InvalidObjectError; the operators report and skip what cannot be
 * keyed and go on; the store always equals a model of what the stream said, and its indexes
 * agree with its objects, even with index functions that throw.
 */

const names = ['a', 'b', 'c'];
const namespaces = [undefined, 'ns1', 'ns2'];

/** Mostly ordinary objects over a few keys (so updates, deletes and re-lists meet), some odd. */
const metadata: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        name: fc.constantFrom(...names),
        namespace: fc.constantFrom(...namespaces),
        uid: fc.oneof(fc.constantFrom('u1', 'u2'), oddValue),
        resourceVersion: fc.oneof(fc.constantFrom('1', '2', '3'), oddValue),
        labels: fc.oneof(
          fc.record({ app: fc.constantFrom('web', 'db') }),
          fc.record({ app: oddValue }),
          oddValue,
          fc.integer({ min: 1000, max: 5000 }).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, `v${i}`]))),
        ),
        ownerReferences: fc.oneof(fc.array(fc.record({ uid: fc.oneof(fc.constantFrom('o1', 'o2'), oddValue) }), { maxLength: 2 }), oddValue),
      },
      { requiredKeys: ['name'] },
    ),
  },
  { weight: 2, arbitrary: fc.record({ name: oddValue, namespace: oddValue, uid: oddValue, resourceVersion: oddValue }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: oddValue },
);

const object: fc.Arbitrary<KubeObject> = fc.oneof(
  { weight: 10, arbitrary: fc.record({ kind: fc.oneof(fc.constant('Thing'), oddValue), metadata }, { requiredKeys: ['metadata'] }) },
  { weight: 1, arbitrary: oddValue },
) as fc.Arbitrary<KubeObject>;

const rv = fc.oneof(fc.constantFrom('1', '2', '10'), oddValue) as fc.Arbitrary<string>;

const event: fc.Arbitrary<ListWatchEvent> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ type: 'Restart' as const }) },
  { weight: 3, arbitrary: object.map((o) => ({ type: 'Listed' as const, object: o })) },
  { weight: 1, arbitrary: rv.map((r) => ({ type: 'Synced' as const, resourceVersion: r })) },
  { weight: 1, arbitrary: rv.map((r) => ({ type: 'Bookmark' as const, resourceVersion: r })) },
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom('Added' as const, 'Modified' as const, 'Deleted' as const), object).map(([type, o]) => ({ type, object: o })) },
);

function keyOrUndefined(o: KubeObject): string | undefined {
  try {
    return objectKey(o);
  } catch (error) {
    if (error instanceof InvalidObjectError) return undefined;
    throw error;
  }
}

/** What a store must hold after a stream of events: the last keyed object per live key. */
class Model {
  readonly objects = new Map<string, KubeObject>();
  private listed: Set<string> | undefined;
  invalid = 0;

  apply(e: ListWatchEvent): void {
    if (e.type === 'Restart') {
      this.listed = new Set();
      return;
    }
    if (e.type === 'Bookmark') return;
    if (e.type === 'Synced') {
      if (this.listed !== undefined) for (const key of [...this.objects.keys()]) if (!this.listed.has(key)) this.objects.delete(key);
      this.listed = undefined;
      return;
    }
    const key = keyOrUndefined(e.object);
    if (key === undefined) {
      this.invalid++;
      return;
    }
    if (e.type === 'Deleted') this.objects.delete(key);
    else this.objects.set(key, e.object);
    if (e.type === 'Listed') (this.listed ??= new Set()).add(key);
  }
}

/** An index function that throws for some objects: a bug in a user's function errors the pipeline, and leaves the store consistent. */
const throwsForB: IndexFunc = (o) => {
  if (o.metadata.name === 'b') throw new Error('index function bug');
  return [String(o.metadata.name)];
};

/** A JavaScript caller's function that returns undefined for some objects instead of an array. */
const sloppy = ((o: KubeObject) => (o.metadata.name === 'c' ? undefined : [`s-${String(o.metadata.namespace)}`])) as unknown as IndexFunc;

function expectIndexConsistent(store: Lister, index: string, expected: Map<string, string[]>): void {
  const values = store.listIndexValues(index);
  for (const value of values) expect(value, `${index} values are strings`).to.be.a('string');
  expect(new Set(values), `${index} values`).to.deep.equal(new Set(expected.keys()));
  for (const [value, keys] of expected) {
    expect(new Set(store.indexKeys(index, value)), `${index}[${value}]`).to.deep.equal(new Set(keys));
    expect(store.byIndex(index, value).map(keyOrUndefined).sort()).to.deep.equal([...keys].sort());
  }
}

/** The index a pure function should produce over the model's objects (a throw leaves the object out). */
function modelIndex(objects: Map<string, KubeObject>, func: IndexFunc): Map<string, string[]> {
  const index = new Map<string, string[]>();
  for (const [key, o] of objects) {
    let values: readonly unknown[] = [];
    try {
      const got: unknown = func(o);
      values = Array.isArray(got) ? got : [];
    } catch {
      values = [];
    }
    for (const value of new Set(values)) {
      if (typeof value !== 'string') continue;
      index.set(value, [...(index.get(value) ?? []), key]);
    }
  }
  return index;
}

/**
 * The forms objects reach the store in: as they are, and as `listWatch({ compact: true })`
 * emits them (read from their JSON bytes into compact views; readers get them decoded and
 * frozen). The store's properties are the same for both; only what "the stored object" is
 * differs: the object itself, or its decoded form.
 */
interface ObjectForm {
  name: string;
  events(events: ListWatchEvent[]): ListWatchEvent[];
  expectStored(stored: KubeObject | undefined, object: KubeObject, key: string): void;
}

const asIs: ObjectForm = {
  name: 'the store',
  events: (events) => events,
  expectStored: (stored, o, key) => expect(stored, key).to.equal(o),
};

const compact: ObjectForm = {
  name: 'the compact store (objects as listWatch({ compact: true }) emits them)',
  events: (events) => {
    const codec = new CompactCodec({ dropManagedFields: false, transformed: false });
    return events.map((e) => {
      if (!('object' in e) || e.object === null || typeof e.object !== 'object' || Array.isArray(e.object)) return e;
      return { ...e, object: codec.item(Buffer.from(JSON.stringify(e.object))) as KubeObject };
    });
  },
  expectStored: (stored, o, key) => {
    expect(stored, key).to.deep.equal(readable(o));
    expect(Object.isFrozen(stored), `${key} is frozen`).to.equal(true);
  },
};

describe('fuzz: odd objects through objectKey, deltas() and indexer()', () => {
  it('keys any value correctly or throws an InvalidObjectError that says what is wrong', () => {
    fc.assert(
      fc.property(object, (o) => {
        let key: string;
        try {
          key = objectKey(o);
        } catch (error) {
          expect(error).to.be.instanceOf(InvalidObjectError);
          expect((error as Error).message).to.match(/^cannot key /);
          return;
        }
        const meta = o.metadata as { name: unknown; namespace?: unknown };
        expect(meta.name).to.be.a('string').and.not.equal('');
        const namespace = typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : undefined;
        expect(key).to.equal(namespace === undefined ? meta.name : `${namespace}/${meta.name as string}`);
        // The key must name this object and no other: splitting it gives its namespace and name back.
        expect(splitKey(key)).to.deep.equal({ namespace, name: meta.name });
      }),
      { numRuns: 2000 },
    );
  });

  /**
   * Runs `events` through deltas() and an indexer over `indexers`, checking
   * after every event that the store equals the model; stops at the first
   * error of the pipeline and returns it.
   */
  function follow(events: readonly ListWatchEvent[], indexers: Indexers, form: ObjectForm): { failure: unknown; completed: boolean; model: Model; store: Store; reported: InvalidObjectError[]; out: StoreEvent[] } {
    const model = new Model();
    const reported: InvalidObjectError[] = [];
    const out: StoreEvent[] = [];
    let failure: unknown;
    let completed = false;
    const input = new Subject<ListWatchEvent>();
    const store = new Store({ indexers });
    input
      .pipe(
        deltas({ onInvalidObject: (error) => reported.push(error) }),
        indexer({ store }),
      )
      .subscribe({ next: (e) => out.push(e), error: (e: unknown) => (failure = e), complete: () => (completed = true) });
    for (const e of events) {
      input.next(e);
      model.apply(e);
      for (const o of out) expect(o.store, 'every event carries the store it was applied to').to.equal(store.lister);
      expect(new Set(store.keys())).to.deep.equal(new Set(model.objects.keys()));
      for (const [key, o] of model.objects) form.expectStored(store.get(key), o, key);
      const rvNow = store.resourceVersion;
      if (rvNow !== undefined) expect(rvNow, 'the store resourceVersion is a string').to.be.a('string');
      if (failure !== undefined) break;
    }
    input.complete();
    expect(reported).to.have.length(model.invalid);
    for (const delta of out) {
      if (isDelta(delta)) expect(objectKey(delta.object), 'every delta is keyed by its object').to.equal(delta.key);
    }
    return { failure, completed, model, store, reported, out };
  }

  for (const form of [asIs, compact]) {
    it(`never stops the stream with index functions that work: unkeyable objects are reported and skipped, and the store equals the model after every event (${form.name})`, () => {
      fc.assert(
        fc.property(fc.array(event, { maxLength: 40 }).map(form.events), (events) => {
          const names: IndexFunc = (o) => [String(o.metadata.name)];
          const { failure, completed, model, store } = follow(events, { app: byLabel('app'), owner: byOwnerUid, name: names }, form);
          expect(failure, 'the pipeline does not error').to.equal(undefined);
          expect(completed).to.equal(true);
          expectIndexConsistent(store, NAMESPACE_INDEX, modelIndex(model.objects, (o) => [(o.metadata.namespace as string | undefined) || '']));
          expectIndexConsistent(store, 'app', modelIndex(model.objects, byLabel('app')));
          expectIndexConsistent(store, 'owner', modelIndex(model.objects, byOwnerUid));
          expectIndexConsistent(store, 'name', modelIndex(model.objects, names));
        }),
        { numRuns: 800 },
      );
    });

    it(`stops the stream at the first object a broken index function fails on, with the store consistent up to there (${form.name})`, () => {
      fc.assert(
        fc.property(fc.array(event, { maxLength: 40 }).map(form.events), (events) => {
          const { failure, completed, model, store } = follow(events, { app: byLabel('app'), owner: byOwnerUid, name: throwsForB, sloppy }, form);
          if (failure !== undefined) {
            // Only the two broken index functions may stop it, each for the one object it fails on.
            expect(failure).to.be.instanceOf(IndexFunctionError);
            const { index, key } = failure as IndexFunctionError;
            expect(`${index} ${splitKey(key).name}`).to.be.oneOf(['name b', 'sloppy c']);
          } else {
            // Then no object the broken functions fail on ever reached the store.
            expect([...model.objects.values()].map((o) => o.metadata.name)).to.not.include.oneOf(['b', 'c']);
          }
          expect(completed).to.equal(failure === undefined);
          expectIndexConsistent(store, NAMESPACE_INDEX, modelIndex(model.objects, (o) => [(o.metadata.namespace as string | undefined) || '']));
          expectIndexConsistent(store, 'app', modelIndex(model.objects, byLabel('app')));
          expectIndexConsistent(store, 'owner', modelIndex(model.objects, byOwnerUid));
          expectIndexConsistent(store, 'name', modelIndex(model.objects, throwsForB));
          expectIndexConsistent(store, 'sloppy', modelIndex(model.objects, sloppy));
        }),
        { numRuns: 800 },
      );
    });
  }

  it('takes an object back under its key only when it is recreated: a uid that is not a string never counts as a new one', () => {
    // The model is a history of objects under one name, not of uids: each step either changes the object
    // that is there or replaces it with a new one (a delete and a create the stream never showed). Each
    // object has its own identity, which the server tells as a uid, or, for some, fails to tell (the uid
    // is missing, empty or not a string). What deltas() must say follows from that history alone: a
    // replacement it can see (both objects' identities told) is Deleted then Added; anything it cannot
    // tell from a change of the same object is an Updated, or a Sync when the version is the same.
    const step = fc.record({
      replaced: fc.boolean(),
      // How the new object's identity reaches the stream (ignored when the object is not replaced).
      told: fc.oneof({ weight: 3, arbitrary: fc.constant<'told' | 'untold'>('told') }, { weight: 1, arbitrary: fc.constant<'told' | 'untold'>('untold') }),
      untoldAs: fc.constantFrom<unknown>(undefined, null, '', 0, 7, true, {}, ['u']),
      newVersion: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => {
        const input = new Subject<ListWatchEvent>();
        const types: string[] = [];
        input.pipe(deltas()).subscribe((d) => types.push(d.type));
        const expected: string[] = [];
        let generation = 0;
        let identityTold = false;
        let uid: unknown;
        let version = 1;
        steps.forEach((s, i) => {
          const first = i === 0;
          const replaced = !first && s.replaced;
          const toldBefore = identityTold;
          if (first || replaced) {
            generation++;
            identityTold = s.told === 'told';
            uid = identityTold ? `object-${generation}` : s.untoldAs;
          }
          // A new object always has a new version; the same one may or may not have changed.
          if (replaced || s.newVersion) version++;
          input.next({ type: 'Modified', object: { metadata: { name: 'a', uid: uid as string, resourceVersion: String(version) } } });
          if (first) expected.push('Added');
          else if (replaced && toldBefore && identityTold) expected.push('Deleted', 'Added');
          else expected.push(replaced || s.newVersion ? 'Updated' : 'Sync');
        });
        expect(types).to.deep.equal(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps indexes right when an index function throws for an object on some calls and not on others', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('Added', 'Updated', 'Deleted'), fc.constantFrom('a', 'b'), fc.constantFrom('x', 'y')), { maxLength: 30 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 50 }), (steps, throws) => {
        let call = 0;
        const flaky: IndexFunc = (o) => {
          if (throws[call++ % throws.length]) throw new Error('flaky index function');
          return [o.metadata.labels?.v as string];
        };
        const store = new Store({ indexers: { flaky } });
        for (const [type, name, v] of steps) {
          const objectNow = { metadata: { name, labels: { v } } };
          try {
            if (type === 'Deleted') store.apply({ type, key: name, object: objectNow });
            else store.apply({ type: store.has(name) ? 'Updated' : 'Added', key: name, object: objectNow });
          } catch (err) {
            expect(err, 'a throwing index function is reported as such').to.be.instanceOf(IndexFunctionError);
          }
          for (const value of store.listIndexValues('flaky')) {
            for (const key of store.indexKeys('flaky', value)) {
              expect(store.has(key), `index entry ${value} -> ${key} is a stored object`).to.equal(true);
              expect(store.get(key)?.metadata.labels?.v, `index entry ${value} -> ${key} is current`).to.equal(value);
            }
          }
        }
      }),
      { numRuns: 1000 },
    );
  });
});
