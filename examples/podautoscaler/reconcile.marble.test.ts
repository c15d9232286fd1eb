import { expect } from 'chai';
import { findCondition, FinalizerError, type KubeObject } from 'rxkube';
import { runReconcile, type ReconcileRunHelpers, type RunReconcileOptions } from 'rxkube/testing';
import { podAutoscalerCrd } from './crd.js';
import { autoscalerManifest, autoscalerRef, deploymentManifest, deploymentRef } from './manifests.js';
import { reconcilePodAutoscaler } from './reconcile.js';
import { autoscalerToRivals, deploymentToAutoscalers } from './triggers.js';
import { deployments, FINALIZER, podAutoscalers, SCALED_BY, type PodAutoscaler } from './types.js';

/**
 * The podautoscaler's reconcile, marble-tested in virtual time with
 * rxkube/testing: the same wiring as `podAutoscalerController` (the
 * PodAutoscaler store, Deployments and rival autoscalers mapped to keys),
 * an in-memory cluster for `ctx.client` in which every request takes 1 ms,
 * and diagrams of what the controller did: its outcomes, its writes and its
 * Events, each at the virtual millisecond it happened. Its writes come back
 * through the watch, as from a real API server, so each diagram shows the
 * level-triggered loop converging.
 */

const autoscalers = podAutoscalers();
const options: RunReconcileOptions<PodAutoscaler> = {
  name: 'podautoscaler',
  for: autoscalers,
  watches: [
    { resource: deployments(), map: deploymentToAutoscalers },
    { resource: autoscalers, map: autoscalerToRivals },
  ],
  reconcile: reconcilePodAutoscaler,
  client: { resources: [podAutoscalerCrd()], latency: 1 },
};

const paWrites = 'podautoscalers.autoscaling.rxkube.dev default/web';

/** A PodAutoscaler `web` driving Deployment `web` at 3 replicas, as the controller leaves them once converged. */
function converged({ seed }: ReconcileRunHelpers<PodAutoscaler>): void {
  const deployment = deploymentManifest('default', 'web', 3);
  deployment.metadata.annotations = { [SCALED_BY]: 'web' };
  const pa = autoscalerManifest('default', 'web', 'web', 3);
  pa.metadata.finalizers = [FINALIZER];
  pa.status = {
    observedGeneration: 1,
    currentReplicas: 3,
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Scaled', message: 'deployment "web" has 3 replicas', observedGeneration: 1, lastTransitionTime: '1970-01-01T00:00:00Z' },
    ],
  };
  seed<KubeObject>(deployment, pa);
}

describe('examples/podautoscaler: the reconcile in marble diagrams (rxkube/testing)', () => {
  it('converges a new autoscaler with read-your-own-writes: finalizer, then replicas, Event and status, and its own writes find nothing more to do', async () => {
    const run = await runReconcile({ ...options, readYourWrites: true }, ({ seed, expectOutcomes, expectWrites, expectEvents }) => {
      seed<KubeObject>(deploymentManifest('default', 'web', 1), autoscalerManifest('default', 'web', 'web', 3));
      // 1: the first run adds the finalizer and stops. The Deployment's first
      //    list had triggered the key again meanwhile; read-your-own-writes
      //    holds that rerun until the finalizer's watch event is in the cache
      //    (at once here), so it never acts on the cache without it:
      // 1-4: it scales the Deployment (2), records the Event, reads and writes
      //    the status (3, 4); the Deployment's and the status's own events
      //    rerun it once, when the cache shows both:
      // 4: a run that finds everything done: no request at all.
      // (With `readYourWrites: false`, the rerun at 1 read the cache without
      // the finalizer, and its guarded patch failed with a 422: see below.)
      expectOutcomes('-a 2ms (bb)', {
        a: { key: 'default/web', result: 'success', attempt: 0 },
        b: { result: 'success', attempt: 0 },
      });
      expectWrites('-ab-c', {
        a: { verb: 'patch', patchType: 'json', key: 'default/web', kind: 'PodAutoscaler', body: [{ op: 'test', path: '/metadata/finalizers', value: null }, { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] }] },
        b: { verb: 'patch', patchType: 'merge', resource: 'deployments.apps', body: { metadata: { annotations: { [SCALED_BY]: 'web' } }, spec: { replicas: 3 } } },
        c: `update/status ${paWrites}`,
      });
      expectEvents('--a', { a: { type: 'Normal', reason: 'Scaled', key: 'default/web', note: 'scaled deployment "web" from 1 to 3 replicas', related: { kind: 'Deployment', name: 'web' } } });
    });
    const pa = run.client.object(autoscalerRef('default', 'web'));
    expect(pa?.status).to.deep.include({ observedGeneration: 1, currentReplicas: 3 });
    expect(findCondition(pa?.status?.conditions, 'Ready')).to.include({ status: 'True', reason: 'Scaled' });
    expect(run.client.object(deploymentRef('default', 'web'))?.spec?.replicas).to.equal(3);
  });

  it('without read-your-own-writes, reruns from a cache its finalizer has not reached, and fails there once', async () => {
    await runReconcile({ ...options, readYourWrites: false }, ({ seed, expectOutcomes, expectWrites }) => {
      seed<KubeObject>(deploymentManifest('default', 'web', 1), autoscalerManifest('default', 'web', 'web', 3));
      // 1: the finalizer; the Deployment's list triggered the key meanwhile, so it reruns at once, from a
      // cache the finalizer's watch event has not reached: 2: its guarded finalizer patch fails (422), which
      // the watch event (arrived during that run) turns into an immediate retry; 5: replicas and status;
      // 6: the reruns of the Deployment's and the status's events.
      expectOutcomes('-ab 2ms c(dd)', {
        a: { key: 'default/web', result: 'success', attempt: 0 },
        b: { result: 'error', error: FinalizerError },
        c: { result: 'success', attempt: 1 },
        d: { result: 'success', attempt: 0 },
      });
      expectWrites('-abc-d', { a: { verb: 'patch', patchType: 'json' }, b: `patch ${paWrites} 422 Invalid`, c: { resource: 'deployments.apps' }, d: `update/status ${paWrites}` });
    });
  });

  it('writes nothing at all when it starts over a cluster it already converged', async () => {
    await runReconcile(options, (helpers) => {
      converged(helpers);
      // Two runs at 0: the autoscaler's own list, then the Deployment's list mapped to it; neither writes.
      helpers.expectOutcomes('(aa)', { a: 'default/web success' });
      helpers.expectWrites('');
      helpers.expectEvents('');
    });
  });

  it('puts back replicas changed behind its back, with a Scaled Event, and leaves the status alone', async () => {
    await runReconcile(options, (helpers) => {
      converged(helpers);
      helpers.cluster('20ms a', { a: (kubectl) => kubectl.patchMerge(deploymentRef('default', 'web'), { spec: { replicas: 7 } }) });
      // 0: the two runs of the start; 20: the Deployment's event maps to its autoscaler, whose run patches it back
      // (answered at 21); the patch's own event reruns it at 21, and that run finds all well.
      helpers.expectOutcomes('(aa) 17ms (aa)', { a: 'default/web success' });
      helpers.expectWrites('21ms a', { a: { verb: 'patch', resource: 'deployments.apps', body: { spec: { replicas: 3 } } } });
      helpers.expectEvents('21ms a', { a: { reason: 'Scaled', note: 'scaled deployment "web" from 7 to 3 replicas' } });
    });
  });

  it('rescales on a spec change and retries a conflicting status write after client-go\'s 10 ms, inside one reconcile', async () => {
    const run = await runReconcile(options, (helpers) => {
      converged(helpers);
      helpers.client.faults.failNext(1, { code: 409, kind: 'PodAutoscaler', subresource: 'status' });
      helpers.cluster('20ms a', { a: (kubectl) => kubectl.patchMerge(autoscalerRef('default', 'web'), { spec: { replicas: 5 } }) });
      // 21: the Deployment is scaled; 22: the status is read, 23: its write conflicts; 10 ms later
      // it is read again (answered at 34) and written (35). The run ends there, a success: the conflict
      // never reached the workqueue.
      helpers.expectWrites('21ms a 1ms b 11ms c', {
        a: { resource: 'deployments.apps', body: { spec: { replicas: 5 } } },
        b: `update/status ${paWrites} 409 Conflict`,
        c: { verb: 'update', subresource: 'status', code: 200, body: { status: { observedGeneration: 2, currentReplicas: 5 } } },
      });
      helpers.expectEvents('21ms a', { a: { reason: 'Scaled', note: 'scaled deployment "web" from 3 to 5 replicas' } });
    });
    const afterEdit = run.outcomes.filter((o) => o.at >= 20);
    expect(afterEdit[0]).to.include({ at: 35, result: 'success' });
    expect(afterEdit.map((o) => o.result)).to.not.include('error');
  });

  it('backs off on a failing Deployment patch with the workqueue\'s delays (5, 10 ms) and records the Event once the patch went through', async () => {
    await runReconcile(options, (helpers) => {
      converged(helpers);
      helpers.client.faults.failNext(2, { code: 500, kind: 'Deployment' });
      helpers.cluster('20ms a', { a: (kubectl) => kubectl.patchMerge(autoscalerRef('default', 'web'), { spec: { replicas: 4 } }) });
      // 21: 500; retried 5 ms later (answered at 27): 500; retried 10 ms later (answered at 38): scaled,
      // then the status read (39) and written (40).
      helpers.expectWrites('21ms a 5ms b 10ms c 1ms d', {
        a: 'patch deployments.apps default/web 500 InternalError',
        b: 'patch deployments.apps default/web 500 InternalError',
        c: 'patch deployments.apps default/web',
        d: `update/status ${paWrites}`,
      });
      helpers.expectEvents('38ms a', { a: { reason: 'Scaled', note: 'scaled deployment "web" from 3 to 4 replicas' } });
    });
  });

  it('on delete, lets go of the Deployment and records Released before it removes its finalizer, and the autoscaler goes', async () => {
    const run = await runReconcile(options, (helpers) => {
      converged(helpers);
      helpers.cluster('20ms a', { a: (kubectl) => kubectl.remove(autoscalerRef('default', 'web')) });
      // 20: marked for deletion; 21: it reads the server (the cache may be stale); 22: removes its stamp from the
      // Deployment (guarded by a test of the stamp), records Released; 23: removes its finalizer, and the object goes.
      helpers.expectWrites('22ms a b', {
        a: { verb: 'patch', patchType: 'json', resource: 'deployments.apps', body: [{ op: 'test', value: 'web' }, { op: 'remove' }] },
        b: { verb: 'patch', patchType: 'json', kind: 'PodAutoscaler', body: [{ op: 'test', value: FINALIZER }, { op: 'remove' }] },
      });
      helpers.expectEvents('22ms a', { a: { reason: 'Released', note: 'deleted; stopped scaling deployment "web" (left at 3 replicas)' } });
    });
    expect(run.client.object(autoscalerRef('default', 'web'))).to.equal(undefined);
    const deployment = run.client.object(deploymentRef('default', 'web'));
    expect(deployment?.metadata.annotations?.[SCALED_BY]).to.equal(undefined);
    expect(deployment?.spec?.replicas).to.equal(3);
  });
});
