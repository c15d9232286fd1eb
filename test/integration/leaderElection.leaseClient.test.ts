import { expect } from 'chai';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { silentLogger, isAlreadyExists, isConflict, KubeApiError } from 'rxkube';
import { leaseClient, type LeaseClient } from '../../src/sinks/leader/leaseClient.js';
import type { Lease } from '../../src/sinks/leader/leaseRecord.js';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { waitFor } from '../support/waitFor.js';

const leases = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: 'default' };

const lease = (holder: string): Lease => ({
  metadata: { namespace: 'default', name: 'lock' },
  spec: {
    holderIdentity: holder,
    leaseDurationSeconds: 15,
    acquireTime: '2024-05-01T10:00:00.123456Z',
    renewTime: '2024-05-01T10:00:02.654321Z',
    leaseTransitions: 2,
  },
});

describe('leaseClient against the embedded API server', () => {
  let server: ApiServer;
  let client: LeaseClient;

  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
    client = leaseClient(server.kubeConfig());
  });

  afterEach(async () => {
    await server.close();
  });

  const updates = (): number[] => server.requestLog.filter((r) => r.verb === 'update').map((r) => r.status);

  it('reads a missing lease as undefined, then creates, reads and updates it as plain JSON with MicroTimes kept to the microsecond', async () => {
    expect(await firstValueFrom(client.get('default', 'lock'))).to.equal(undefined);
    const created = await firstValueFrom(client.create(lease('a')));
    expect(created.spec).to.deep.equal(lease('a').spec);
    const read = await firstValueFrom(client.get('default', 'lock'));
    expect(read?.spec).to.deep.equal(lease('a').spec);
    expect(typeof read?.metadata.creationTimestamp).to.equal('string');
    const updated = await firstValueFrom(client.update({ ...read!, spec: { ...read!.spec, holderIdentity: 'b' } }));
    expect(updated.metadata.resourceVersion).to.not.equal(read?.metadata.resourceVersion);
    expect(server.snapshot(leases)[0]).to.deep.include({ spec: { ...lease('a').spec, holderIdentity: 'b' } });
  });

  it('answers a lost race as a KubeApiError: Conflict for a stale update, AlreadyExists for a second create', async () => {
    const created = await firstValueFrom(client.create(lease('a')));
    await firstValueFrom(client.update({ ...created, spec: { ...created.spec, holderIdentity: 'b' } }));
    const stale = await lastValueFrom(client.update(created)).catch((err: unknown) => err);
    expect(stale).to.be.instanceOf(KubeApiError);
    expect(isConflict(stale)).to.equal(true);
    expect((stale as Error).message).to.match(/^update leases\.coordination\.k8s\.io "default\/lock": .*\(409 Conflict\)$/);
    const duplicate = await lastValueFrom(client.create(lease('b'))).catch((err: unknown) => err);
    expect(isAlreadyExists(duplicate)).to.equal(true);
  });

  it('turns a server error into a KubeApiError that names the call', async () => {
    server.faults.failNext(1, { code: 500, message: 'etcd is on fire', resource: 'leases' });
    const failed = await lastValueFrom(client.get('default', 'lock')).catch((err: unknown) => err);
    expect(failed).to.be.instanceOf(KubeApiError);
    expect((failed as KubeApiError).code).to.equal(500);
    expect((failed as Error).message).to.match(/^get leases\.coordination\.k8s\.io "default\/lock": etcd is on fire/);
  });

  it('sends nothing until subscribed, and aborts the request when unsubscribed', async () => {
    const created = await firstValueFrom(client.create(lease('a')));
    server.faults.latency(300, { verb: 'update', resource: 'leases' });
    const call = client.update({ ...created, spec: { ...created.spec, holderIdentity: 'b' } });
    expect(updates()).to.deep.equal([]);
    let answered = false;
    const subscription = call.subscribe({ next: () => (answered = true), error: () => (answered = true) });
    await waitFor(() => updates().length === 1, 'the update to reach the server');
    subscription.unsubscribe();
    // The same call again, left alone: answered after the same latency, so
    // the first would have been answered by then; and applied with the same
    // resourceVersion, so it would have been a 409 had the first been applied.
    const applied = await firstValueFrom(call);
    expect(applied.spec?.holderIdentity).to.equal('b');
    expect(answered).to.equal(false);
    expect(updates()).to.deep.equal([0, 200]);
  });
});
