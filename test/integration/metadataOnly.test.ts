import { AppsV1Api, CoreV1Api, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Subscription } from 'rxjs';
import { controller, listWatch, silentLogger, type KubeObject, type ListWatchEvent } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { kubeConfigFor } from '../support/kubeConfigFor.js';
import { waitFor } from '../support/waitFor.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };
const LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const OBJECT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

/**
 * Metadata-only reads, as client-go's metadata informer makes them: the
 * embedded server answers kube's `PartialObjectMetadata` negotiation (to
 * client-node asking with that Accept header, and to `listWatch({
 * metadataOnly })`), and plain requests still get whole objects.
 */
describe('metadata-only lists and watches against the embedded API server', () => {
  let server: ApiServer;
  let kc: KubeConfig;
  let core: CoreV1Api;
  const running: Subscription[] = [];

  beforeEach(async () => {
    server = await startApiServer({ bookmarkIntervalMs: 50 });
    kc = server.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    for (const name of ['a', 'b']) await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, labels: { app: name } }, data: { big: 'x'.repeat(1000) } } });
  });

  afterEach(async () => {
    for (const s of running.splice(0)) s.unsubscribe();
    await server.close();
  });

  it('answers client-node a PartialObjectMetadataList, and a PartialObjectMetadata for a get, with no body fields', async () => {
    const list = (await core.listNamespacedConfigMap({ namespace: 'default', limit: 1 }, setHeaderOptions('Accept', LIST))) as unknown as Record<string, unknown> & {
      items: Record<string, unknown>[];
      metadata: Record<string, unknown>;
    };
    expect(list.kind).to.equal('PartialObjectMetadataList');
    expect(list.apiVersion).to.equal('meta.k8s.io/v1');
    expect(list.metadata.resourceVersion).to.be.a('string');
    expect(list.metadata._continue ?? list.metadata.continue).to.be.a('string');
    expect(list.items).to.have.length(1);
    expect(list.items[0]?.kind).to.equal('PartialObjectMetadata');
    expect(list.items[0]?.apiVersion).to.equal('meta.k8s.io/v1');
    expect(list.items[0]).not.to.have.property('data');
    expect((list.items[0]?.metadata as { name: string }).name).to.equal('a');

    const one = (await core.readNamespacedConfigMap({ namespace: 'default', name: 'b' }, setHeaderOptions('Accept', OBJECT))) as unknown as Record<string, unknown>;
    expect(one.kind).to.equal('PartialObjectMetadata');
    expect(one).not.to.have.property('data');
    expect((one.metadata as { labels: Record<string, string> }).labels).to.deep.equal({ app: 'b' });

    // Plain JSON first in the header wins, as kube's negotiation picks the first type it can serve.
    const whole = await core.readNamespacedConfigMap({ namespace: 'default', name: 'b' }, setHeaderOptions('Accept', `application/json, ${OBJECT}`));
    expect(whole.data?.big).to.have.length(1000);
    // And without it, client-node gets whole objects as ever.
    expect((await core.listNamespacedConfigMap({ namespace: 'default' })).items.map((c) => c.data?.big?.length)).to.deep.equal([1000, 1000]);
  });

  it('answers 406 to a list asked for as one object, and a get asked for as a list', async () => {
    const fails = async (request: Promise<unknown>) => request.then(() => undefined, (err: { code?: number; body?: unknown }) => err);
    const listAsObject = await fails(core.listNamespacedConfigMap({ namespace: 'default' }, setHeaderOptions('Accept', OBJECT)));
    expect(listAsObject?.code).to.equal(406);
    expect(String(listAsObject?.body)).to.contain('you requested PartialObjectMetadata, but the requested object is a list');
    const getAsList = await fails(core.readNamespacedConfigMap({ namespace: 'default', name: 'a' }, setHeaderOptions('Accept', LIST)));
    expect(getAsList?.code).to.equal(406);
  });

  it('lists and watches only metadata with listWatch({ metadataOnly }), across adds, changes and deletes', async () => {
    const events: ListWatchEvent[] = [];
    running.push(listWatch(kc, configmaps, { metadataOnly: true, scheduler: dilatedScheduler(100), pageSize: 1 }).subscribe((e) => events.push(e)));
    await waitFor(() => server.openWatches() === 1, 'the watch');
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'c' }, data: { big: 'y'.repeat(1000) } } });
    await core.patchNamespacedConfigMap({ namespace: 'default', name: 'a', body: { metadata: { labels: { app: 'changed' } } } }, setHeaderOptions('Content-Type', 'application/merge-patch+json'));
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'b' });
    await waitFor(() => events.some((e) => e.type === 'Deleted'), 'the delete');
    const objects = events.filter((e): e is Extract<ListWatchEvent, { object: KubeObject }> => 'object' in e);
    expect(objects.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(['Listed a', 'Listed b', 'Added c', 'Modified a', 'Deleted b']);
    for (const { object } of objects) {
      expect(object.kind).to.equal('PartialObjectMetadata');
      expect(object.apiVersion).to.equal('meta.k8s.io/v1');
      expect(Object.keys(object).sort()).to.deep.equal(['apiVersion', 'kind', 'metadata']);
    }
    expect(objects[3]?.object.metadata.labels).to.deep.equal({ app: 'changed' });
    const reads = server.requestLog.filter((r) => r.resource === 'configmaps' && (r.verb === 'list' || r.verb === 'watch'));
    expect(reads.every((r) => r.status === 200)).to.equal(true);
  });

  it('shares equal labels between the objects it hands on, frozen, and not the values that differ', async () => {
    for (const name of ['c', 'd']) await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, labels: { tier: 'cache' } } } });
    const events: ListWatchEvent[] = [];
    running.push(listWatch(kc, configmaps, { metadataOnly: true, scheduler: dilatedScheduler(100) }).subscribe((e) => events.push(e)));
    await waitFor(() => events.some((e) => e.type === 'Synced'), 'the list');
    const byName = new Map(events.flatMap((e) => ('object' in e ? [[e.object.metadata.name, e.object] as const] : [])));
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => byName.get(name) as KubeObject);
    expect(c?.metadata.labels).to.equal(d?.metadata.labels);
    expect(c?.metadata.labels).to.deep.equal({ tier: 'cache' });
    expect(Object.isFrozen(c?.metadata.labels)).to.equal(true);
    expect(a?.metadata.labels).to.deep.equal({ app: 'a' });
    expect(b?.metadata.labels).to.deep.equal({ app: 'b' });
  });

  it("asks with kube's Accept headers, and keeps only metadata from a server that answers whole objects", async () => {
    const accepts: string[] = [];
    const plain = http.createServer((req, res) => {
      accepts.push(`${req.url?.includes('watch=1') ? 'watch' : 'list'} ${req.headers.accept ?? ''}`);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (req.url?.includes('watch=1')) return void res.write(`${JSON.stringify({ type: 'ADDED', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'w', resourceVersion: '2' }, data: { x: '1' } } })}\n`);
      res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [{ metadata: { name: 'l' }, data: { x: '1' } }] }));
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const objects: KubeObject[] = [];
      running.push(
        listWatch(kubeConfigFor(`http://127.0.0.1:${(plain.address() as AddressInfo).port}`), configmaps, { metadataOnly: true, scheduler: dilatedScheduler(100) }).subscribe(
          (e) => 'object' in e && objects.push(e.object),
        ),
      );
      await waitFor(() => objects.length === 2, 'the list and the watch event');
      expect(accepts.slice(0, 2)).to.deep.equal([`list ${LIST},application/json`, `watch ${OBJECT},application/json`]);
      expect(objects).to.deep.equal([
        { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'l' } },
        { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'w', resourceVersion: '2' } },
      ]);
    } finally {
      for (const s of running.splice(0)) s.unsubscribe();
      plain.closeAllConnections();
      await new Promise((resolve) => plain.close(resolve));
    }
  });

  it('maps owned objects watched metadata-only to their owner, the owned store holding only metadata', async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    const owner = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web' }] } } },
      },
    });
    const reconciled: string[] = [];
    const ctl = controller({
      name: 'owner',
      kubeConfig: kc,
      for: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespace: 'default' },
      owns: [{ group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default', metadataOnly: true }],
      logger: silentLogger,
      scheduler: dilatedScheduler(100),
      reconcile: (key) => void reconciled.push(key),
    });
    running.push(ctl.subscribe());
    await waitFor(() => reconciled.length === 1, 'the first reconcile');
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: {
        metadata: { name: 'owned', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: owner.metadata?.uid as string, controller: true }] },
        data: { big: 'z'.repeat(1000) },
      },
    });
    await waitFor(() => reconciled.length === 2, 'the owner reconciled for its configmap');
    expect(reconciled).to.deep.equal(['default/web', 'default/web']);
    const stored = ctl.stores.configmaps?.get('default/owned');
    expect(stored?.kind).to.equal('PartialObjectMetadata');
    expect(stored).not.to.have.property('data');
  });
});
