import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Subscription } from 'rxjs';
import { InformerFactory, deltas, dropManagedFields, indexer, listWatch, type KubeObject, type Lister, type StoreEvent } from 'rxkube';
import { inspect } from 'node:util';
import { byLabel } from '../../src/store/indexFunctions.js';
import { compactRecordOf } from '../../src/compact/compactObject.js';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { raw } from './apiserver.helpers.js';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };

/** Odd corners a scanner could trip on: escapes, unicode, braces and quotes inside strings. */
const awkward = { 'a.json': '{"nested":["}",{"q":"\\""}]}', unicode: 'ünïcødé 名前 😀', newline: 'line\nnext\ttab', slash: 'C:\\dir\\' };

function deepFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  return Object.isFrozen(value) && Object.values(value).every(deepFrozen);
}

/**
 * The compact cache end to end: the real client-node writes objects to the
 * embedded API server, and an informer built from `listWatch({ compact: true })`
 * → `deltas()` → `indexer()` reads them; its readers get ordinary frozen
 * objects equal to what the server holds, through list pages and watch
 * events, updates and deletes.
 */
describe('the compact cache against the embedded API server, written by client-node', () => {
  let server: ApiServer;
  let kc: KubeConfig;
  let core: CoreV1Api;
  const running: Subscription[] = [];

  beforeEach(async () => {
    server = await startApiServer({ bookmarkIntervalMs: 50 });
    kc = server.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    for (const name of ['a', 'b', 'c']) {
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, labels: { app: name === 'c' ? 'db' : 'web' }, annotations: { note: awkward['a.json'] } }, data: { ...awkward, name } } });
    }
  });

  afterEach(async () => {
    for (const s of running.splice(0)) s.unsubscribe();
    await server.close();
  });

  /** What the server holds under `name`, as its JSON says (client-node would turn timestamps into Dates). */
  async function stored(name: string): Promise<Record<string, unknown>> {
    const answer = await raw(server, 'GET', `/api/v1/namespaces/default/configmaps/${name}`);
    expect(answer.status).to.equal(200);
    return answer.json();
  }

  /** `compact` is true unless given; `'unsaid'` leaves it to the source's default. */
  function informer(options: { transform?: (o: KubeObject) => KubeObject; metadataOnly?: boolean; compact?: boolean | 'unsaid' } = {}): { store: () => Lister | undefined; deltaObjects: KubeObject[] } {
    let lister: Lister | undefined;
    const deltaObjects: KubeObject[] = [];
    const { compact = true, ...rest } = options;
    running.push(
      listWatch(kc, configmaps, { ...(compact === 'unsaid' ? {} : { compact }), pageSize: 2, scheduler: dilatedScheduler(100), ...rest })
        .pipe(deltas(), indexer({ indexers: { app: byLabel('app') } }))
        .subscribe((e: StoreEvent) => {
          lister = e.store;
          if ('object' in e) deltaObjects.push(e.object);
        }),
    );
    return { store: () => lister, deltaObjects };
  }

  it('lists and watches into a store whose readers get frozen ordinary objects equal to what the server holds', async () => {
    const { store, deltaObjects } = informer();
    await waitFor(() => store()?.synced === true && server.openWatches() === 1, 'the list and the watch');
    const lister = store() as Lister;
    for (const name of ['a', 'b', 'c']) {
      const got = lister.get(`default/${name}`);
      expect(got).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', ...(await stored(name)) });
      expect(deepFrozen(got), `${name} is frozen through`).to.equal(true);
      expect(got?.metadata.managedFields, 'managedFields kept without a transform').to.be.an('array');
    }
    expect(lister.byIndex('app', 'web').map((o) => o.metadata.name).sort()).to.deep.equal(['a', 'b']);
    // Reading the same object twice pays once: the decoded object is cached.
    expect(lister.get('default/a')).to.equal(lister.get('default/a'));

    await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: { metadata: { name: 'a', labels: { app: 'db' } }, data: { changed: '{"}": "]"}' } } });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'd' }, data: { big: 'x'.repeat(100_000) } } });
    await core.deleteNamespacedConfigMap({ name: 'b', namespace: 'default' });
    await waitFor(() => lister.get('default/a')?.metadata.labels?.app === 'db' && lister.has('default/d') && !lister.has('default/b'), 'the watch events');
    expect(lister.get('default/a')).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', ...(await stored('a')) });
    expect(lister.get('default/d')).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', ...(await stored('d')) });
    expect(lister.byIndex('app', 'db').map((o) => o.metadata.name).sort()).to.deep.equal(['a', 'c']);
    expect(lister.list().every(deepFrozen)).to.equal(true);

    // What deltas carry is read-only, and reads as the object.
    const last = deltaObjects.at(-1) as KubeObject & { data?: unknown };
    expect(last.metadata.name).to.equal('b');
    expect(() => ((last as { kind?: string }).kind = 'x')).to.throw(TypeError);
    expect(JSON.parse(JSON.stringify(deltaObjects.find((o) => o.metadata.name === 'd')))).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', ...(await stored('d')) });
  });

  it('is the default, metadataOnly included, but for a transform of your own; compact: false keeps the parsed objects; console.log shows a view as its object', async () => {
    const own = (o: KubeObject) => o;
    const informers = [
      informer({ compact: 'unsaid' }),
      informer({ compact: false }),
      informer({ compact: 'unsaid', metadataOnly: true }),
      informer({ compact: false, metadataOnly: true }),
      informer({ compact: 'unsaid', transform: dropManagedFields }),
      informer({ compact: 'unsaid', transform: own }),
      informer({ compact: true, transform: own }),
    ];
    await waitFor(() => informers.every((i) => i.store()?.synced === true), 'the lists');
    const [byDefault, off, metadataOnly, metadataOnlyOff, dropping, owned, ownedCompact] = informers.map((i) => i.deltaObjects[0] as KubeObject);
    expect(compactRecordOf(byDefault), 'a view by default').to.not.equal(undefined);
    expect(compactRecordOf(off), 'compact: false').to.equal(undefined);
    expect(compactRecordOf(metadataOnly), 'metadataOnly').to.not.equal(undefined);
    expect(compactRecordOf(metadataOnlyOff), 'metadataOnly, compact: false').to.equal(undefined);
    expect(metadataOnly).to.deep.equal(metadataOnlyOff);
    expect(compactRecordOf(dropping), 'dropManagedFields, done on the bytes').to.not.equal(undefined);
    expect(compactRecordOf(owned), 'a transform of your own may rewrite anything: parsed').to.equal(undefined);
    expect(compactRecordOf(ownedCompact), 'unless told compact: true').to.not.equal(undefined);
    expect(byDefault).to.deep.equal(off);
    expect(() => structuredClone(off)).to.not.throw();
    // Sorted: the view has apiVersion, kind and metadata first, and metadata's scalars before its nested values.
    expect(inspect(byDefault, { depth: 5, sorted: true })).to.equal(inspect(off, { depth: 5, sorted: true }));
    expect(inspect({ nested: byDefault }, { depth: 1, sorted: true })).to.equal(inspect({ nested: off }, { depth: 1, sorted: true }));
  });

  it('drops managedFields with transform: dropManagedFields, and keeps the rest as the server holds it', async () => {
    const { store } = informer({ transform: dropManagedFields });
    await waitFor(() => store()?.synced === true && server.openWatches() === 1, 'the list and the watch');
    await core.patchNamespacedConfigMap({ name: 'c', namespace: 'default', body: [{ op: 'add', path: '/data/more', value: '"quoted"' }] });
    const lister = store() as Lister;
    await waitFor(() => (lister.get('default/c') as { data?: Record<string, string> } | undefined)?.data?.more === '"quoted"', 'the patch');
    for (const name of ['a', 'c']) {
      const { metadata, ...rest } = await stored(name);
      const { managedFields: _dropped, ...kept } = metadata as Record<string, unknown>;
      expect(lister.get(`default/${name}`)).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', ...rest, metadata: kept });
    }
  });

  it('is an InformerFactory option, for every informer of a controller (controller({ informers }))', async () => {
    const factory = new InformerFactory(kc, { compact: true, scheduler: dilatedScheduler(100) });
    const informer = factory.informer(configmaps, { indexers: { app: byLabel('app') } });
    running.push(informer.events.subscribe());
    await waitFor(() => informer.store.synced && server.openWatches() === 1, 'the list and the watch');
    await core.patchNamespacedConfigMap({ name: 'a', namespace: 'default', body: [{ op: 'replace', path: '/metadata/labels/app', value: 'db' }] });
    await waitFor(() => informer.store.byIndex('app', 'db').length === 2, 'the patch');
    for (const name of ['a', 'b', 'c']) {
      const got = informer.store.get(`default/${name}`);
      expect(got).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', ...(await stored(name)) });
      expect(deepFrozen(got)).to.equal(true);
    }
  });

  it('with metadataOnly too (with and without dropManagedFields): PartialObjectMetadata equal to the server\'s metadata, through the list and a watch event', async () => {
    for (const transform of [undefined, dropManagedFields]) {
      const { store } = informer({ metadataOnly: true, ...(transform !== undefined ? { transform } : {}) });
      await waitFor(() => store()?.synced === true, 'the list');
      await core.patchNamespacedConfigMap({ name: 'b', namespace: 'default', body: [{ op: 'add', path: '/metadata/labels/tier', value: transform === undefined ? 'one' : 'two' }] });
      const lister = store() as Lister;
      await waitFor(() => lister.get('default/b')?.metadata.labels?.tier === (transform === undefined ? 'one' : 'two'), 'the watch event');
      for (const name of ['a', 'b', 'c']) {
        const { metadata } = await stored(name);
        const { managedFields: _dropped, ...kept } = metadata as Record<string, unknown>;
        const got = lister.get(`default/${name}`);
        expect(got).to.deep.equal({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: transform === undefined ? metadata : kept });
        expect(deepFrozen(got)).to.equal(true);
      }
      for (const s of running.splice(0)) s.unsubscribe();
    }
  });
});
