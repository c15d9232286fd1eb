import { expect } from 'chai';
import { installCrd, kubeClient, silentLogger, uninstallCrd, type KubeClient, type KubeObject } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';

const widgets: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.test.rxkube.dev' },
  spec: {
    group: 'test.rxkube.dev',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
} as KubeObject;

const crds = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };
type WithConditions = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

describe('installCrd and uninstallCrd, over HTTP against the embedded API server', () => {
  let server: ApiServer;
  let client: KubeClient;
  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
    client = kubeClient(server.kubeConfig(), { fieldManager: 'test' });
  });
  afterEach(async () => {
    await server.close();
  });

  it('installCrd returns once the CRD is Established, its objects creatable; installing it again changes nothing', async () => {
    await installCrd(client, widgets);
    const [stored] = server.snapshot(crds) as WithConditions[];
    expect(stored?.status?.conditions?.find((c) => c.type === 'Established')?.status).to.equal('True');
    await client.create({ apiVersion: 'test.rxkube.dev/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' } });
    const version = stored?.metadata.resourceVersion;
    await installCrd(client, widgets);
    expect(server.snapshot(crds)[0]?.metadata.resourceVersion).to.equal(version);
  });

  it('uninstallCrd returns once the CRD and every object of its kind are gone; uninstalling an absent CRD is done at once', async () => {
    await installCrd(client, widgets);
    await client.create({ apiVersion: 'test.rxkube.dev/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' } });
    await uninstallCrd(client, widgets);
    expect(server.snapshot(crds)).to.deep.equal([]);
    const again = await uninstallCrd(client, widgets).then(() => 'done', (err: unknown) => err);
    expect(again).to.equal('done');
  });

  it('uninstallCrd gives up after its timeout, naming the conditions, while an object of its kind holds a finalizer', async () => {
    await installCrd(client, widgets);
    await client.create({ apiVersion: 'test.rxkube.dev/v1', kind: 'Widget', metadata: { name: 'held', namespace: 'default', finalizers: ['test.rxkube.dev/hold'] } });
    const err = await uninstallCrd(client, widgets, { timeout: 300, interval: 20 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.match(/^CustomResourceDefinition widgets\.test\.rxkube\.dev is not gone \(its conditions: .*"type":"Terminating","status":"True".*\) after 300 ms$/);
  });

  it('installCrd with an aborted signal writes nothing and rejects', async () => {
    const err = await installCrd(client, widgets, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
    expect(server.snapshot(crds)).to.deep.equal([]);
  });
});
