import { expect } from 'chai';
import { VirtualTimeScheduler } from 'rxjs';
import { addressed } from '../../src/observe/timelineClient.js';
import { KubeApiError } from '../../src/sinks/client/errors.js';
import type { ListTarget, ObjectTarget } from '../../src/sinks/client/kubeClient.js';
import { replayClient, type ReplayedRunLog } from '../../src/testing/replay/replayClient.js';
import type { RecordedRun } from '../../src/testing/replay/runSteps.js';
import type { WriteEntry } from '../../src/observe/timeline.js';

const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop' } };
const clusterRole: ObjectTarget = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'reader', namespace: '' };
const configMaps: ListTarget = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop' };

function write(at: number, verb: string, target: ObjectTarget | ListTarget, code: number, body: unknown): WriteEntry {
  // Named as the traced client names what it records.
  const { resource, objectKey } = addressed(target);
  return { type: 'write', at, controller: 'c', key: 'shop/web', verb, resource, ...(objectKey !== undefined ? { objectKey } : {}), code, body };
}

describe('replayClient (answers a replayed run with what the recorded run got)', () => {
  it('matches calls by what they addressed, as the recorded timeline names it', async () => {
    expect(addressed(deployment)).to.deep.equal({ resource: 'Deployment.apps', objectKey: 'shop/web' });
    expect(addressed(clusterRole)).to.deep.equal({ resource: 'ClusterRole.rbac.authorization.k8s.io', objectKey: 'reader' });
    expect(addressed(configMaps)).to.deep.equal({ resource: 'ConfigMap', objectKey: undefined });
    const requests = [
      write(1, 'get', deployment, 200, { ...deployment, spec: { replicas: 2 } }),
      write(2, 'get', clusterRole, 200, { kind: 'ClusterRole', metadata: { name: 'reader' } }),
      write(3, 'list', configMaps, 200, [{ kind: 'ConfigMap', metadata: { name: 'x' } }]),
      write(4, 'remove', { apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', namespace: 'shop' }, 404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'configmaps "gone" not found' }),
    ];
    const recorded: RecordedRun = { key: 'shop/web', run: 1, attempt: 1, start: 0, end: 5, requests, startIndex: 0, endIndex: 5, steps: [] };
    const log: ReplayedRunLog = { key: 'shop/web', run: 1, steps: [] };
    const scheduler = new VirtualTimeScheduler();
    const client = replayClient(recorded, log, scheduler);
    const at = (p: Promise<unknown>): Promise<unknown> => {
      scheduler.flush();
      return p;
    };
    expect(await at(client.get(deployment))).to.deep.equal(requests[0]?.body);
    expect(await at(client.get(clusterRole))).to.deep.equal(requests[1]?.body);
    expect(await at(client.list(configMaps))).to.deep.equal(requests[2]?.body);
    const failure = await at(client.remove({ apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', namespace: 'shop' })).catch((err: unknown) => err);
    // The recorded key split back into the namespace and name the client's error names.
    expect(failure).to.be.instanceOf(KubeApiError);
    expect((failure as KubeApiError).code).to.equal(404);
    expect((failure as KubeApiError).request).to.deep.equal({ verb: 'remove', resource: 'ConfigMap', name: 'gone', namespace: 'shop' });
    expect(log.steps.map((s) => s.text)).to.deep.equal(['get Deployment.apps shop/web', 'get ClusterRole.rbac.authorization.k8s.io reader', 'list ConfigMap', 'remove ConfigMap shop/gone 404']);
  });

  it('names a cluster-scoped object of a recorded failure by name alone, and refuses a recorded key that is no key', async () => {
    const requests = [
      write(1, 'get', clusterRole, 403, { kind: 'Status', code: 403, reason: 'Forbidden', message: 'forbidden' }),
      { ...write(2, 'get', deployment, 404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'gone' }), objectKey: 'shop/web/extra' },
    ];
    const recorded: RecordedRun = { key: 'shop/web', run: 1, attempt: 1, start: 0, end: 5, requests, startIndex: 0, endIndex: 5, steps: [] };
    const scheduler = new VirtualTimeScheduler();
    const client = replayClient(recorded, { key: 'shop/web', run: 1, steps: [] }, scheduler);
    const forbidden = client.get(clusterRole).catch((err: unknown) => err);
    scheduler.flush();
    expect(((await forbidden) as KubeApiError).request).to.deep.equal({ verb: 'get', resource: 'ClusterRole.rbac.authorization.k8s.io', name: 'reader' });
    // A hand-edited recording: the key splitKey refuses, named, instead of a request split somewhere in the middle.
    const odd = client.get({ ...deployment, metadata: { name: 'web/extra', namespace: 'shop' } }).catch((err: unknown) => err);
    scheduler.flush();
    expect(((await odd) as Error).message).to.equal('cannot split key "shop/web/extra": expected "namespace/name" or "name"');
  });
});
