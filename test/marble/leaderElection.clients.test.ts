import { expect } from 'chai';
import { lastValueFrom, type Observable } from 'rxjs';
import { isAlreadyExists, isConflict, isNotFound, KubeApiError } from 'rxkube';
import { inMemoryLeaseClient, LeaseClientPausedError, pausable } from 'rxkube/testing';
import { testScheduler } from '../support/objects.js';
import { at, heldBy, sample, virtually } from './leaderElection.support.js';

/** Subscribes at once and records how the call ended, with the time. */
function track<T>(ts: { now(): number }, call: Observable<T>): { value?: T; error?: unknown; at?: number } {
  const outcome: { value?: T; error?: unknown; at?: number } = {};
  call.subscribe({
    next: (value) => {
      outcome.value = value;
      outcome.at = ts.now();
    },
    error: (error: unknown) => {
      outcome.error = error;
      outcome.at = ts.now();
    },
  });
  return outcome;
}

describe('leaderElection: the test clients', () => {
  describe('inMemoryLeaseClient', () => {
    it('answers synchronously without latency, moving resourceVersion on every write', async () => {
      const client = inMemoryLeaseClient();
      expect(await lastValueFrom(client.get('default', 'lock'))).to.equal(undefined);
      const created = await lastValueFrom(client.create(heldBy('a')));
      expect(created.metadata.resourceVersion).to.equal('1');
      expect(created).to.deep.include({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' });
      const updated = await lastValueFrom(client.update({ ...created, spec: { holderIdentity: 'b' } }));
      expect(updated.metadata.resourceVersion).to.equal('2');
      expect(client.lease('default', 'lock')?.spec).to.deep.equal({ holderIdentity: 'b' });
      expect(client.calls).to.deep.equal({ get: 1, create: 1, update: 1 });
    });

    it('answers a stale update with 409 Conflict, a duplicate create with 409 AlreadyExists, a missing lease with 404', async () => {
      const client = inMemoryLeaseClient();
      const created = await lastValueFrom(client.create(heldBy('a')));
      // A write that changes something (one that changes nothing keeps the resourceVersion, as in kube).
      await lastValueFrom(client.update({ ...created, spec: { ...created.spec, holderIdentity: 'b' } }));
      const stale = await lastValueFrom(client.update(created)).catch((err: unknown) => err);
      expect(isConflict(stale)).to.equal(true);
      expect((stale as KubeApiError).message).to.match(/update leases\.coordination\.k8s\.io "default\/lock": Operation cannot be fulfilled/);
      const duplicate = await lastValueFrom(client.create(heldBy('b'))).catch((err: unknown) => err);
      expect(isAlreadyExists(duplicate)).to.equal(true);
      const missing = await lastValueFrom(
        client.update({ ...created, metadata: { ...created.metadata, name: 'other' } }),
      ).catch((err: unknown) => err);
      expect(isNotFound(missing)).to.equal(true);
    });

    it('takes an update without resourceVersion unconditionally, as kube does for Leases', async () => {
      const client = inMemoryLeaseClient();
      client.put(heldBy('a'));
      const updated = await lastValueFrom(client.update(heldBy('b')));
      expect(updated.spec?.holderIdentity).to.equal('b');
    });

    it('hands out copies: changing what it returned changes nothing stored', async () => {
      const client = inMemoryLeaseClient();
      const created = await lastValueFrom(client.create(heldBy('a')));
      created.spec!.holderIdentity = 'mallory';
      client.lease('default', 'lock')!.spec!.holderIdentity = 'mallory';
      expect(client.lease('default', 'lock')?.spec?.holderIdentity).to.equal('a');
    });

    it('applies a call after one leg of latency and answers after another; cancelled before, it never applies', () => {
      const { answered, storedMid, cancelled } = virtually((ts, client) => {
        const answered = track(ts, client.create(heldBy('a')));
        const storedMid = sample(ts, 15, () => client.lease('default', 'lock')?.spec?.holderIdentity);
        at(ts, 100, () => {
          const update = client.update({ ...client.lease('default', 'lock')!, spec: { holderIdentity: 'b' } });
          const subscription = update.subscribe();
          at(ts, 105, () => subscription.unsubscribe());
        });
        const cancelled = sample(ts, 200, () => client.lease('default', 'lock')?.spec?.holderIdentity);
        return { answered, storedMid, cancelled };
      }, 10);
      expect(storedMid.value).to.equal('a');
      expect(answered.at).to.equal(20);
      expect(cancelled.value).to.equal('a');
    });
  });

  describe('pausable', () => {
    it('passes calls through while not paused', () => {
      const ts = testScheduler();
      const client = inMemoryLeaseClient();
      const cut = pausable(client);
      const outcome = track(ts, cut.client.create(heldBy('a')));
      expect(outcome.value?.spec?.holderIdentity).to.equal('a');
      expect(cut.paused).to.equal(undefined);
    });

    it('in fail mode fails new calls at once, without reaching the store', () => {
      const ts = testScheduler();
      const client = inMemoryLeaseClient();
      const cut = pausable(client);
      cut.pause('fail');
      const outcome = track(ts, cut.client.get('default', 'lock'));
      expect(outcome.error).to.be.instanceOf(LeaseClientPausedError);
      expect((outcome.error as Error).message).to.equal('lease client paused: get default/lock failed');
      expect(client.calls.get).to.equal(0);
    });

    it('in fail mode turns an answer that arrives into an error though the write landed', () => {
      const { outcome, stored } = virtually((ts, client) => {
        const cut = pausable(client);
        const outcome = track(ts, cut.client.create(heldBy('a')));
        at(ts, 15, () => cut.pause('fail'));
        return { outcome, stored: sample(ts, 30, () => client.lease('default', 'lock')?.spec?.holderIdentity) };
      }, 10);
      expect(outcome.error).to.be.instanceOf(LeaseClientPausedError);
      expect(outcome.at).to.equal(20);
      expect(stored.value).to.equal('a');
    });

    it('in hang mode holds calls and answers until resumed, then lets them through', () => {
      const { call, before, reached } = virtually((ts, client) => {
        client.put(heldBy('a'));
        const cut = pausable(client);
        cut.pause('hang');
        const call = track(ts, cut.client.get('default', 'lock'));
        at(ts, 60, () => cut.resume());
        // 10 ms each way: it reaches the store at 70; its answer, due at 80, meets the pause of 75.
        at(ts, 75, () => cut.pause('hang'));
        at(ts, 100, () => cut.resume());
        return {
          call,
          before: sample(ts, 50, () => client.calls.get),
          reached: sample(ts, 75, () => client.calls.get),
        };
      }, 10);
      expect(before.value).to.equal(0);
      expect(reached.value).to.equal(1);
      expect(call.at).to.equal(100);
      expect(call.value?.spec?.holderIdentity).to.equal('a');
    });
  });
});
