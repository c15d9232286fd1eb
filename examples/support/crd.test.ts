import { expect } from 'chai';
import { kubeClient, silentLogger, type KubeObject } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { installCrdAndWait } from './crd.js';

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

describe('examples/support installCrdAndWait', () => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
  });
  afterEach(async () => {
    await server.close();
  });

  it('applies the CRD and returns once it is Established, its objects creatable; applying it again changes nothing', async () => {
    const client = kubeClient(server.kubeConfig(), { fieldManager: 'test' });
    await installCrdAndWait(client, widgets);
    const [stored] = server.snapshot({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' }) as (KubeObject & { status?: { conditions?: { type: string; status: string }[] } })[];
    expect(stored?.status?.conditions?.find((c) => c.type === 'Established')?.status).to.equal('True');
    await client.create({ apiVersion: 'test.rxkube.dev/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' } });
    const version = stored?.metadata.resourceVersion;
    await installCrdAndWait(client, widgets);
    expect(server.snapshot({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' })[0]?.metadata.resourceVersion).to.equal(version);
  });

  it('gives up with the signal', async () => {
    const client = kubeClient(server.kubeConfig(), { fieldManager: 'test' });
    const err = await installCrdAndWait(client, widgets, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
    expect(server.snapshot({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' })).to.deep.equal([]);
  });
});
