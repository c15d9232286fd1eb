import type { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Subscription } from 'rxjs';
import { controller, InformerFactory, silentLogger, type Controller, type KubeObject, type ReconcileOutcome } from 'rxkube';
import type { ApiServer } from 'rxkube/testing';
import { modelCrd, startWithClients, widgetCrd } from './apiserver.helpers.js';
import { waitFor } from '../support/waitFor.js';

const widgets = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' };
const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default' };
const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespace: 'default' };
const ref = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' };

describe('dynamic watches against the embedded API server', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let kc: KubeConfig;
  let core: CoreV1Api;
  let extensions: ApiextensionsV1Api;
  let custom: CustomObjectsApi;
  let running: Subscription | undefined;

  beforeEach(async () => {
    ({ server, core, extensions, custom } = await startWithClients({ logger: silentLogger }));
    kc = server.kubeConfig();
  });
  afterEach(async () => {
    running?.unsubscribe();
    running = undefined;
    await server.close();
  });

  /** Runs `c`, keeping what each reconcile saw (`key:present` or `key:gone`) and how it ended. */
  function run<T extends KubeObject>(c: Controller<T>, seen: string[]) {
    const outcome: { error?: unknown; outcomes: ReconcileOutcome[] } = { outcomes: [] };
    running = c.subscribe({ next: (o) => outcome.outcomes.push(o), error: (err: unknown) => (outcome.error = err) });
    return { outcome, seenOnce: (entry: string) => seen.includes(entry) };
  }

  it('reconciles the objects of a CRD installed after the start, empties its store with deletes when the CRD goes, and resumes when it is back', async () => {
    const seen: string[] = [];
    // Discovery polled every 20 to 100 ms, so that the test does not wait out the default pauses of 1 to 30 s.
    const informers = new InformerFactory(kc, { logger: silentLogger, servedPoll: { initialMs: 20, maxMs: 100 } });
    const c = controller<KubeObject>({
      name: 'widgets',
      kubeConfig: kc,
      for: widgets,
      informers,
      logger: silentLogger,
      reconcile: (key, ctx) => void seen.push(`${key}:${ctx.object === undefined ? 'gone' : 'present'}`),
    });
    const { outcome } = run(c, seen);

    // No CRD: the cache is synced and empty, the controller runs, and is not ready.
    await waitFor(() => c.synced() && c.notReady().length > 0, 'the empty cache');
    expect(c.ready()).to.equal(false);
    expect(c.notReady()).to.deep.equal(['widgets.example.com: not answering: list failing: not served (404 NotFound); waiting for the type to be served']);

    await extensions.createCustomResourceDefinition({ body: modelCrd(widgetCrd()) });
    await waitFor(() => server.snapshot({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' }).some(isEstablished), 'the CRD to be Established');
    await custom.createNamespacedCustomObject({ ...ref, body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' } } });
    await waitFor(() => seen.includes('default/w1:present'), 'the reconcile of w1');
    await waitFor(() => c.ready(), 'readiness once listed');
    expect(c.store.keys()).to.deep.equal(['default/w1']);

    // Kube deletes a CRD's objects before the CRD: the watch brings the deletes, then the type is gone.
    await extensions.deleteCustomResourceDefinition({ name: 'widgets.example.com' });
    await waitFor(() => seen.includes('default/w1:gone'), 'the reconcile of w1 gone');
    await waitFor(() => !c.ready(), 'unready while the type is gone');
    expect(c.store.size).to.equal(0);
    expect(outcome.error).to.equal(undefined);

    await extensions.createCustomResourceDefinition({ body: modelCrd(widgetCrd()) });
    await waitFor(() => server.snapshot({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' }).some(isEstablished), 'the CRD Established again');
    await custom.createNamespacedCustomObject({ ...ref, body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w2' } } });
    await waitFor(() => seen.includes('default/w2:present'), 'the reconcile of w2');
    await waitFor(() => c.ready(), 'ready again');
    expect(c.store.keys()).to.deep.equal(['default/w2']);
    expect(outcome.error).to.equal(undefined);
  });

  it('adds a watch to a running controller, maps its changes to keys, and removes it without a reconcile', async () => {
    const seen: string[] = [];
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'app' } } });
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'app' }, stringData: { password: 'one' } } });
    const c = controller<KubeObject>({
      name: 'apps',
      kubeConfig: kc,
      for: configmaps,
      logger: silentLogger,
      reconcile: (key, ctx) => void seen.push(`${key}:${ctx.stores.secrets?.get(key)?.metadata.resourceVersion ?? 'no secret'}`),
    });
    run(c, seen);
    await waitFor(() => seen.length === 1 && server.openWatches() === 1, 'the first reconcile');
    expect(seen).to.deep.equal(['default/app:no secret']);

    // A Secret maps to the ConfigMap of its name.
    const handle = c.watch({ resource: secrets, map: (delta) => `${delta.object.metadata.namespace}/${delta.object.metadata.name}` });
    expect(handle.resource).to.equal('secrets');
    await waitFor(() => seen.length === 2 && server.openWatches() === 2, 'the reconcile the new watch triggers');
    const listed = c.stores.secrets?.get('default/app')?.metadata.resourceVersion;
    expect(seen[1]).to.equal(`default/app:${listed}`);

    await core.patchNamespacedSecret({ namespace: 'default', name: 'app', body: [{ op: 'replace', path: '/data/password', value: 'dHdv' }] });
    await waitFor(() => seen.length === 3, 'the reconcile of the change');
    expect(seen[2]).to.not.equal(seen[1]);

    handle.remove();
    expect(handle.removed).to.equal(true);
    expect('secrets' in c.stores).to.equal(false);
    await waitFor(() => server.openWatches() === 1, 'the watch of secrets to close');
    expect(seen).to.have.length(3);
    // The watch is closed: a change of the Secret reaches nothing; a change of the ConfigMap still does.
    await core.patchNamespacedSecret({ namespace: 'default', name: 'app', body: [{ op: 'replace', path: '/data/password', value: 'dGhyZWU=' }] });
    await core.patchNamespacedConfigMap({ namespace: 'default', name: 'app', body: [{ op: 'add', path: '/data', value: { a: '1' } }] });
    await waitFor(() => seen.length === 4, 'the reconcile of the ConfigMap change');
    expect(seen[3]).to.equal('default/app:no secret');
    expect(seen).to.have.length(4);
    // Removing twice does nothing; the resource may be watched again.
    handle.remove();
    const again = c.own({ ...secrets });
    expect('secrets' in c.stores).to.equal(true);
    again.remove();
  });

  it('owns a resource from a running controller on: an owned object reconciles its owner', async () => {
    const seen: string[] = [];
    const owner = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'app' } } });
    const c = controller<KubeObject>({ name: 'owner', kubeConfig: kc, for: configmaps, logger: silentLogger, reconcile: (key) => void seen.push(key) });
    run(c, seen);
    await waitFor(() => seen.length === 1, 'the first reconcile');
    c.own(secrets);
    await waitFor(() => server.openWatches() === 2, 'the watch of secrets');
    const ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'app', uid: owner.metadata?.uid ?? '', controller: true }];
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'app-password', ownerReferences } } });
    await waitFor(() => seen.length === 2, "the owner's reconcile");
    expect(seen).to.deep.equal(['default/app', 'default/app']);
  });

  it('refuses to watch a resource it already watches, naming it', () => {
    const c = controller<KubeObject>({ name: 'twice', kubeConfig: kc, for: configmaps, logger: silentLogger, reconcile: () => undefined });
    expect(() => c.own({ ...configmaps })).to.throw('controller "twice" already watches configmaps: remove that watch first');
  });
});

function isEstablished(crd: KubeObject): boolean {
  const conditions = (crd as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? [];
  return crd.metadata.name === 'widgets.example.com' && conditions.some((c) => c.type === 'Established' && c.status === 'True');
}
