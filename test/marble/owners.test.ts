import { expect } from 'chai';
import { from, lastValueFrom, toArray, type Observable } from 'rxjs';
import { mapToKeys, mapToOwners, type StoreEvent, type Delta, type DeltaEvent, type KubeObject, type OwnerReference } from 'rxkube';
import { testScheduler } from '../support/objects.js';
import { errorOf, unhandledErrorsOf } from './callbackErrors.support.js';

/** A Pod (or, with a null namespace, a cluster-scoped object) with the given owner references. */
function owned(name: string, owners: Partial<OwnerReference>[], namespace: string | null = 'ns'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      ...(namespace === null ? {} : { namespace }),
      ownerReferences: owners.map((o) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', ...o })),
    },
  };
}

const keyOf = (o: KubeObject) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : `${o.metadata.name}`);
const addedOf = (o: KubeObject): Delta => ({ type: 'Added', key: keyOf(o), object: o });

function keys(events: DeltaEvent[], op: (s: Observable<DeltaEvent>) => Observable<string>): Promise<string[]> {
  return lastValueFrom(from(events).pipe(op, toArray()));
}

const replicaSets = mapToOwners({ group: 'apps', kind: 'ReplicaSet' });

describe('mapToOwners', () => {
  it('maps an owned object to the key of its controller, in the namespace of the owned object (its doc diagram)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const p1 = owned('p1', [{ name: 'rs1', controller: true }]);
      const p2 = owned('p2', []);
      const values: Record<string, DeltaEvent> = {
        a: addedOf(p1),
        u: { type: 'Updated', key: 'ns/p2', object: p2, old: p2 },
        d: { type: 'Deleted', key: 'ns/p1', object: p1 },
      };
      expectObservable(cold('a-u-d|', values).pipe(replicaSets)).toBe('a---d|', { a: 'ns/rs1', d: 'ns/rs1' });
    });
  });

  it('ignores references that are not the controller, or of another kind or group, in any version of the group', async () => {
    const pod = owned('p', [
      { name: 'not-controller' },
      { name: 'controller-false', controller: false },
      { name: 'other-kind', kind: 'Deployment', controller: true },
      { name: 'other-group', apiVersion: 'extensions.example.com/v1', controller: true },
      { name: 'core-group', apiVersion: 'v1', controller: true },
      { name: 'beta-version', apiVersion: 'apps/v1beta2', controller: true },
    ]);
    expect(await keys([addedOf(pod)], replicaSets)).to.deep.equal(['ns/beta-version']);
    expect(await keys([addedOf(pod)], mapToOwners({ group: '', kind: 'ReplicaSet' }))).to.deep.equal(['ns/core-group']);
  });

  it('skips owner references of a corrupt object that are not objects, and goes on with the rest', async () => {
    const pod = owned('p', [{ name: 'rs1', controller: true }]);
    pod.metadata.ownerReferences = [null, 'rs0', 7, ...(pod.metadata.ownerReferences ?? [])] as unknown as OwnerReference[];
    expect(await keys([addedOf(pod)], replicaSets)).to.deep.equal(['ns/rs1']);
  });

  it('triggers both the new and the old controller when an update changes the owner, and one owner once', async () => {
    const before = owned('p', [{ name: 'old', controller: true }]);
    const after = owned('p', [{ name: 'new', controller: true }]);
    const events: DeltaEvent[] = [
      { type: 'Updated', key: 'ns/p', object: after, old: before },
      { type: 'Updated', key: 'ns/p', object: after, old: after },
      { type: 'Sync', key: 'ns/p', object: after, old: after },
    ];
    expect(await keys(events, replicaSets)).to.deep.equal(['ns/new', 'ns/old', 'ns/new', 'ns/new']);
  });

  it('triggers the owner of a deleted object whose final state is unknown', async () => {
    const pod = owned('p', [{ name: 'rs', controller: true }]);
    expect(await keys([{ type: 'Deleted', key: 'ns/p', object: pod, finalStateUnknown: true }], replicaSets)).to.deep.equal(['ns/rs']);
  });

  it('keys a cluster-scoped owner by its name alone', async () => {
    const pv = owned('vol', [{ name: 'class-a', apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', controller: true }], null);
    const pod = owned('p', [{ name: 'node-1', apiVersion: 'v1', kind: 'Node', controller: true }]);
    expect(await keys([addedOf(pv)], mapToOwners({ group: 'storage.k8s.io', kind: 'StorageClass', clusterScoped: true }))).to.deep.equal(['class-a']);
    expect(await keys([addedOf(pod)], mapToOwners({ group: '', kind: 'Node', clusterScoped: true }))).to.deep.equal(['node-1']);
  });

  it('triggers nothing for a cluster-scoped object that names a namespaced owner', async () => {
    const clusterScoped = owned('c', [{ name: 'rs', controller: true }], null);
    expect(await keys([addedOf(clusterScoped)], replicaSets)).to.deep.equal([]);
  });

  it('passes list markers by without a key, and takes store events as they come', async () => {
    const pod = owned('p', [{ name: 'rs', controller: true }]);
    const events = [{ type: 'Synced', resourceVersion: '1' }, addedOf(pod), { type: 'Bookmark', resourceVersion: '2' }] as DeltaEvent[];
    expect(await keys(events, replicaSets)).to.deep.equal(['ns/rs']);
    const fromStore = (s: Observable<StoreEvent>): Observable<string> => s.pipe(replicaSets);
    expect(fromStore).to.be.a('function');
  });

  it('errors, naming itself and the delta, on an object it cannot read the owner references of', () => {
    let caught: { error?: unknown } = {};
    const unhandled = unhandledErrorsOf(({ cold }) => {
      const broken = { type: 'Added', key: 'ns/p', object: {} } as unknown as Delta;
      caught = errorOf(cold<Delta>('a', { a: broken }).pipe(replicaSets));
    });
    expect(unhandled).to.deep.equal([]);
    expect((caught.error as Error).message).to.match(/^mapToOwners: reading the owner references threw on Added "ns\/p": /);
    expect((caught.error as Error).cause).to.be.instanceOf(TypeError);
  });

  it('refuses an owner kind without a kind or a group, naming what is missing', () => {
    expect(() => mapToOwners({ group: 'apps', kind: '' })).to.throw(TypeError, 'mapToOwners: kind must be a non-empty string');
    expect(() => mapToOwners({ kind: 'ReplicaSet' } as unknown as { group: string; kind: string })).to.throw(
      TypeError,
      "mapToOwners: group must be a string ('' for the core group), got undefined",
    );
  });
});

describe('mapToKeys', () => {
  const cm = (name: string, labels?: Record<string, string>): KubeObject => ({ metadata: { name, namespace: 'ns', ...(labels ? { labels } : {}) } });

  it('emits the key, the keys or nothing that the function returns per delta, and skips list markers (its doc diagram)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const values: Record<string, DeltaEvent> = {
        a: addedOf(cm('a', { app: 'web' })),
        s: { type: 'Synced', resourceVersion: '1' },
        b: { type: 'Updated', key: 'ns/b', object: cm('b'), old: cm('b') },
      };
      const op = mapToKeys((d) => d.object.metadata.labels?.['app']);
      expectObservable(cold('a-s-b|', values).pipe(op)).toBe('a----|', { a: 'web' });
    });
  });

  it('spreads an iterable of keys, in order', async () => {
    const op = mapToKeys((d) => new Set([`${d.key}-1`, `${d.key}-2`]));
    expect(await keys([addedOf(cm('x'))], op)).to.deep.equal(['ns/x-1', 'ns/x-2']);
    expect(await keys([addedOf(cm('x'))], mapToKeys(() => null))).to.deep.equal([]);
  });

  it('errors, naming the function and the delta, when the function throws, and calls it no more', () => {
    const thrown = new Error('no such app');
    const asked: string[] = [];
    const appOf = (d: Delta): string | undefined => {
      asked.push(d.key);
      if (d.key === 'ns/b') throw thrown;
      return d.object.metadata.labels?.['app'];
    };
    let caught: { error?: unknown } = {};
    const unhandled = unhandledErrorsOf(({ cold, expectObservable, expectSubscriptions }) => {
      const input = cold<DeltaEvent>('a-s-b-c|', {
        a: addedOf(cm('a', { app: 'web' })),
        s: { type: 'Synced', resourceVersion: '1' },
        b: { type: 'Updated', key: 'ns/b', object: cm('b'), old: cm('b') },
        c: addedOf(cm('c', { app: 'db' })),
      });
      expectObservable(input.pipe(mapToKeys(appOf))).toBe('a---#', { a: 'web' }, new Error('mapToKeys: the function "appOf" threw on Updated "ns/b": no such app'));
      expectSubscriptions(input.subscriptions).toBe('^---!');
    });
    expect(unhandled).to.deep.equal([]);
    expect(asked).to.deep.equal(['ns/a', 'ns/b']);
    testScheduler().run(({ cold }) => {
      caught = errorOf(cold<Delta>('b', { b: { type: 'Updated', key: 'ns/b', object: cm('b'), old: cm('b') } }).pipe(mapToKeys(appOf)));
    });
    expect((caught.error as Error).cause).to.equal(thrown);
  });

  it('errors, emitting none of its keys, when an iterable the function returns throws as it is read', () => {
    const seen: string[] = [];
    const unhandled = unhandledErrorsOf(({ cold }) => {
      cold<Delta>('x-y|', { x: addedOf(cm('x')), y: addedOf(cm('y')) })
        .pipe(
          mapToKeys(function* (d) {
            yield `${d.key}-1`;
            throw new RangeError('ran out');
          }),
        )
        .subscribe({
          next: (k) => seen.push(k),
          error: (err: unknown) => seen.push(`error: ${(err as Error).message}`),
          complete: () => seen.push('complete'),
        });
    });
    expect(unhandled).to.deep.equal([]);
    expect(seen).to.deep.equal(['error: mapToKeys: the function threw on Added "ns/x": ran out']);
  });

  it('errors, naming the delta, when the function returns something that is not keys', async () => {
    const bad = (value: unknown) => keys([addedOf(cm('x'))], mapToKeys(() => value as string));
    await expectRejection(bad(42), 'mapToKeys: the function returned number 42 for "ns/x"; expected an object key, an iterable of them, or undefined');
    await expectRejection(bad(''), 'mapToKeys: the function returned an empty string for "ns/x"');
    await expectRejection(bad({}), 'returned an object that is not iterable');
    await expectRejection(bad(['ok', 7]), 'mapToKeys: the function gave number 7 among the keys for "ns/x"; expected object keys');
  });
});

async function expectRejection(promise: Promise<unknown>, message: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).to.be.instanceOf(TypeError);
  expect((error as Error).message).to.include(message);
}
