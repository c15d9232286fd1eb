import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type AppsV1Api,
  type CoreV1Api,
  type V1Deployment,
} from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { failure, modelCrd, raw, startWithClients, widgetCrd } from './apiserver.helpers.js';

describe('embedded API server: patch and server-side apply', () => {
  let server: ApiServer;
  let core: CoreV1Api;
  let apps: AppsV1Api;

  beforeEach(async () => ({ server, core, apps } = await startWithClients()));
  afterEach(() => server.close());

  const as = (strategy: string): ReturnType<typeof setHeaderOptions> => setHeaderOptions('Content-Type', strategy);

  function deployment(name: string, image = 'nginx:1.27'): V1Deployment {
    return {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: 'default' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }, { name: 'sidecar', image: 'envoy' }] } },
      },
    };
  }

  it('applies a JSON merge patch (RFC 7396)', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a', labels: { x: '1', y: '2' } }, data: { k: 'v' } } });
    const patched = await core.patchNamespacedConfigMap(
      { name: 'a', namespace: 'default', body: { metadata: { labels: { x: null, z: '3' } }, data: { k: 'w' } } },
      as(PatchStrategy.MergePatch),
    );
    expect(patched.metadata?.labels).to.deep.equal({ y: '2', z: '3' });
    expect(patched.data).to.deep.equal({ k: 'w' });
  });

  it('applies a JSON patch (RFC 6902), the client default', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { k: 'v' } } });
    const patched = await core.patchNamespacedConfigMap({
      name: 'a',
      namespace: 'default',
      body: [
        { op: 'test', path: '/data/k', value: 'v' },
        { op: 'add', path: '/data/n', value: '1' },
      ],
    });
    expect(patched.data).to.deep.equal({ k: 'v', n: '1' });
    const { code } = await failure(core.patchNamespacedConfigMap({ name: 'a', namespace: 'default', body: [{ op: 'test', path: '/data/k', value: 'nope' }] }));
    expect(code).to.equal(422);
  });

  it('applies a strategic merge patch to a built-in, merging containers by name', async () => {
    await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('web') });
    const patched = await apps.patchNamespacedDeployment(
      { name: 'web', namespace: 'default', body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:1.28' }] } } } } },
      as(PatchStrategy.StrategicMergePatch),
    );
    expect(patched.spec?.template.spec?.containers.map((c) => `${c.name}=${c.image}`)).to.deep.equal(['app=nginx:1.28', 'sidecar=envoy']);
    expect(patched.metadata?.generation).to.equal(2);
  });

  it('treats a resourceVersion in a patch as a precondition (409 when stale)', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    await core.patchNamespacedConfigMap({ name: 'a', namespace: 'default', body: { data: { k: '1' } } }, as(PatchStrategy.MergePatch));
    const { code } = await failure(
      core.patchNamespacedConfigMap(
        { name: 'a', namespace: 'default', body: { metadata: { resourceVersion: created.metadata?.resourceVersion }, data: { k: '2' } } },
        as(PatchStrategy.MergePatch),
      ),
    );
    expect(code).to.equal(409);
  });

  it('patches the status subresource', async () => {
    await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('web') });
    const patched = await apps.patchNamespacedDeploymentStatus(
      { name: 'web', namespace: 'default', body: { status: { readyReplicas: 1 }, spec: { replicas: 7 } } },
      as(PatchStrategy.MergePatch),
    );
    expect(patched.status?.readyReplicas).to.equal(1);
    expect(patched.spec?.replicas).to.equal(1);
  });

  it('refuses a strategic merge patch to a custom resource with 415, listing the accepted types', async () => {
    await server.kubeConfig().makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: modelCrd(widgetCrd()) });
    const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
    const ns = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' };
    await custom.createNamespacedCustomObject({ ...ns, body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } } });
    const { code, body } = await failure(custom.patchNamespacedCustomObject({ ...ns, name: 'w', body: { spec: { size: 2 } } }, as(PatchStrategy.StrategicMergePatch)));
    expect(code).to.equal(415);
    expect(body.reason).to.equal('UnsupportedMediaType');
    expect(String(body.message)).to.contain('application/merge-patch+json');
    const merged = (await custom.patchNamespacedCustomObject({ ...ns, name: 'w', body: { spec: { size: 2 } } }, as(PatchStrategy.MergePatch))) as { spec: { size: number } };
    expect(merged.spec.size).to.equal(2);
  });

  it('refuses a patch of an unknown media type with 415', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    const res = await raw(server, 'PATCH', '/api/v1/namespaces/default/configmaps/a', { body: '{}', headers: { 'Content-Type': 'text/plain' } });
    expect(res.status).to.equal(415);
    expect(res.json().reason).to.equal('UnsupportedMediaType');
  });

  it('answers a patch of an object that does not exist with 404', async () => {
    const { code } = await failure(core.patchNamespacedConfigMap({ name: 'ghost', namespace: 'default', body: { data: {} } }, as(PatchStrategy.MergePatch)));
    expect(code).to.equal(404);
  });

  it('creates with server-side apply, then updates, recording the field manager', async () => {
    const api = KubernetesObjectApi.makeApiClient(server.kubeConfig());
    const created = (await api.patch(deployment('web'), undefined, undefined, 'my-controller', undefined, PatchStrategy.ServerSideApply)) as V1Deployment;
    expect(created.metadata?.uid).to.be.a('string');
    expect(created.metadata?.managedFields?.map((m) => `${m.manager}/${m.operation}`)).to.deep.equal(['my-controller/Apply']);
    const updated = (await api.patch(deployment('web', 'nginx:1.28'), undefined, undefined, 'my-controller', undefined, PatchStrategy.ServerSideApply)) as V1Deployment;
    expect(updated.spec?.template.spec?.containers[0].image).to.equal('nginx:1.28');
    expect(updated.metadata?.generation).to.equal(2);
  });

  it('does not change anything for a repeated identical apply (no new resourceVersion)', async () => {
    const api = KubernetesObjectApi.makeApiClient(server.kubeConfig());
    const first = (await api.patch(deployment('web'), undefined, undefined, 'mgr', undefined, PatchStrategy.ServerSideApply)) as V1Deployment;
    const second = (await api.patch(deployment('web'), undefined, undefined, 'mgr', undefined, PatchStrategy.ServerSideApply)) as V1Deployment;
    expect(second.metadata?.resourceVersion).to.equal(first.metadata?.resourceVersion);
  });

  it('refuses an apply that takes over another manager\'s field with 409, unless forced', async () => {
    const api = KubernetesObjectApi.makeApiClient(server.kubeConfig());
    await api.patch(deployment('web'), undefined, undefined, 'first', undefined, PatchStrategy.ServerSideApply);
    const { code, body } = await failure(api.patch(deployment('web', 'other:1'), undefined, undefined, 'second', undefined, PatchStrategy.ServerSideApply));
    expect(code).to.equal(409);
    expect(body.reason).to.equal('Conflict');
    const causes = (body.details as { causes: { reason: string; field: string }[] }).causes;
    expect(causes.map((c) => c.reason)).to.include('FieldManagerConflict');
    expect(causes.map((c) => c.field).join()).to.contain('image');
    const forced = (await api.patch(deployment('web', 'other:1'), undefined, undefined, 'second', true, PatchStrategy.ServerSideApply)) as V1Deployment;
    expect(forced.spec?.template.spec?.containers[0].image).to.equal('other:1');
  });

  it('requires a fieldManager for apply, with kube\'s 422', async () => {
    const res = await raw(server, 'PATCH', '/apis/apps/v1/namespaces/default/deployments/web', {
      body: JSON.stringify(deployment('web')),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(res.status).to.equal(422);
    expect(res.json().message).to.equal('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  });

  it('takes apply configurations in YAML', async () => {
    const yaml = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: from-yaml', 'data:', '  key: value', ''].join('\n');
    const res = await raw(server, 'PATCH', '/api/v1/namespaces/default/configmaps/from-yaml?fieldManager=yaml-writer', {
      body: yaml,
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(res.status).to.equal(201);
    expect(res.json().data).to.deep.equal({ key: 'value' });
  });

  it('works through KubernetesObjectApi for create, read, replace, list and delete', async () => {
    const api = KubernetesObjectApi.makeApiClient(server.kubeConfig());
    const created = await api.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'k', namespace: 'default' }, data: { a: '1' } } as never);
    const read = (await api.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'k', namespace: 'default' } })) as { data: Record<string, string> };
    expect(read.data).to.deep.equal({ a: '1' });
    const replaced = (await api.replace({ ...(created as object), data: { a: '2' } } as never)) as { data: Record<string, string> };
    expect(replaced.data).to.deep.equal({ a: '2' });
    const list = await api.list('v1', 'ConfigMap', 'default');
    expect(list.items.map((i) => i.metadata?.name)).to.deep.equal(['k']);
    await api.delete({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'k', namespace: 'default' } });
    expect(server.snapshot({ group: '', version: 'v1', resource: 'configmaps', namespace: 'default' })).to.deep.equal([]);
  });
});
