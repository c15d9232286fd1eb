import type { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { failure, pod, raw, startWithClients } from './apiserver.helpers.js';

describe('embedded API server: lists', () => {
  let server: ApiServer;
  let core: CoreV1Api;

  beforeEach(async () => ({ server, core } = await startWithClients({ historyWindow: 50 })));
  afterEach(() => server.close());

  async function configMaps(namespace: string, names: string[], labels: Record<string, string> = {}): Promise<void> {
    for (const name of names) await core.createNamespacedConfigMap({ namespace, body: { metadata: { name, labels } } });
  }

  it('lists in storage order with the list resourceVersion', async () => {
    await configMaps('default', ['b', 'a', 'c']);
    const list = await core.listNamespacedConfigMap({ namespace: 'default' });
    expect(list.items.map((i) => i.metadata?.name)).to.deep.equal(['a', 'b', 'c']);
    expect(list.metadata?.resourceVersion).to.equal(server.resourceVersion);
    expect(list.kind).to.equal('ConfigMapList');
  });

  it('lists across all namespaces at /api/v1/configmaps, namespace by namespace', async () => {
    await core.createNamespace({ body: { metadata: { name: 'a-ns' } } });
    await configMaps('default', ['x']);
    await configMaps('a-ns', ['y']);
    const list = await core.listConfigMapForAllNamespaces();
    expect(list.items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`)).to.deep.equal(['a-ns/y', 'default/x']);
  });

  it('keeps namespaces apart: a namespace whose name prefixes another is not mixed in', async () => {
    await core.createNamespace({ body: { metadata: { name: 'team' } } });
    await core.createNamespace({ body: { metadata: { name: 'team-b' } } });
    await configMaps('team', ['a']);
    await configMaps('team-b', ['b']);
    const list = await core.listNamespacedConfigMap({ namespace: 'team' });
    expect(list.items.map((i) => i.metadata?.name)).to.deep.equal(['a']);
  });

  it('filters by label selector: =, ==, !=, in, notin, exists and !key', async () => {
    await configMaps('default', ['gold'], { tier: 'gold', app: 'web' });
    await configMaps('default', ['silver'], { tier: 'silver' });
    await configMaps('default', ['none']);
    const names = async (labelSelector: string): Promise<(string | undefined)[]> =>
      (await core.listNamespacedConfigMap({ namespace: 'default', labelSelector })).items.map((i) => i.metadata?.name);
    expect(await names('tier=gold')).to.deep.equal(['gold']);
    expect(await names('tier==silver')).to.deep.equal(['silver']);
    expect(await names('tier!=gold')).to.deep.equal(['none', 'silver']);
    expect(await names('tier in (gold,silver)')).to.deep.equal(['gold', 'silver']);
    expect(await names('tier notin (gold)')).to.deep.equal(['none', 'silver']);
    expect(await names('app')).to.deep.equal(['gold']);
    expect(await names('!tier')).to.deep.equal(['none']);
  });

  it('filters by field selector on metadata.name and metadata.namespace, and pod fields', async () => {
    await configMaps('default', ['a', 'b']);
    const byName = await core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.name=b' });
    expect(byName.items.map((i) => i.metadata?.name)).to.deep.equal(['b']);
    const byNs = await core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.namespace!=default' });
    expect(byNs.items).to.have.length(0);
    await core.createNamespacedPod({ namespace: 'default', body: pod('p1') });
    const running = await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'status.phase=Running' });
    expect(running.items).to.have.length(0);
    const pending = await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'status.phase=Pending' });
    expect(pending.items).to.have.length(1);
  });

  it('answers a bad selector or an unsupported field with 400 BadRequest naming it', async () => {
    const bad = await failure(core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'a in (b' }));
    expect(bad.code).to.equal(400);
    expect(bad.body.reason).to.equal('BadRequest');
    const field = await failure(core.listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.nope=x' }));
    expect(field.code).to.equal(400);
    expect(String(field.body.message)).to.contain('field label not supported: spec.nope');
  });

  it('pages with limit and continue, reporting the remaining item count', async () => {
    await configMaps('default', ['a', 'b', 'c', 'd', 'e']);
    const first = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2 });
    expect(first.items.map((i) => i.metadata?.name)).to.deep.equal(['a', 'b']);
    expect(first.metadata?.remainingItemCount).to.equal(3);
    const second = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2, _continue: first.metadata?._continue });
    expect(second.items.map((i) => i.metadata?.name)).to.deep.equal(['c', 'd']);
    const third = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2, _continue: second.metadata?._continue });
    expect(third.items.map((i) => i.metadata?.name)).to.deep.equal(['e']);
    expect(third.metadata?._continue).to.equal(undefined);
    expect(third.metadata?.resourceVersion).to.equal(first.metadata?.resourceVersion);
  });

  it('serves every page of a list from the snapshot of its first page, whatever changed in between', async () => {
    await configMaps('default', ['a', 'b', 'c', 'd']);
    const first = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2 });
    await core.deleteNamespacedConfigMap({ name: 'c', namespace: 'default' });
    await configMaps('default', ['bb', 'z']);
    await core.replaceNamespacedConfigMap({ name: 'd', namespace: 'default', body: { metadata: { name: 'd', labels: { changed: 'yes' } } } });
    const rest = await core.listNamespacedConfigMap({ namespace: 'default', limit: 10, _continue: first.metadata?._continue });
    expect(rest.items.map((i) => i.metadata?.name)).to.deep.equal(['c', 'd']);
    expect(rest.items[1].metadata?.labels).to.equal(undefined);
    expect(rest.metadata?.resourceVersion).to.equal(first.metadata?.resourceVersion);
    const now = await core.listNamespacedConfigMap({ namespace: 'default' });
    expect(now.items.map((i) => i.metadata?.name)).to.deep.equal(['a', 'b', 'bb', 'd', 'z']);
  });

  it('applies selectors on every page and leaves remainingItemCount out when filtering', async () => {
    await configMaps('default', ['a', 'c', 'e'], { keep: 'yes' });
    await configMaps('default', ['b', 'd']);
    const first = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2, labelSelector: 'keep=yes' });
    expect(first.items.map((i) => i.metadata?.name)).to.deep.equal(['a', 'c']);
    expect(first.metadata?.remainingItemCount).to.equal(undefined);
    const second = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2, labelSelector: 'keep=yes', _continue: first.metadata?._continue });
    expect(second.items.map((i) => i.metadata?.name)).to.deep.equal(['e']);
  });

  it('answers a continue token older than the history with 410 Expired and a token to go on inconsistently', async () => {
    await configMaps('default', ['a', 'b', 'c']);
    const first = await core.listNamespacedConfigMap({ namespace: 'default', limit: 1 });
    await configMaps('default', ['d']);
    server.faults.compact();
    const { code, body } = await failure(core.listNamespacedConfigMap({ namespace: 'default', limit: 1, _continue: first.metadata?._continue }));
    expect(code).to.equal(410);
    expect(body.reason).to.equal('Expired');
    expect(String(body.message)).to.match(/^The provided continue parameter is too old to display a consistent list result/);
    const token = (body.metadata as { continue?: string }).continue;
    const rest = await core.listNamespacedConfigMap({ namespace: 'default', limit: 10, _continue: token });
    expect(rest.items.map((i) => i.metadata?.name)).to.deep.equal(['b', 'c', 'd']);
  });

  it('expires continue tokens once the history window has moved past their snapshot', async () => {
    await configMaps('default', ['a', 'b']);
    const first = await core.listNamespacedConfigMap({ namespace: 'default', limit: 1 });
    for (let i = 0; i < 60; i++) await core.replaceNamespacedConfigMap({ name: 'b', namespace: 'default', body: { metadata: { name: 'b' }, data: { i: String(i) } } });
    const { code } = await failure(core.listNamespacedConfigMap({ namespace: 'default', limit: 1, _continue: first.metadata?._continue }));
    expect(code).to.equal(410);
  });

  it('refuses a malformed continue token with 400', async () => {
    const res = await raw(server, 'GET', '/api/v1/namespaces/default/configmaps?limit=1&continue=garbage');
    expect(res.status).to.equal(400);
    expect(res.json().message).to.match(/^continue key is not valid/);
  });

  it('reads at an exact past resourceVersion with resourceVersionMatch=Exact', async () => {
    await configMaps('default', ['a']);
    const rv = server.resourceVersion;
    await configMaps('default', ['b']);
    const list = await core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: rv, resourceVersionMatch: 'Exact' });
    expect(list.items.map((i) => i.metadata?.name)).to.deep.equal(['a']);
    expect(list.metadata?.resourceVersion).to.equal(rv);
  });

  it('serves resourceVersion=0 and NotOlderThan from the latest state', async () => {
    await configMaps('default', ['a']);
    const rv = server.resourceVersion;
    await configMaps('default', ['b']);
    const any = await core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: '0' });
    expect(any.items).to.have.length(2);
    const notOlder = await core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: rv, resourceVersionMatch: 'NotOlderThan' });
    expect(notOlder.items).to.have.length(2);
    expect(notOlder.metadata?.resourceVersion).to.equal(server.resourceVersion);
  });

  it('answers a resourceVersion from the future with 504 Timeout "Too large resource version"', async () => {
    const { code, body } = await failure(core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: '999999', resourceVersionMatch: 'NotOlderThan' }));
    expect(code).to.equal(504);
    expect(body.reason).to.equal('Timeout');
    expect(String(body.message)).to.match(/^Too large resource version: 999999, current: \d+$/);
  });

  it('answers an Exact list older than the history with 410 Expired', async () => {
    await configMaps('default', ['a']);
    const rv = server.resourceVersion;
    await configMaps('default', ['b']);
    server.faults.compact();
    const { code, body } = await failure(core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: rv, resourceVersionMatch: 'Exact' }));
    expect(code).to.equal(410);
    expect(body.message).to.equal('The resourceVersion for the provided list is too old.');
  });

  it('refuses resourceVersionMatch without resourceVersion with 422', async () => {
    const { code, body } = await failure(core.listNamespacedConfigMap({ namespace: 'default', resourceVersionMatch: 'Exact' }));
    expect(code).to.equal(422);
    expect(String(body.message)).to.contain('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
  });
});
