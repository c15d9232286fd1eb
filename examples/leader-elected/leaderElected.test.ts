import { expect } from 'chai';
import type { Subscription } from 'rxjs';
import { findCondition, silentLogger, type Controller, type ObjectKey } from 'rxkube';
import { leaseClient, pausable, type LeaseClient } from 'rxkube/testing';
import { dilatedScheduler } from '../../test/support/dilatedScheduler.js';
import { waitFor } from '../../test/support/waitFor.js';
import { installPodAutoscalerCrd } from '../podautoscaler/crd.js';
import { autoscalerManifest, autoscalerRef, deploymentManifest, deploymentRef } from '../podautoscaler/manifests.js';
import type { Deployment } from 'rxkube/kinds';
import type { PodAutoscaler } from '../podautoscaler/types.js';
import { useEmbeddedServer } from '../support/harness.js';
import { podAutoscalerReplica } from './replica.js';

interface Run {
  identity: string;
  key: ObjectKey;
  start: number;
  end?: number;
}

describe('examples/leader-elected: two podautoscaler replicas under leader election', () => {
  const h = useEmbeddedServer();
  let runs: Run[];
  const subscriptions = new Map<string, Subscription>();

  beforeEach(async () => {
    await installPodAutoscalerCrd(h.client);
    await h.client.create(deploymentManifest('default', 'web', 1));
    await h.client.create(autoscalerManifest('default', 'web', 'web', 3));
    runs = [];
  });

  afterEach(() => {
    for (const s of subscriptions.values()) s.unsubscribe();
    subscriptions.clear();
  });

  /** One replica; time runs 20x (lease 15 s = 0.75 s), slow enough that a busy machine does not stall a healthy leader past its deadline. */
  function replica(identity: string, client?: LeaseClient): Controller<PodAutoscaler> {
    const c = podAutoscalerReplica(h.server.kubeConfig(), {
      identity,
      logger: silentLogger,
      scheduler: dilatedScheduler(20),
      ...(client ? { leaseClient: client } : {}),
      onReconcile: ({ identity: who, key, phase }) => {
        if (phase === 'start') runs.push({ identity: who, key, start: performance.now() });
        else [...runs].reverse().find((r) => r.identity === who && r.key === key && r.end === undefined)!.end = performance.now();
      },
    });
    subscriptions.set(identity, c.subscribe());
    return c;
  }

  const deployment = () => h.server.snapshot({ group: 'apps', version: 'v1', resource: 'deployments', namespace: 'default' })[0] as Deployment;
  const autoscaler = () =>
    h.server.snapshot({ group: 'autoscaling.rxkube.dev', version: 'v1', resource: 'podautoscalers', namespace: 'default' })[0] as PodAutoscaler;
  const convergedAt = (replicas: number) =>
    deployment().spec?.replicas === replicas &&
    autoscaler().status?.currentReplicas === replicas &&
    autoscaler().status?.observedGeneration === autoscaler().metadata.generation &&
    findCondition(autoscaler().status?.conditions, 'Ready')?.reason === 'Scaled';
  const leaseHolder = () =>
    (h.server.snapshot({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: 'default' })[0] as
      | { spec?: { holderIdentity?: string } }
      | undefined)?.spec?.holderIdentity;

  /**
   * No two runs of different replicas overlap in time. A run that has not
   * ended is still running: it lasts until now, and overlaps every run of
   * the other replica that started after it (an old leader's run that was
   * never aborted is exactly the bug this is for).
   */
  function expectNeverBothAtOnce(): void {
    const now = performance.now();
    const end = (r: Run) => r.end ?? now;
    for (const a of runs) {
      for (const b of runs) {
        if (a.identity !== b.identity) {
          expect(end(a) <= b.start || end(b) <= a.start, `${a.identity} (${a.key}${a.end === undefined ? ', never ended' : ''}) and ${b.identity} reconciled at once`).to.equal(true);
        }
      }
    }
  }

  it('only the leader reconciles; when it stops and releases the Lease, the other takes over at once', async () => {
    const one = replica('one');
    await waitFor(() => one.leading() && convergedAt(3), 'replica one to lead and converge');
    const two = replica('two');
    await waitFor(() => two.ready(), 'replica two to sync and stand by');
    await h.client.patchMerge(autoscalerRef('default', 'web'), { spec: { replicas: 4 } });
    await waitFor(() => convergedAt(4), 'the leader to follow the edit');
    expect(two.leading()).to.equal(false);
    expect(new Set(runs.map((r) => r.identity))).to.deep.equal(new Set(['one']));

    subscriptions.get('one')!.unsubscribe();
    await waitFor(() => two.leading(), 'replica two to take over');
    const handover = runs.length;
    await h.client.patchMerge(autoscalerRef('default', 'web'), { spec: { replicas: 6 } });
    await waitFor(() => convergedAt(6), 'the new leader to follow the edit');
    expect(leaseHolder()).to.equal('two');
    expect(runs.slice(handover).map((r) => r.identity)).to.satisfy((who: string[]) => who.length > 0 && who.every((w) => w === 'two'));
    expectNeverBothAtOnce();
  });

  it('a leader cut off from the API server stops reconciling, the other takes over once the Lease expires, and they never reconcile at once', async () => {
    const cutOff = pausable(leaseClient(h.server.kubeConfig()));
    const one = replica('one', cutOff.client);
    await waitFor(() => one.leading() && convergedAt(3), 'replica one to lead and converge');
    const two = replica('two');
    await waitFor(() => two.ready(), 'replica two to sync and stand by');

    // Someone keeps changing the replicas behind the controllers' back, so a leader always has work.
    let meddling = true;
    const meddle = (async () => {
      for (let n = 10; meddling; n++) {
        await h.client.patchMerge(deploymentRef('default', 'web'), { spec: { replicas: n } });
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    })();
    cutOff.pause('fail');
    await waitFor(() => !one.leading(), 'replica one to stop leading');
    await waitFor(() => two.leading(), 'replica two to take over after the lease duration');
    meddling = false;
    await meddle;
    await waitFor(() => convergedAt(3), 'the new leader to correct the replicas');
    expect(leaseHolder()).to.equal('two');
    expect(runs.some((r) => r.identity === 'two')).to.equal(true);
    expectNeverBothAtOnce();
  });
});
