import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Subscription } from 'rxjs';
import { InformerFactory, type StoreEvent } from 'rxkube';
import { byLabel } from '../../src/store/indexFunctions.js';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';

const configmaps = { version: 'v1', resource: 'configmaps', namespace: 'default' };

describe('InformerFactory against the embedded API server', () => {
  let server: ApiServer;
  let kc: KubeConfig;
  let core: CoreV1Api;
  const running: Subscription[] = [];

  beforeEach(async () => {
    server = await startApiServer();
    kc = server.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
  });

  afterEach(async () => {
    for (const s of running.splice(0)) s.unsubscribe();
    await server.close();
  });

  const create = (name: string, labels: Record<string, string> = {}) =>
    core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, labels } } });
  const watches = () => server.requestLog.filter((r) => r.verb === 'watch' && r.resource === 'configmaps');

  function collect(events: import('rxjs').Observable<StoreEvent>) {
    const seen: string[] = [];
    running.push(events.subscribe((e) => seen.push('key' in e ? `${e.type}:${e.key}${e.initial ? '*' : ''}` : e.type)));
    return seen;
  }

  it('shares one list-watch and one store among subscribers, and replays the state to a late one', async () => {
    await create('a');
    const factory = new InformerFactory(kc, { scheduler: dilatedScheduler(100) });
    const one = factory.informer(configmaps);
    const two = factory.informer(configmaps);
    expect(two).to.equal(one);
    const first = collect(one.events);
    await waitFor(() => first.includes('Synced'), 'the first list');
    await create('b');
    await waitFor(() => first.includes('Added:default/b'), 'the watch event');
    const late = collect(two.events);
    expect(late).to.deep.equal(['Added:default/a*', 'Added:default/b*', 'Synced']);
    await create('c');
    await waitFor(() => late.includes('Added:default/c') && first.includes('Added:default/c'), 'the live event on both');
    expect(server.requestLog.filter((r) => r.verb === 'list' && r.resource === 'configmaps')).to.have.length(1);
    expect(watches()).to.have.length(1);
    expect(one.store.keys().sort()).to.deep.equal(['default/a', 'default/b', 'default/c']);
  });

  it('keeps separate informers for separate selectors, with the indexes asked for', async () => {
    await create('web-1', { app: 'web' });
    await create('db-1', { app: 'db' });
    const factory = new InformerFactory(kc);
    const web = factory.informer(configmaps, { labelSelector: 'app=web', indexers: { app: byLabel('app') } });
    const all = factory.informer(configmaps, { indexers: { app: byLabel('app') } });
    expect(web).to.not.equal(all);
    collect(web.events);
    collect(all.events);
    await waitFor(() => web.store.synced && all.store.synced && server.openWatches() === 2, 'both lists and watches');
    expect(web.store.keys()).to.deep.equal(['default/web-1']);
    expect(all.store.indexKeys('app', 'db')).to.deep.equal(['default/db-1']);
    expect(watches()).to.have.length(2);
  });

  it('closes the watch when the last subscriber leaves and starts afresh for the next', async () => {
    await create('a');
    const factory = new InformerFactory(kc);
    const informer = factory.informer(configmaps);
    const seen = collect(informer.events);
    await waitFor(() => seen.includes('Synced') && server.openWatches() === 1, 'the watch');
    for (const s of running.splice(0)) s.unsubscribe();
    await waitFor(() => server.openWatches() === 0, 'the watch to close');
    expect(informer.store.size).to.equal(1);
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'a' });
    await create('b');
    const again = collect(informer.events);
    await waitFor(() => again.includes('Synced'), 'the new list');
    // A fresh store: the object deleted while no one watched is simply gone.
    expect(informer.store.keys()).to.deep.equal(['default/b']);
    expect(again).to.deep.equal(['Added:default/b*', 'Synced']);
  });

  it('refuses to add indexes to an informer that has started', async () => {
    const factory = new InformerFactory(kc);
    const informer = factory.informer(configmaps);
    collect(informer.events);
    await waitFor(() => informer.store.synced, 'the list');
    expect(() => factory.informer(configmaps, { indexers: { app: byLabel('app') } })).to.throw(
      'cannot add indexes app to the informer for /api/v1/namespaces/default/configmaps: it has already started',
    );
  });
});
