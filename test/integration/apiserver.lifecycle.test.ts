import type { ApiextensionsV1Api, AppsV1Api, CoreV1Api, CustomObjectsApi, V1OwnerReference } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { configmaps, eventually, failure, json, RawWatch, startWithClients, watchPath, modelCrd, widgetCrd } from './apiserver.helpers.js';

describe('embedded API server: deletion, finalizers, garbage collection, namespaces', () => {
  let server: ApiServer;
  let core: CoreV1Api;
  let apps: AppsV1Api;

  beforeEach(async () => ({ server, core, apps } = await startWithClients()));
  afterEach(() => server.close());

  const names = (namespace = 'default'): (string | undefined)[] => server.snapshot({ ...configmaps, namespace }).map((o) => o.metadata.name);

  async function owner(name: string): Promise<V1OwnerReference> {
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name } } });
    return { apiVersion: 'v1', kind: 'ConfigMap', name, uid: created.metadata?.uid as string };
  }

  async function dependent(name: string, ...ownerReferences: V1OwnerReference[]): Promise<void> {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, ownerReferences } } });
  }

  it('marks an object with finalizers for deletion and removes it when the last finalizer goes', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a', finalizers: ['example.com/one', 'example.com/two'] } } });
    const w = new RawWatch(server, watchPath('/api/v1/namespaces/default/configmaps', { resourceVersion: server.resourceVersion }));
    try {
      const res = await json(server, 'DELETE', '/api/v1/namespaces/default/configmaps/a');
      expect(res.status).to.equal(200);
      const marked = res.json().metadata as Record<string, unknown>;
      expect(marked.deletionTimestamp).to.be.a('string');
      expect(marked.deletionGracePeriodSeconds).to.equal(0);
      // Deletion bumps generation only on kinds that have one; a ConfigMap has none.
      expect(marked.generation).to.equal(undefined);
      let live = await core.readNamespacedConfigMap({ name: 'a', namespace: 'default' });
      live = await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: { ...live, metadata: { ...live.metadata, finalizers: ['example.com/two'] } } });
      expect(names()).to.deep.equal(['a']);
      await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: { ...live, metadata: { ...live.metadata, finalizers: [] } } });
      expect(names()).to.deep.equal([]);
      const events = await w.until(4);
      expect(events.map((e) => e.type)).to.deep.equal(['MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED']);
    } finally {
      w.close();
    }
  });

  it('refuses new finalizers on an object being deleted with 422', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a', finalizers: ['example.com/one'] } } });
    await core.deleteNamespacedConfigMap({ name: 'a', namespace: 'default' });
    const live = await core.readNamespacedConfigMap({ name: 'a', namespace: 'default' });
    const { code, body } = await failure(
      core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: { ...live, metadata: { ...live.metadata, finalizers: ['example.com/one', 'example.com/new'] } } }),
    );
    expect(code).to.equal(422);
    expect(String(body.message)).to.contain('no new finalizers can be added if the object is being deleted');
  });

  it('collects dependents in the background once their only owner is deleted', async () => {
    const ref = await owner('owner');
    await dependent('child', ref);
    await dependent('grandchild', { apiVersion: 'v1', kind: 'ConfigMap', name: 'child', uid: server.snapshot({ ...configmaps, namespace: 'default' }).find((o) => o.metadata.name === 'child')?.metadata.uid as string });
    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: 'default' });
    await eventually(() => names().length === 0, 2000, 'the dependents to be collected');
  });

  it('keeps a dependent that still has an owner, dropping its reference to the deleted one', async () => {
    const a = await owner('a');
    const b = await owner('b');
    await dependent('child', a, b);
    await core.deleteNamespacedConfigMap({ name: 'a', namespace: 'default' });
    const child = await core.readNamespacedConfigMap({ name: 'child', namespace: 'default' });
    expect(child.metadata?.ownerReferences?.map((r) => r.name)).to.deep.equal(['b']);
  });

  it('orphans dependents with propagationPolicy Orphan', async () => {
    const ref = await owner('owner');
    await dependent('child', ref);
    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: 'default', propagationPolicy: 'Orphan' });
    expect(names()).to.deep.equal(['child']);
    const child = await core.readNamespacedConfigMap({ name: 'child', namespace: 'default' });
    expect(child.metadata?.ownerReferences).to.equal(undefined);
  });

  it('deletes in the foreground: the owner waits, marked with foregroundDeletion, until blocking dependents are gone', async () => {
    const ref = await owner('owner');
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'blocker', finalizers: ['example.com/hold'], ownerReferences: [{ ...ref, blockOwnerDeletion: true }] } },
    });
    await dependent('free', ref);
    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: 'default', propagationPolicy: 'Foreground' });
    const waiting = await core.readNamespacedConfigMap({ name: 'owner', namespace: 'default' });
    expect(waiting.metadata?.finalizers).to.deep.equal(['foregroundDeletion']);
    expect(waiting.metadata?.deletionTimestamp).to.be.instanceOf(Date);
    expect(names()).to.deep.equal(['blocker', 'owner']);
    const blocker = await core.readNamespacedConfigMap({ name: 'blocker', namespace: 'default' });
    expect(blocker.metadata?.deletionTimestamp).to.be.instanceOf(Date);
    await core.replaceNamespacedConfigMap({ name: 'blocker', namespace: 'default', body: { ...blocker, metadata: { ...blocker.metadata, finalizers: [] } } });
    await eventually(() => names().length === 0, 2000, 'the owner to go after its blocking dependent');
  });

  it('collects, shortly after, an object created with owners that do not exist', async () => {
    await dependent('orphan', { apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: 'no-such-uid' });
    await eventually(() => names().length === 0, 2000, 'the orphan to be collected');
  });

  it('collects dependents across resources: pods owned by a deployment', async () => {
    const d = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: { metadata: { name: 'web' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } },
    });
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'web-1', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: d.metadata?.uid as string, controller: true }] },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      },
    });
    await apps.deleteNamespacedDeployment({ name: 'web', namespace: 'default' });
    await eventually(() => server.snapshot({ group: '', version: 'v1', resource: 'pods', namespace: 'default' }).length === 0);
  });

  it('deletes a namespace with what is in it: Terminating first, then gone; no new content meanwhile', async () => {
    await core.createNamespace({ body: { metadata: { name: 'team' } } });
    await core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    await core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: 'plain' } } });
    await core.deleteNamespace({ name: 'team' });
    const terminating = await core.readNamespace({ name: 'team' });
    expect(terminating.status?.phase).to.equal('Terminating');
    expect(names('team')).to.deep.equal(['held']);
    const { code, body } = await failure(core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: 'late' } } }));
    expect(code).to.equal(403);
    expect(body.message).to.equal('configmaps is forbidden: unable to create new content in namespace team because it is being terminated');
    const held = await core.readNamespacedConfigMap({ name: 'held', namespace: 'team' });
    await core.replaceNamespacedConfigMap({ name: 'held', namespace: 'team', body: { ...held, metadata: { ...held.metadata, finalizers: [] } } });
    await eventually(async () => (await failure(core.readNamespace({ name: 'team' }))).code === 404);
  });
});

describe('embedded API server: CustomResourceDefinitions', () => {
  let server: ApiServer;
  let extensions: ApiextensionsV1Api;
  let custom: CustomObjectsApi;

  beforeEach(async () => ({ server, extensions, custom } = await startWithClients()));
  afterEach(() => server.close());

  const widget = (name: string, spec: Record<string, unknown> = { size: 1 }): Record<string, unknown> => ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name },
    spec,
  });
  const ns = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' };

  it('serves a CRD as soon as it is created, and reports it Established with its accepted names', async () => {
    await extensions.createCustomResourceDefinition({ body: modelCrd(widgetCrd()) });
    const crd = await eventually(async () => {
      const read = await extensions.readCustomResourceDefinition({ name: 'widgets.example.com' });
      return read.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? read : undefined;
    });
    expect(crd.status?.conditions?.map((c) => `${c.type}=${c.status}`)).to.deep.equal(['NamesAccepted=True', 'Established=True']);
    expect(crd.status?.acceptedNames).to.deep.include({ plural: 'widgets', kind: 'Widget', listKind: 'WidgetList', singular: 'widget' });
    expect(crd.status?.storedVersions).to.deep.equal(['v1']);
    const created = (await custom.createNamespacedCustomObject({ ...ns, body: widget('w1') })) as { metadata: { uid: string; generation: number } };
    expect(created.metadata.generation).to.equal(1);
    const list = (await custom.listNamespacedCustomObject(ns)) as { kind: string; items: { metadata: { name: string } }[] };
    expect(list.kind).to.equal('WidgetList');
    expect(list.items.map((i) => i.metadata.name)).to.deep.equal(['w1']);
  });

  it('refuses an invalid CRD with 422 naming the fields', async () => {
    const bad = widgetCrd();
    (bad.metadata as Record<string, unknown>).name = 'wrong.example.com';
    const { code, body } = await failure(extensions.createCustomResourceDefinition({ body: modelCrd(bad) }));
    expect(code).to.equal(422);
    expect(String(body.message)).to.contain('metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group');
  });

  it('gives custom resources a /status subresource when the CRD asks for one', async () => {
    await extensions.createCustomResourceDefinition({ body: modelCrd(widgetCrd()) });
    await custom.createNamespacedCustomObject({ ...ns, body: { ...widget('w1'), status: { ready: true } } });
    const created = (await custom.getNamespacedCustomObject({ ...ns, name: 'w1' })) as Record<string, unknown>;
    expect(created.status).to.equal(undefined);
    const withStatus = (await custom.replaceNamespacedCustomObjectStatus({ ...ns, name: 'w1', body: { ...created, status: { ready: true }, spec: { size: 9 } } })) as {
      status: unknown;
      spec: unknown;
      metadata: { generation: number };
    };
    expect(withStatus.status).to.deep.equal({ ready: true });
    expect(withStatus.spec).to.deep.equal({ size: 1 });
    expect(withStatus.metadata.generation).to.equal(1);
    const bumped = (await custom.replaceNamespacedCustomObject({ ...ns, name: 'w1', body: { ...withStatus, spec: { size: 2 }, status: { ready: false } } })) as {
      status: unknown;
      metadata: { generation: number };
    };
    expect(bumped.metadata.generation).to.equal(2);
    expect(bumped.status).to.deep.equal({ ready: true });
  });

  it('stores status through the main endpoint when the CRD has no status subresource', async () => {
    await extensions.createCustomResourceDefinition({ body: modelCrd(widgetCrd({ status: false })) });
    const created = (await custom.createNamespacedCustomObject({ ...ns, body: { ...widget('w1'), status: { ready: true } } })) as Record<string, unknown>;
    expect(created.status).to.deep.equal({ ready: true });
    const { code } = await failure(custom.getNamespacedCustomObjectStatus({ ...ns, name: 'w1' }));
    expect(code).to.equal(404);
  });

  it('requires a resourceVersion to update a custom resource (422 without)', async () => {
    await extensions.createCustomResourceDefinition({ body: modelCrd(widgetCrd()) });
    await custom.createNamespacedCustomObject({ ...ns, body: widget('w1') });
    const { code, body } = await failure(custom.replaceNamespacedCustomObject({ ...ns, name: 'w1', body: widget('w1', { size: 2 }) }));
    expect(code).to.equal(422);
    expect(body.message).to.equal('Widget.example.com "w1" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update');
  });

  it('serves cluster-scoped custom resources', async () => {
    await extensions.createCustomResourceDefinition({ body: modelCrd(widgetCrd({ scope: 'Cluster' })) });
    await custom.createClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'widgets', body: widget('w1') });
    const list = (await custom.listClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'widgets' })) as { items: { metadata: { namespace?: string } }[] };
    expect(list.items).to.have.length(1);
    expect(list.items[0].metadata.namespace).to.equal(undefined);
  });

  it('deletes every custom resource of a deleted CRD, waits for their finalizers, then stops serving it', async () => {
    await extensions.createCustomResourceDefinition({ body: modelCrd(widgetCrd()) });
    await custom.createNamespacedCustomObject({ ...ns, body: widget('plain') });
    await custom.createNamespacedCustomObject({ ...ns, body: { ...widget('held'), metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    const w = new RawWatch(server, watchPath('/apis/example.com/v1/namespaces/default/widgets', { resourceVersion: server.resourceVersion }));
    try {
      await w.opened;
      await extensions.deleteCustomResourceDefinition({ name: 'widgets.example.com' });
      const crd = await extensions.readCustomResourceDefinition({ name: 'widgets.example.com' });
      expect(crd.metadata?.finalizers).to.deep.equal(['customresourcecleanup.apiextensions.k8s.io']);
      expect(crd.status?.conditions?.some((c) => c.type === 'Terminating' && c.status === 'True')).to.equal(true);
      const { code } = await failure(custom.createNamespacedCustomObject({ ...ns, body: widget('late') }));
      expect(code).to.equal(405);
      const held = (await custom.getNamespacedCustomObject({ ...ns, name: 'held' })) as Record<string, unknown>;
      await custom.replaceNamespacedCustomObject({ ...ns, name: 'held', body: { ...held, metadata: { ...(held.metadata as object), finalizers: [] } } });
      await eventually(async () => (await failure(extensions.readCustomResourceDefinition({ name: 'widgets.example.com' }))).code === 404);
      expect(await w.ended).to.equal('end');
      const gone = await failure(custom.listNamespacedCustomObject(ns));
      expect(gone.code).to.equal(404);
    } finally {
      w.close();
    }
  });

  it('serves every served version of a CRD from one storage, each with its own apiVersion', async () => {
    const crd = widgetCrd() as { spec: { versions: Record<string, unknown>[] } };
    crd.spec.versions = [
      { ...crd.spec.versions[0], name: 'v1beta1', storage: false },
      { ...crd.spec.versions[0], name: 'v1', storage: true },
    ];
    await extensions.createCustomResourceDefinition({ body: modelCrd(crd) });
    await custom.createNamespacedCustomObject({ ...ns, version: 'v1beta1', body: { ...widget('w1'), apiVersion: 'example.com/v1beta1' } });
    const asV1 = (await custom.getNamespacedCustomObject({ ...ns, name: 'w1' })) as { apiVersion: string };
    expect(asV1.apiVersion).to.equal('example.com/v1');
    const asBeta = (await custom.getNamespacedCustomObject({ ...ns, version: 'v1beta1', name: 'w1' })) as { apiVersion: string };
    expect(asBeta.apiVersion).to.equal('example.com/v1beta1');
  });

  describe('with a structural schema', () => {
    beforeEach(async () => {
      const crd = widgetCrd() as { spec: { versions: { schema: unknown }[] } };
      crd.spec.versions[0].schema = {
        openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: {
              type: 'object',
              required: ['size'],
              properties: {
                size: { type: 'integer' },
                mode: { type: 'string', enum: ['fast', 'safe'], default: 'safe' },
                extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
            status: { type: 'object', properties: { ready: { type: 'boolean' } } },
          },
        },
      };
      await extensions.createCustomResourceDefinition({ body: modelCrd(crd) });
    });

    it('prunes fields the schema does not declare, with a warning, and keeps preserved ones', async () => {
      const res = await json(server, 'POST', '/apis/example.com/v1/namespaces/default/widgets', {
        ...widget('w1', { size: 1, colour: 'red', extra: { anything: { goes: true } } }),
        top: 'level',
      });
      expect(res.status).to.equal(201);
      expect(res.json().spec).to.deep.equal({ size: 1, mode: 'safe', extra: { anything: { goes: true } } });
      expect(res.json().top).to.equal(undefined);
      expect(res.headers.warning).to.equal('299 - "unknown field \\"spec.colour\\"", 299 - "unknown field \\"top\\""');
    });

    it('rejects unknown fields with fieldValidation=Strict, as kubectl asks', async () => {
      const res = await json(server, 'POST', '/apis/example.com/v1/namespaces/default/widgets?fieldValidation=Strict', widget('w1', { size: 1, colour: 'red' }));
      expect(res.status).to.equal(400);
      expect(res.json().message).to.equal('Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.colour"');
    });

    it('fills in defaults and checks types, enums and required fields with 422', async () => {
      const created = (await custom.createNamespacedCustomObject({ ...ns, body: widget('w1', { size: 1 }) })) as { spec: { mode: string } };
      expect(created.spec.mode).to.equal('safe');
      const wrongType = await failure(custom.createNamespacedCustomObject({ ...ns, body: widget('w2', { size: 'big' }) }));
      expect(wrongType.code).to.equal(422);
      expect(wrongType.body.message).to.equal('Widget.example.com "w2" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"');
      const badEnum = await failure(custom.createNamespacedCustomObject({ ...ns, body: widget('w3', { size: 1, mode: 'wild' }) }));
      expect(String(badEnum.body.message)).to.contain('spec.mode: Unsupported value: "wild": supported values: "fast", "safe"');
      const missing = await failure(custom.createNamespacedCustomObject({ ...ns, body: widget('w4', {}) }));
      expect(String(missing.body.message)).to.contain('spec.size: Required value');
    });

    it('prunes status written through /status too', async () => {
      const created = (await custom.createNamespacedCustomObject({ ...ns, body: widget('w1', { size: 1 }) })) as Record<string, unknown>;
      const updated = (await custom.replaceNamespacedCustomObjectStatus({ ...ns, name: 'w1', body: { ...created, status: { ready: true, note: 'x' } } })) as { status: unknown };
      expect(updated.status).to.deep.equal({ ready: true });
    });
  });

  it('requires kind in custom resource bodies, as kube does', async () => {
    await extensions.createCustomResourceDefinition({ body: modelCrd(widgetCrd()) });
    const res = await json(server, 'POST', '/apis/example.com/v1/namespaces/default/widgets', { metadata: { name: 'w' } });
    expect(res.status).to.equal(400);
    expect(String(res.json().message)).to.match(/^Object 'Kind' is missing in/);
  });
});
