import { expect } from 'chai';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { kubeClient, listWatch, ListWatchError, silentLogger, type ResourceRef } from 'rxkube';
import { UnknownResourceError } from '../../src/sinks/client/resources.js';
import { memoryClient, runReconcile, startApiServer, type ApiServer } from 'rxkube/testing';

// A typo in a resource's name must fail in a test as it fails against a real server: at once, in the same words.
const typo: ResourceRef = { version: 'v1', resource: 'configmap' };

describe('the memory cluster, for a resource it does not serve', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({ logger: silentLogger });
  });
  after(async () => {
    await server.close();
  });

  /** What a list-watch of the embedded API server ends with for `ref`. */
  async function serverListWatchError(ref: ResourceRef, labelSelector?: string): Promise<Error> {
    const events = listWatch(server.kubeConfig(), ref, { logger: silentLogger, ...(labelSelector ? { labelSelector } : {}) });
    return lastValueFrom(events.pipe(toArray())).then(
      () => expect.fail('the list-watch of an unknown resource completed'),
      (err: Error) => err,
    );
  }

  it('ends a watch with the ListWatchError the embedded API server gives, in the same words', async () => {
    const expected = await serverListWatchError(typo, 'app=web');
    expect(expected.message).to.contain('404 NotFound');
    const actual = await firstValueFrom(memoryClient().watch(typo, { labelSelector: 'app=web' })).then(
      () => expect.fail('the memory watch of an unknown resource emitted'),
      (err: Error) => err,
    );
    expect(actual).to.be.instanceOf(ListWatchError);
    expect(actual.message).to.equal(expected.message);
    expect(actual).to.include({ code: 404, reason: 'NotFound', verb: 'list', resource: 'configmap' });
  });

  it('rejects a kind in a served apiVersion with the words of a kubeClient against the embedded API server', async () => {
    const target = { apiVersion: 'v1', kind: 'Configmap', namespace: 'default', name: 'web' };
    const expected = await kubeClient(server.kubeConfig(), { logger: silentLogger }).get(target).catch((err: Error) => err);
    const actual = await memoryClient().get(target).catch((err: Error) => err);
    expect(actual).to.be.instanceOf(UnknownResourceError);
    expect((expected as Error).message).to.match(/has no kind "Configmap" \(it serves: .*ConfigMap/);
    expect((actual as Error).message).to.equal((expected as Error).message);
  });

  it('rejects an apiVersion of kube\'s own that it does not serve with the server\'s words', async () => {
    const target = { apiVersion: 'apps/v2', kind: 'Deployment', namespace: 'default', name: 'web' };
    const expected = await kubeClient(server.kubeConfig(), { logger: silentLogger }).get(target).catch((err: Error) => err);
    const actual = await memoryClient().get(target).catch((err: Error) => err);
    expect((actual as Error).message).to.equal((expected as Error).message).and.to.equal('the server does not serve apiVersion "apps/v2"');
  });

  it('refuses to serve a resource in kube\'s own groups that the built-ins lack, as a CRD for it would be refused', () => {
    expect(() => memoryClient({ resources: [{ ...typo, kind: 'ConfigMap' }] })).to.throw(UnknownResourceError, 'cannot serve "configmap" in "v1" as a custom resource');
    expect(() => memoryClient({ resources: [{ group: 'apps', version: 'v1', resource: 'deployment', kind: 'Deployment' }] })).to.throw(UnknownResourceError, 'group "apps"');
    // A built-in named as it is served stays a no-op, and a group of one's own is served.
    expect(() => memoryClient({ resources: [{ version: 'v1', resource: 'configmaps', kind: 'ConfigMap' }, { group: 'example.com', version: 'v1', resource: 'gadgets', kind: 'Gadget' }] })).not.to.throw();
  });

  it('fails runReconcile at once for a misspelt resource, with the message of the embedded API server', async () => {
    const expected = await serverListWatchError(typo);
    let reconciles = 0;
    const run = runReconcile({ for: { ...typo, kind: 'ConfigMap' }, reconcile: () => void reconciles++ }, ({ seed }) => {
      seed({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'default' } });
    });
    const failure = await run.then(
      () => expect.fail('runReconcile of an unknown resource succeeded'),
      (err: Error) => err,
    );
    expect(failure.message).to.equal(`the controller failed at 0 ms: ${expected.message}`);
    expect(reconciles).to.equal(0);
  });
});
