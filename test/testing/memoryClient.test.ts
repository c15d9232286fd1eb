import { expect } from 'chai';
import { BehaviorSubject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { fnv1a64 } from '../../src/util/shardHash.js';
import { isAlreadyExists, isConflict, isInvalid, isNotFound, KubeApiError, type KubeObject, type ListWatchEvent } from 'rxkube';
import { UnknownResourceError } from '../../src/sinks/client/resources.js';
import { InvalidTargetError } from '../../src/sinks/client/readModifyWrite.js';
import { memoryClient, runVirtualTime, type MemoryClient } from 'rxkube/testing';

interface Widget extends KubeObject {
  spec?: { size?: number; color?: string };
  status?: { ready?: boolean };
}

const widgets = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' };
const widget = (name: string, spec: Widget['spec'] = { size: 1 }): Widget => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'default' },
  spec,
});
const configMap = (name: string, data: Record<string, string> = {}): KubeObject & { data: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data,
});

function setup(): { client: MemoryClient; scheduler: TestScheduler } {
  const scheduler = new TestScheduler(() => undefined);
  return { client: memoryClient({ scheduler, resources: [widgets] }), scheduler };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('memoryClient: reads and writes as the API server answers them', () => {
  it('creates with server-set metadata and bumps the resourceVersion on every change, never on a no-op', async () => {
    const { client } = setup();
    const created = await client.create(widget('a'));
    expect(created.metadata).to.deep.include({ name: 'a', namespace: 'default', generation: 1, resourceVersion: '1', creationTimestamp: '1970-01-01T00:00:00Z' });
    expect(created.metadata.uid).to.match(/^00000000-0000-4000-8000-0+1$/);
    const same = await client.update(created);
    expect(same.metadata.resourceVersion).to.equal('1');
    const changed = await client.update({ ...created, spec: { size: 2 } });
    expect(changed.metadata).to.deep.include({ resourceVersion: '2', generation: 2 });
  });

  it('answers a missing object with 404 and a taken name with 409 AlreadyExists, as KubeApiErrors the helpers read', async () => {
    const { client } = setup();
    const missing = await rejection(client.get(widget('nope')));
    expect(missing).to.be.instanceOf(KubeApiError);
    expect(isNotFound(missing)).to.equal(true);
    expect((missing as Error).message).to.equal('get widgets.example.com "default/nope": widgets.example.com "nope" not found (404 NotFound)');
    await client.create(widget('a'));
    expect(isAlreadyExists(await rejection(client.create(widget('a'))))).to.equal(true);
  });

  it('refuses an update from a stale resourceVersion with 409 Conflict', async () => {
    const { client } = setup();
    const first = await client.create(widget('a'));
    await client.update({ ...first, spec: { size: 2 } });
    const stale = await rejection(client.update({ ...first, spec: { size: 3 } }));
    expect(isConflict(stale)).to.equal(true);
    expect((stale as Error).message).to.match(/the object has been modified/);
  });

  it('keeps status out of writes to the object, and everything but status out of writes to /status', async () => {
    const { client } = setup();
    const a = await client.create({ ...widget('a'), status: { ready: true } });
    expect(a.status).to.equal(undefined);
    const withStatus = await client.updateStatus({ ...a, spec: { size: 9 }, status: { ready: true } });
    expect(withStatus.result).to.equal('updated');
    expect(withStatus.object).to.deep.include({ spec: { size: 1 }, status: { ready: true } });
    expect(withStatus.object.metadata.generation).to.equal(1);
    const updated = await client.update({ ...withStatus.object, status: { ready: false } });
    expect(updated.status).to.deep.equal({ ready: true });
  });

  it('applies merge patches and JSON patches, failing a patch whose test operation fails with 422 Invalid', async () => {
    const { client } = setup();
    await client.create(widget('a', { size: 1, color: 'red' }));
    const merged = await client.patchMerge<Widget>(widget('a'), { spec: { color: null, size: 4 } });
    expect(merged.spec).to.deep.equal({ size: 4 });
    const tested = await rejection(client.patchJson(widget('a'), [{ op: 'test', path: '/spec/size', value: 1 }, { op: 'replace', path: '/spec/size', value: 7 }]));
    expect(isInvalid(tested)).to.equal(true);
    const patched = await client.patchJson<Widget>(widget('a'), [{ op: 'test', path: '/spec/size', value: 4 }, { op: 'replace', path: '/spec/size', value: 7 }]);
    expect(patched.spec?.size).to.equal(7);
  });

  it('does server-side apply with field ownership: another manager\'s field is a 409 conflict unless forced', async () => {
    const { client } = setup();
    await client.apply(widget('a', { size: 1 }), { fieldManager: 'one' });
    const conflict = await rejection(client.apply(widget('a', { size: 2 }), { fieldManager: 'two' }));
    expect(isConflict(conflict)).to.equal(true);
    expect((conflict as KubeApiError).details?.causes?.[0]).to.deep.include({ field: '.spec.size' });
    const forced = await client.apply<Widget>(widget('a', { size: 2 }), { fieldManager: 'two', force: true });
    expect(forced.spec?.size).to.equal(2);
    expect(client.writes.map((w) => w.code)).to.deep.equal([201, 409, 200]);
  });

  it('creates or updates through a mutate function, and reports a write that changes nothing as unchanged', async () => {
    const { client } = setup();
    const setSize = (o: Widget) => {
      o.spec = { size: 3 };
    };
    expect((await client.createOrUpdate(widget('a', {}), setSize)).result).to.equal('created');
    expect((await client.createOrUpdate(widget('a', {}), setSize)).result).to.equal('unchanged');
    expect(client.writes.map((w) => w.verb)).to.deep.equal(['create']);
  });

  it('keeps an object with finalizers until the last one goes, then deletes it', async () => {
    const { client } = setup();
    await client.create({ ...widget('a'), metadata: { ...widget('a').metadata, finalizers: ['example.com/cleanup'] } });
    const marked = await client.remove<Widget>(widget('a'));
    expect(marked.result).to.equal('deleting');
    expect(marked.object?.metadata.deletionTimestamp).to.equal('1970-01-01T00:00:00Z');
    const live = client.object<Widget>(widget('a')) as Widget;
    await client.patchJson(live, [{ op: 'test', path: '/metadata/finalizers/0', value: 'example.com/cleanup' }, { op: 'remove', path: '/metadata/finalizers/0' }]);
    expect(client.object(widget('a'))).to.equal(undefined);
    expect((await client.remove(widget('a'))).result).to.equal('absent');
  });

  it('collects the dependents of a deleted owner, and orphans them when asked', async () => {
    const { client } = setup();
    const owner = await client.create(widget('owner'));
    const ref = { apiVersion: 'example.com/v1', kind: 'Widget', name: 'owner', uid: owner.metadata.uid as string, controller: true };
    await client.create({ ...configMap('owned'), metadata: { ...configMap('owned').metadata, ownerReferences: [ref] } });
    await client.remove(owner);
    expect(client.object(configMap('owned'))).to.equal(undefined);

    const second = await client.create(widget('second'));
    const ref2 = { ...ref, name: 'second', uid: second.metadata.uid as string };
    await client.create({ ...configMap('kept'), metadata: { ...configMap('kept').metadata, ownerReferences: [ref2] } });
    await client.remove(second, { propagationPolicy: 'Orphan' });
    expect(client.object(widget('second'))).to.equal(undefined);
    expect(client.object<KubeObject>(configMap('kept'))?.metadata.ownerReferences).to.equal(undefined);
  });

  it('deletes the dependents along with the owner when asked for Foreground deletion', async () => {
    const { client } = setup();
    const owner = await client.create(widget('owner'));
    const ref = { apiVersion: 'example.com/v1', kind: 'Widget', name: 'owner', uid: owner.metadata.uid as string, controller: true };
    await client.create({ ...configMap('owned'), metadata: { ...configMap('owned').metadata, ownerReferences: [ref] } });
    // As kube answers it: the owner waits for its foregroundDeletion finalizer; the collector has run before the answer.
    const removed = await client.remove(owner, { propagationPolicy: 'Foreground' });
    expect(removed.result).to.equal('deleting');
    expect(removed.object?.metadata.finalizers).to.deep.equal(['foregroundDeletion']);
    expect(client.objects('v1', 'ConfigMap')).to.deep.equal([]);
    expect(client.objects('example.com/v1', 'Widget')).to.deep.equal([]);
  });

  it('checks delete preconditions (409 Conflict), and answers /status of a kind without one with 404', async () => {
    const { client } = setup();
    await client.create(configMap('a'));
    expect(isConflict(await rejection(client.remove(configMap('a'), { preconditions: { resourceVersion: '999' } })))).to.equal(true);
    expect(isNotFound(await rejection(client.patchStatus(configMap('a'), { status: {} })))).to.equal(true);
    expect(client.object(configMap('a'))).to.not.equal(undefined);
  });

  it('applies to the status subresource, changing nothing but status', async () => {
    const { client } = setup();
    await client.create(widget('a', { size: 1 }));
    const applied = await client.apply<Widget>({ ...widget('a', { size: 5 }), status: { ready: true } }, { subresource: 'status', fieldManager: 'status-writer' });
    expect(applied).to.deep.include({ spec: { size: 1 }, status: { ready: true } });
  });

  it('serves custom resources declared as CRD objects, with their scope, or added later with serve()', async () => {
    const scheduler = new TestScheduler(() => undefined);
    const crd: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'clusterwidgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Cluster',
        names: { plural: 'clusterwidgets', singular: 'clusterwidget', kind: 'ClusterWidget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    } as KubeObject;
    const client = memoryClient({ scheduler, resources: [crd] });
    const created = await client.create<KubeObject>({ apiVersion: 'example.com/v1', kind: 'ClusterWidget', metadata: { name: 'global' } });
    expect(created.metadata.namespace).to.equal(undefined);
    expect(client.writes[0]?.key).to.equal('global');
    await rejection(client.create({ apiVersion: 'example.com/v2', kind: 'Gizmo', metadata: { name: 'g', namespace: 'default' } }));
    client.serve({ group: 'example.com', version: 'v2', resource: 'gizmos', kind: 'Gizmo' });
    expect((await client.create({ apiVersion: 'example.com/v2', kind: 'Gizmo', metadata: { name: 'g', namespace: 'default' } })).metadata.name).to.equal('g');
  });

  it('says which kinds it serves: an unknown kind is an UnknownResourceError that says how to declare it', async () => {
    const { client } = setup();
    expect(await client.resource('apps/v1', 'Deployment')).to.deep.equal({ group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true });
    const unknown = await rejection(client.create({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g', namespace: 'default' } }));
    expect(unknown).to.be.instanceOf(UnknownResourceError);
    expect((unknown as Error).message).to.match(/declare custom resources with the memory client.s `resources` option/);
    const noNamespace = await rejection(client.get({ apiVersion: 'v1', kind: 'ConfigMap', name: 'x' }));
    expect(noNamespace).to.be.instanceOf(InvalidTargetError);
  });
});

describe('memoryClient: what a test reads back and injects', () => {
  it('records every request with its virtual time, body, field manager and answer', async () => {
    const { client, scheduler } = setup();
    scheduler.schedule(() => void client.create(configMap('a', { k: 'v' }), { fieldManager: 'me' }), 7);
    await runVirtualTime(scheduler);
    await client.get(configMap('a'));
    expect(client.requests.map((r) => [r.at, r.verb, r.key, r.code, r.fieldManager])).to.deep.equal([
      [7, 'create', 'default/a', 201, 'me'],
      [7, 'get', 'default/a', 200, undefined],
    ]);
    expect(client.writes).to.have.length(1);
    expect(client.writes[0]?.body).to.deep.equal(configMap('a', { k: 'v' }));
  });

  it('fails the next N writes with an injected status, records them as injected, and changes nothing meanwhile', async () => {
    const { client } = setup();
    client.faults.failNext(2, { code: 500, kind: 'ConfigMap' });
    expect((await rejection(client.create(configMap('a'))) as KubeApiError).code).to.equal(500);
    await client.create(widget('w'));
    expect((await rejection(client.create(configMap('a'))) as KubeApiError).reason).to.equal('InternalError');
    await client.create(configMap('a'));
    expect(client.writes.map((w) => `${w.kind} ${w.code}${w.injected ? ' injected' : ''}`)).to.deep.equal([
      'ConfigMap 500 injected',
      'Widget 201',
      'ConfigMap 500 injected',
      'ConfigMap 201',
    ]);
    expect(client.faults.pending()).to.equal(0);
  });

  it('matches faults as the embedded HTTP server does: by verb (apply for server-side apply), name, kind and subresource', async () => {
    const { client } = setup();
    client.faults.failNext(1, { code: 500, verb: 'apply' });
    client.faults.failNext(1, { code: 409, kind: 'Widget', name: 'b', subresource: 'status' });
    await client.create(configMap('a'));
    await client.patchMerge(configMap('a'), { data: { k: 'v' } });
    const applied = await rejection(client.apply(configMap('a', { k: 'w' })));
    expect((applied as KubeApiError).code).to.equal(500);
    await client.create(widget('b'));
    await client.patchStatus(widget('a'), { status: { ready: true } }).catch(() => undefined);
    expect(isConflict(await rejection(client.patchStatus(widget('b'), { status: { ready: true } })))).to.equal(true);
    expect(client.faults.pending()).to.equal(0);
    expect(client.writes.filter((w) => w.injected).map((w) => `${w.verb}${w.subresource ? `/${w.subresource}` : ''} ${w.key} ${w.code}`)).to.deep.equal([
      'apply default/a 500',
      'patch/status default/b 409',
    ]);
  });

  it('records reads and lists as requests, not as writes', async () => {
    const { client } = setup();
    await client.create(configMap('a'));
    expect((await client.list({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default' })).map((o) => o.metadata.name)).to.deep.equal(['a']);
    expect(client.requests.map((r) => `${r.verb} ${r.key}`)).to.deep.equal(['create default/a', 'list default']);
    expect(client.writes.map((r) => r.verb)).to.deep.equal(['create']);
  });

  it('retries an injected conflict inside createOrUpdate after exactly client-go\'s 10 ms, in virtual time', async () => {
    const { client, scheduler } = setup();
    client.seed(configMap('a', { k: '1' }));
    client.faults.failNext(1, { code: 409, verb: 'update' });
    let result: unknown;
    scheduler.schedule(() => {
      void client.createOrUpdate(configMap('a'), (o) => {
        o.data = { k: '2' };
      }).then((r) => (result = r.result));
    }, 0);
    await runVirtualTime(scheduler);
    expect(result).to.equal('updated');
    expect(client.requests.map((r) => `${r.at} ${r.verb} ${r.code}`)).to.deep.equal(['0 get 200', '0 update 409', '10 get 200', '10 update 200']);
  });

  it('waits out a 429 with Retry-After and resends, as the real transport does', async () => {
    const { client, scheduler } = setup();
    client.faults.failNext(1, { code: 429, retryAfterSeconds: 2 });
    scheduler.schedule(() => void client.create(configMap('a')), 0);
    await runVirtualTime(scheduler);
    expect(client.writes.map((w) => `${w.at} ${w.code}`)).to.deep.equal(['0 429', '2000 201']);
  });

  it('delivers watch events `watchLatency` after the write', async () => {
    const scheduler = new TestScheduler(() => undefined);
    const client = memoryClient({ scheduler, watchLatency: 25 });
    const seen: string[] = [];
    client.watch({ version: 'v1', resource: 'configmaps' }).subscribe((e) => seen.push(`${scheduler.now()} ${e.type}`));
    scheduler.schedule(() => void client.create(configMap('a')), 5);
    await runVirtualTime(scheduler);
    expect(seen).to.deep.equal(['0 Restart', '0 Synced', '30 Added']);
  });

  it('seeds objects unrecorded, keeping their status, uid and default namespace', () => {
    const { client } = setup();
    const [seeded] = client.seed<Widget>({ ...widget('a'), metadata: { name: 'a', uid: 'fixed' }, status: { ready: true } });
    expect(seeded?.metadata).to.deep.include({ namespace: 'default', uid: 'fixed' });
    expect(seeded?.status).to.deep.equal({ ready: true });
    expect(client.requests).to.deep.equal([]);
  });

  it('lets someone else write through `as(manager)`, unrecorded and never faulted', async () => {
    const { client } = setup();
    client.faults.failNext(1, { code: 500 });
    // With data: an empty ConfigMap is stored without it, and kube records no manager that owns nothing.
    await client.as('kubectl').create(configMap('a', { k: 'v' }));
    expect(client.requests).to.deep.equal([]);
    expect(client.faults.pending()).to.equal(1);
    expect(client.object<KubeObject>(configMap('a'))?.metadata.managedFields?.map((m) => (m as { manager: string }).manager)).to.deep.equal(['kubectl']);
  });

  it('lists and watches a resource: the list now, then each change one action later, with selectors', async () => {
    const { client, scheduler } = setup();
    client.seed({ ...configMap('a'), metadata: { name: 'a', namespace: 'default', labels: { app: 'x' } } });
    const seen: string[] = [];
    const describe = (e: ListWatchEvent) => ('object' in e ? `${e.type}(${e.object.metadata.name ?? ''}@${e.object.metadata.resourceVersion ?? ''})` : e.type);
    client.watch({ version: 'v1', resource: 'configmaps' }, { labelSelector: 'app=x' }).subscribe((e) => seen.push(`${scheduler.now()} ${describe(e)}`));
    scheduler.schedule(() => {
      void client.create({ ...configMap('b'), metadata: { name: 'b', namespace: 'default', labels: { app: 'x' } } });
      void client.create(configMap('c'));
    }, 3);
    scheduler.schedule(() => void client.patchMerge(configMap('a'), { metadata: { labels: { app: 'y' } } }), 5);
    await runVirtualTime(scheduler);
    expect(seen).to.deep.equal(['0 Restart', '0 Listed(a@1)', '0 Synced', '3 Added(b@2)', '5 Deleted(a@4)']);
  });

  it('lists and watches only a shard with a shardSelector, and lists again when its ranges move', async () => {
    const { client, scheduler } = setup();
    const point = (uid: string) => ({ by: 'uid' as const, ranges: [{ start: fnv1a64(uid), end: fnv1a64(uid) + 1n }] });
    for (const name of ['a', 'b']) client.seed({ ...configMap(name), metadata: { name, namespace: 'default', uid: `uid-${name}` } });
    const ranges = new BehaviorSubject(point('uid-a'));
    const seen: string[] = [];
    client.watch({ version: 'v1', resource: 'configmaps' }, { shardSelector: ranges }).subscribe((e) => seen.push(`${scheduler.now()} ${'object' in e ? `${e.type}(${e.object.metadata.name ?? ''})` : e.type}`));
    scheduler.schedule(() => void client.patchMerge(configMap('b'), { data: { x: '1' } }), 2);
    scheduler.schedule(() => void client.patchMerge(configMap('a'), { data: { x: '1' } }), 3);
    scheduler.schedule(() => ranges.next(point('uid-b')), 5);
    await runVirtualTime(scheduler);
    expect(seen).to.deep.equal(['0 Restart', '0 Listed(a)', '0 Synced', '3 Modified(a)', '5 Restart', '5 Listed(b)', '5 Synced']);
  });
});
