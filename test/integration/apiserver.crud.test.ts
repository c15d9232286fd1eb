import type { AppsV1Api, CoreV1Api, V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { configmaps, deployments, failure, json, pod, pods, raw, startWithClients } from './apiserver.helpers.js';

describe('embedded API server: create, read, update, delete', () => {
  let server: ApiServer;
  let core: CoreV1Api;
  let apps: AppsV1Api;

  beforeEach(async () => ({ server, core, apps } = await startWithClients()));
  afterEach(() => server.close());

  it('starts with the default, kube-system, kube-public and kube-node-lease namespaces', async () => {
    const list = await core.listNamespace();
    expect(list.items.map((n) => n.metadata?.name)).to.deep.equal(['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    expect(list.items.every((n) => n.status?.phase === 'Active')).to.equal(true);
  });

  it('creates an object with a uid, a creationTimestamp and the next global resourceVersion, and no generation on a ConfigMap (as kube)', async () => {
    const before = Number(server.resourceVersion);
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { k: 'v' } } });
    expect(created.metadata?.uid).to.match(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).to.be.instanceOf(Date);
    expect(created.metadata?.generation).to.equal(undefined);
    expect(created.metadata?.resourceVersion).to.equal(String(before + 1));
    expect(created.kind).to.equal('ConfigMap');
    expect(created.apiVersion).to.equal('v1');
    const read = await core.readNamespacedConfigMap({ name: 'a', namespace: 'default' });
    expect(read.data).to.deep.equal({ k: 'v' });
    expect(read.metadata?.uid).to.equal(created.metadata?.uid);
  });

  it('answers 201 Created to a create', async () => {
    const res = await json(server, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'a' } });
    expect(res.status).to.equal(201);
    expect(res.headers['content-type']).to.equal('application/json');
  });

  it('names an object from generateName', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'job-' } } });
    expect(created.metadata?.name).to.match(/^job-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('refuses a second object of the same name with 409 AlreadyExists in kube words', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    const { code, body } = await failure(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } }));
    expect(code).to.equal(409);
    expect(body).to.deep.equal({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "a" already exists',
      reason: 'AlreadyExists',
      details: { name: 'a', kind: 'configmaps' },
      code: 409,
    });
  });

  it('answers 404 NotFound with the group-qualified resource name', async () => {
    const { code, body } = await failure(apps.readNamespacedDeployment({ name: 'nope', namespace: 'default' }));
    expect(code).to.equal(404);
    expect(body.message).to.equal('deployments.apps "nope" not found');
    expect(body.reason).to.equal('NotFound');
    expect(body.details).to.deep.equal({ name: 'nope', group: 'apps', kind: 'deployments' });
  });

  it('refuses to create in a namespace that does not exist, as kube does', async () => {
    const { code, body } = await failure(core.createNamespacedConfigMap({ namespace: 'ghost', body: { metadata: { name: 'a' } } }));
    expect(code).to.equal(404);
    expect(body.message).to.equal('namespaces "ghost" not found');
  });

  it('refuses an object without a name with 422 Invalid naming the field', async () => {
    const { code, body } = await failure(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: {} } }));
    expect(code).to.equal(422);
    expect(body.reason).to.equal('Invalid');
    expect(body.message).to.equal('ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required');
    expect(body.details).to.deep.include({ kind: 'ConfigMap' });
  });

  it('refuses names that are not DNS subdomains with 422', async () => {
    const { code, body } = await failure(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'Not_Valid' } } }));
    expect(code).to.equal(422);
    expect(String(body.message)).to.contain('ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain');
  });

  it('refuses invalid label keys with 422', async () => {
    const { code, body } = await failure(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a', labels: { 'bad key': 'v' } } } }));
    expect(code).to.equal(422);
    expect(String(body.message)).to.contain('metadata.labels: Invalid value: "bad key"');
  });

  it('updates an object, moving its resourceVersion forward', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { k: '1' } } });
    const updated = await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: { ...created, data: { k: '2' } } });
    expect(updated.data).to.deep.equal({ k: '2' });
    expect(Number(updated.metadata?.resourceVersion)).to.be.greaterThan(Number(created.metadata?.resourceVersion));
    expect(updated.metadata?.uid).to.equal(created.metadata?.uid);
  });

  it('refuses an update from a stale resourceVersion with 409 Conflict in kube words', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { k: '1' } } });
    await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: { ...created, data: { k: '2' } } });
    const { code, body } = await failure(core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: { ...created, data: { k: '3' } } }));
    expect(code).to.equal(409);
    expect(body.reason).to.equal('Conflict');
    expect(body.message).to.equal(
      'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
    );
    expect(body.details).to.deep.equal({ name: 'a', kind: 'configmaps' });
  });

  it('lets built-ins be updated without a resourceVersion (unconditionally)', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { k: '1' } } });
    const updated = await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: { metadata: { name: 'a' }, data: { k: '2' } } });
    expect(updated.data).to.deep.equal({ k: '2' });
  });

  it('keeps server-set metadata (uid, creationTimestamp) whatever the update sends', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    const res = await json(server, 'PUT', '/api/v1/namespaces/default/configmaps/a', {
      metadata: { name: 'a', creationTimestamp: '2000-01-01T00:00:00Z', generation: 99, labels: { changed: 'yes' } },
    });
    expect(res.status).to.equal(200);
    const meta = res.json().metadata as Record<string, unknown>;
    expect(meta.creationTimestamp).to.equal(created.metadata?.creationTimestamp?.toISOString().replace('.000Z', 'Z'));
    // A ConfigMap has no generation in kube, and an update cannot give it one.
    expect(meta.generation).to.equal(undefined);
    expect(meta.uid).to.equal(created.metadata?.uid);
  });

  it('refuses to change the uid of an object with 422', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    const res = await json(server, 'PUT', '/api/v1/namespaces/default/configmaps/a', { metadata: { name: 'a', uid: 'other' } });
    expect(res.status).to.equal(422);
    expect(res.json().message).to.equal('ConfigMap "a" is invalid: metadata.uid: Invalid value: "other": field is immutable');
  });

  it('does not store a write that changes nothing: no new resourceVersion, no event', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { k: '1' } } });
    const rvBefore = server.resourceVersion;
    const same = await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: created });
    expect(same.metadata?.resourceVersion).to.equal(created.metadata?.resourceVersion);
    expect(server.resourceVersion).to.equal(rvBefore);
  });

  it('bumps generation on spec changes only, not on metadata or status changes', async () => {
    const body = {
      metadata: { name: 'web' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
    };
    const created = await apps.createNamespacedDeployment({ namespace: 'default', body });
    expect(created.metadata?.generation).to.equal(1);
    const labelled = await apps.replaceNamespacedDeployment({ name: 'web', namespace: 'default', body: { ...created, metadata: { ...created.metadata, labels: { a: 'b' } } } });
    expect(labelled.metadata?.generation).to.equal(1);
    const status = await apps.replaceNamespacedDeploymentStatus({ name: 'web', namespace: 'default', body: { ...labelled, status: { replicas: 1, readyReplicas: 1 } } });
    expect(status.metadata?.generation).to.equal(1);
    const scaled = await apps.replaceNamespacedDeployment({ name: 'web', namespace: 'default', body: { ...status, spec: { ...status.spec!, replicas: 3 } } });
    expect(scaled.metadata?.generation).to.equal(2);
    // The start of a deletion bumps it too, on kinds that have one.
    await apps.replaceNamespacedDeployment({ name: 'web', namespace: 'default', body: { ...scaled, metadata: { ...scaled.metadata, finalizers: ['example.com/hold'] } } });
    const deleting = await json(server, 'DELETE', '/apis/apps/v1/namespaces/default/deployments/web');
    expect((deleting.json().metadata as { generation?: number }).generation).to.equal(3);
  });

  it('ignores status changes sent to the main endpoint of a resource with a status subresource', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('p') });
    expect(created.status?.phase).to.equal('Pending');
    const updated = await core.replaceNamespacedPod({
      name: 'p',
      namespace: 'default',
      body: { ...created, metadata: { ...created.metadata, labels: { x: 'y' } }, status: { phase: 'Running' } },
    });
    expect(updated.metadata?.labels).to.deep.equal({ x: 'y' });
    expect(updated.status?.phase).to.equal('Pending');
  });

  it('changes only the status through /status, ignoring everything else it is sent', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('p') });
    const updated = await core.replaceNamespacedPodStatus({
      name: 'p',
      namespace: 'default',
      body: { ...created, metadata: { ...created.metadata, labels: { x: 'y' } }, spec: { containers: [{ name: 'other', image: 'x' }] }, status: { phase: 'Running' } },
    });
    expect(updated.status?.phase).to.equal('Running');
    expect(updated.metadata?.labels).to.equal(undefined);
    expect(updated.spec?.containers[0].name).to.equal('app');
  });

  it('drops the status sent with a create for resources with a status subresource', async () => {
    const created = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'd' },
        spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
        status: { replicas: 5 },
      },
    });
    expect(created.status?.replicas).to.equal(undefined);
    expect(created.spec?.replicas).to.equal(1);
  });

  it('deletes an object, answering with a Status for most built-ins and the object for pods', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    const res = await raw(server, 'DELETE', '/api/v1/namespaces/default/configmaps/a');
    expect(res.status).to.equal(200);
    expect(res.json()).to.deep.include({ kind: 'Status', status: 'Success' });
    expect((res.json().details as Record<string, unknown>).name).to.equal('a');
    await core.createNamespacedPod({ namespace: 'default', body: pod('p') });
    const deletedPod = await core.deleteNamespacedPod({ name: 'p', namespace: 'default' });
    expect(deletedPod.metadata?.name).to.equal('p');
    const { code } = await failure(core.readNamespacedPod({ name: 'p', namespace: 'default' }));
    expect(code).to.equal(404);
  });

  it('honours delete preconditions on uid and resourceVersion with 409', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    const { code, body } = await failure(core.deleteNamespacedConfigMap({ name: 'a', namespace: 'default', body: { preconditions: { uid: 'wrong' } } }));
    expect(code).to.equal(409);
    expect(body.message).to.equal(`Operation cannot be fulfilled on configmaps "a": Precondition failed: UID in precondition: wrong, UID in object meta: ${created.metadata?.uid}`);
    await core.deleteNamespacedConfigMap({ name: 'a', namespace: 'default', body: { preconditions: { uid: created.metadata?.uid } } });
    expect(server.snapshot({ ...configmaps, namespace: 'default' })).to.have.length(0);
  });

  it('deletes a collection by label selector', async () => {
    for (const [name, tier] of [['a', 'x'], ['b', 'x'], ['c', 'y']]) {
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, labels: { tier } } } });
    }
    await core.deleteCollectionNamespacedConfigMap({ namespace: 'default', labelSelector: 'tier=x' });
    expect(server.snapshot({ ...configmaps, namespace: 'default' }).map((o) => o.metadata.name)).to.deep.equal(['c']);
  });

  it('does not persist dry-run writes', async () => {
    const res = await json(server, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { metadata: { name: 'dry' } });
    expect(res.status).to.equal(201);
    expect((res.json().metadata as Record<string, unknown>).name).to.equal('dry');
    expect(server.snapshot({ ...configmaps, namespace: 'default' })).to.have.length(0);
  });

  it('serves the scale subresource of Deployments', async () => {
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: { metadata: { name: 'd' }, spec: { replicas: 2, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } },
    });
    const scale = await apps.readNamespacedDeploymentScale({ name: 'd', namespace: 'default' });
    expect(scale.spec?.replicas).to.equal(2);
    expect(scale.status?.selector).to.equal('a=b');
    await apps.replaceNamespacedDeploymentScale({ name: 'd', namespace: 'default', body: { metadata: { name: 'd' }, spec: { replicas: 5 } } });
    expect((await apps.readNamespacedDeployment({ name: 'd', namespace: 'default' })).spec?.replicas).to.equal(5);
  });

  it('hands out frozen snapshots that cannot change what the server stores', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { k: 'v' } } });
    const [stored] = server.snapshot({ ...configmaps, namespace: 'default' }) as V1ConfigMap[];
    expect(() => {
      (stored.data as Record<string, string>).k = 'changed';
    }).to.throw(TypeError);
    expect((await core.readNamespacedConfigMap({ name: 'a', namespace: 'default' })).data).to.deep.equal({ k: 'v' });
  });

  it('writes in-process with put and remove, through the same write path', async () => {
    const put = server.put(pods, { ...pod('p'), status: { phase: 'Running' } } as never);
    expect(put.metadata.uid).to.be.a('string');
    expect((put as unknown as V1Pod).status?.phase).to.equal('Running');
    const again = server.put(pods, { ...pod('p'), metadata: { name: 'p', labels: { a: 'b' } } } as never);
    expect(again.metadata.uid).to.equal(put.metadata.uid);
    expect(again.metadata.labels).to.deep.equal({ a: 'b' });
    expect(server.remove({ ...pods, namespace: 'default' }, 'p')).to.equal(true);
    expect(server.remove({ ...pods, namespace: 'default' }, 'p')).to.equal(false);
    expect(() => server.snapshot({ group: 'nope', version: 'v1', resource: 'things' })).to.throw('the server does not serve nope/v1/things');
  });

  it('keeps a deployment in apps/v1 with defaults kube applies (replicas 1)', async () => {
    const stored = server.put(deployments, {
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [] } } },
    } as never);
    expect((stored as unknown as { spec: { replicas: number } }).spec.replicas).to.equal(1);
    expect(stored.apiVersion).to.equal('apps/v1');
  });
});
