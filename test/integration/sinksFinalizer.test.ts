import { expect } from 'chai';
import { silentLogger, kubeClient, type KubeClient, isInvalid, isNotFound, finalizer, FinalizerError, setControllerReference, type KubeObject } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { rejection } from '../sinks/rejection.js';

const name = 'example.com/cleanup';
const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'app', namespace: 'default' };

function configMap(metadata: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'default', ...metadata } };
}

describe('finalizer against the embedded API server', () => {
  let server: ApiServer;
  let client: KubeClient;
  let calls: string[];
  const handlers = {
    apply: (o: KubeObject) => {
      calls.push(`apply ${o.metadata.name}`);
      return 'applied-result';
    },
    cleanup: async (o: KubeObject) => {
      calls.push(`cleanup ${o.metadata.name}`);
      return 'cleaned-result';
    },
  };

  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
    client = kubeClient(server.kubeConfig(), { logger: silentLogger });
    calls = [];
  });
  afterEach(() => server.close());

  it('adds the finalizer to a live object that lacks it and stops there, without apply', async () => {
    const live = await client.create(configMap());
    const outcome = await finalizer(client, name, live, handlers);
    expect(outcome.action).to.equal('added');
    expect(outcome.object.metadata.finalizers).to.deep.equal([name]);
    expect(calls).to.deep.equal([]);
    expect((await client.get(ref)).metadata.finalizers).to.deep.equal([name]);
  });

  it('appends to finalizers other controllers put there', async () => {
    const live = await client.create(configMap({ finalizers: ['other.io/keep'] }));
    const outcome = await finalizer(client, name, live, handlers);
    expect(outcome.object.metadata.finalizers).to.deep.equal(['other.io/keep', name]);
  });

  it('runs apply on a live object that has the finalizer, and writes nothing itself', async () => {
    const live = await client.create(configMap({ finalizers: [name] }));
    server.clearRequestLog();
    const outcome = await finalizer(client, name, live, handlers);
    expect(outcome).to.deep.include({ action: 'applied', result: 'applied-result' });
    expect(calls).to.deep.equal(['apply app']);
    expect(server.requestLog).to.deep.equal([]);
  });

  it('runs cleanup on an object being deleted, then removes the finalizer so the delete completes', async () => {
    await client.create(configMap({ finalizers: [name] }));
    const deleting = (await client.remove(ref)).object as KubeObject;
    expect(deleting.metadata.deletionTimestamp).to.be.a('string');
    const outcome = await finalizer(client, name, deleting, handlers);
    expect(outcome).to.deep.include({ action: 'cleanedUp', result: 'cleaned-result' });
    expect(calls).to.deep.equal(['cleanup app']);
    expect(isNotFound(await rejection(client.get(ref)))).to.equal(true);
  });

  it('keeps the finalizer, and the object, when cleanup fails', async () => {
    await client.create(configMap({ finalizers: [name] }));
    const deleting = (await client.remove(ref)).object as KubeObject;
    const failure = new Error('cloud API down');
    const err = await rejection(finalizer(client, name, deleting, { ...handlers, cleanup: () => Promise.reject(failure) }));
    expect(err).to.equal(failure);
    expect((await client.get(ref)).metadata.finalizers).to.deep.equal([name]);
  });

  it('removes only its own finalizer, leaving the others to hold the object', async () => {
    await client.create(configMap({ finalizers: ['other.io/keep', name] }));
    const deleting = (await client.remove(ref)).object as KubeObject;
    const outcome = await finalizer(client, name, deleting, handlers);
    expect(outcome.object.metadata.finalizers).to.deep.equal(['other.io/keep']);
    expect((await client.get(ref)).metadata.deletionTimestamp).to.be.a('string');
  });

  it('does nothing for an object being deleted without the finalizer', async () => {
    await client.create(configMap({ finalizers: ['other.io/keep'] }));
    const deleting = (await client.remove(ref)).object as KubeObject;
    server.clearRequestLog();
    const outcome = await finalizer(client, name, deleting, handlers);
    expect(outcome.action).to.equal('skipped');
    expect(calls).to.deep.equal([]);
    expect(server.requestLog).to.deep.equal([]);
  });

  it('fails the add, changing nothing, when the finalizers changed since the object was read', async () => {
    const stale = await client.create(configMap());
    await client.patchMerge(ref, { metadata: { finalizers: ['other.io/keep'] } });
    const err = await rejection(finalizer(client, name, stale, handlers));
    expect(err).to.be.instanceOf(FinalizerError);
    expect((err as FinalizerError).phase).to.equal('add');
    expect(isInvalid((err as Error).cause)).to.equal(true);
    expect((err as Error).message).to.match(/^failed to add finalizer "example.com\/cleanup" to ConfigMap "default\/app": /);
    expect((await client.get(ref)).metadata.finalizers).to.deep.equal(['other.io/keep']);
    // The retry sees the new list and adds to it.
    const outcome = await finalizer(client, name, await client.get(ref), handlers);
    expect(outcome.object.metadata.finalizers).to.deep.equal(['other.io/keep', name]);
  });

  it('fails the removal, removing nothing of others, when the list moved under it after cleanup', async () => {
    await client.create(configMap({ finalizers: ['other.io/first', name] }));
    const stale = (await client.remove(ref)).object as KubeObject;
    // Another controller finishes and removes its finalizer: ours moves from index 1 to 0.
    await client.patchJson(ref, [{ op: 'remove', path: '/metadata/finalizers/0' }]);
    const err = await rejection(finalizer(client, name, stale, handlers));
    expect(err).to.be.instanceOf(FinalizerError);
    expect((err as FinalizerError).phase).to.equal('remove');
    expect(calls).to.deep.equal(['cleanup app']);
    expect((await client.get(ref)).metadata.finalizers).to.deep.equal([name]);
    const outcome = await finalizer(client, name, await client.get(ref), handlers);
    expect(outcome.action).to.equal('cleanedUp');
    expect(isNotFound(await rejection(client.get(ref)))).to.equal(true);
  });
});

/** Whether the object is gone, allowing the server's asynchronous collector a bounded number of event-loop turns. */
async function collected(client: KubeClient, target: KubeObject | typeof ref): Promise<boolean> {
  for (let turn = 0; turn < 100; turn++) {
    try {
      await client.get(target);
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return false;
}

describe('owner references against the embedded API server', () => {
  let server: ApiServer;
  let client: KubeClient;

  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
    client = kubeClient(server.kubeConfig(), { logger: silentLogger });
  });
  afterEach(() => server.close());

  it('lets the garbage collector delete an owned object once its owner is deleted', async () => {
    const owner = await client.create(configMap({ name: 'owner' }));
    const owned = await client.create(setControllerReference(owner, configMap({ name: 'owned' })));
    expect(owned.metadata.ownerReferences?.[0]).to.include({ uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true });
    expect(await collected(client, owned), 'not collected while its owner lives').to.equal(false);
    await client.remove(owner);
    expect(await collected(client, owned), 'collected once its owner is gone').to.equal(true);
  });

  it('deletes the owned object first under a foreground delete of the owner, then the owner', async () => {
    const owner = await client.create(configMap({ name: 'owner' }));
    const owned = await client.create(setControllerReference(owner, configMap({ name: 'owned' })));
    const { result, object } = await client.remove(owner, { propagationPolicy: 'Foreground' });
    expect(result).to.equal('deleting');
    expect(object?.metadata.finalizers).to.deep.equal(['foregroundDeletion']);
    expect(await collected(client, owner)).to.equal(true);
    expect(await collected(client, owned)).to.equal(true);
  });
});
