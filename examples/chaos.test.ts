import { expect } from 'chai';
import { InformerFactory, controller, silentLogger, type ControllerContext, type KubeObject, type ObjectKey, type ResourceRef } from 'rxkube';
import { dilatedScheduler } from '../test/support/dilatedScheduler.js';
import { replay, testSeed } from '../test/support/seed.js';
import { waitFor } from '../test/support/waitFor.js';
import { configMapRolloutOptions } from './configmap-rollout/controller.js';
import { reconcileRollout } from './configmap-rollout/reconcile.js';
import { configHash } from './configmap-rollout/hash.js';
import { configMapUses } from './configmap-rollout/references.js';
import { CONFIG_HASH, type ConfigMap, type Deployment as RolloutDeployment } from './configmap-rollout/types.js';
import { describeProblem, problems, type ClusterState } from './demo/state.js';
import { podAutoscalerOptions } from './podautoscaler/controller.js';
import { reconcilePodAutoscaler } from './podautoscaler/reconcile.js';
import { installPodAutoscalerCrd } from './podautoscaler/crd.js';
import { autoscalerManifest, deploymentManifest } from './podautoscaler/manifests.js';
import type { Deployment } from 'rxkube/kinds';
import type { PodAutoscaler } from './podautoscaler/types.js';
import { useEmbeddedServer } from './support/harness.js';

const ns = 'default';

/** A small seeded generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('examples under chaos: podautoscaler and configmap-rollout sharing informers, with faults injected', () => {
  const h = useEmbeddedServer();

  it('converge once the faults stop, and no key is ever reconciled twice at once', async () => {
    const seed = replay; // "seed N (replay with RXKUBE_SEED=N)"
    const rnd = random(testSeed);
    await installPodAutoscalerCrd(h.client);
    const scheduler = dilatedScheduler(50);
    const informers = new InformerFactory(h.server.kubeConfig(), { logger: silentLogger, scheduler });
    const inFlight = new Set<string>();
    let overlaps = 0;
    // Never two reconciles of one key at once (DESIGN invariant 9), checked around the examples' own reconciles.
    const tracked =
      <T extends KubeObject>(name: string, reconcile: (key: ObjectKey, ctx: ControllerContext<T>) => Promise<void>) =>
      async (key: ObjectKey, ctx: ControllerContext<T>) => {
        const id = `${name}:${key}`;
        if (inFlight.has(id)) overlaps++;
        inFlight.add(id);
        try {
          await reconcile(key, ctx);
        } finally {
          inFlight.delete(id);
        }
      };
    // Time runs 50× faster here: the default cacheSyncTimeout (two minutes) would be 2.4 s of wall time under injected faults.
    const common = { informers, scheduler, logger: silentLogger, concurrency: 4, cacheSyncTimeout: 50 * 120_000 };
    // Both are built before either starts: informers of one resource merge their indexes only until then.
    const autoscaling = controller({ ...podAutoscalerOptions(h.server.kubeConfig(), common), reconcile: tracked('pa', reconcilePodAutoscaler) });
    const rollout = controller({ ...configMapRolloutOptions(h.server.kubeConfig(), common), reconcile: tracked('rollout', reconcileRollout) });
    h.start(autoscaling);
    h.start(rollout);

    const names = Array.from({ length: 12 }, (_, i) => `app-${i}`);
    const faults = [
      () => h.server.faults.dropWatches(),
      () => h.server.faults.compact(),
      () => h.server.faults.malformedLine(),
      () => h.server.faults.failNext(3, { code: 500, message: 'chaos' }),
      () => h.server.faults.failNext(2, { code: 429, retryAfterSeconds: 1, verb: 'patch' }),
      () => h.server.faults.failNext(2, { code: 409, reason: 'Conflict', message: 'chaos', verb: 'update' }),
      () => h.server.faults.latency(20 + Math.floor(rnd() * 50)),
      () => h.server.faults.latency(0),
    ];
    // The workload writes in-process, past the faults (which are for the controllers), each change a read and a
    // replace in one tick, so that nothing interleaves with it.
    const refs = {
      configmaps: { group: '', version: 'v1', resource: 'configmaps', namespace: ns },
      deployments: { group: 'apps', version: 'v1', resource: 'deployments', namespace: ns },
      autoscalers: { group: 'autoscaling.rxkube.dev', version: 'v1', resource: 'podautoscalers', namespace: ns },
    };
    const change = <T extends KubeObject>(ref: ResourceRef, name: string, edit: (object: T) => void) => {
      const current = h.server.snapshot(ref).find((o) => o.metadata.name === name);
      if (current === undefined) return;
      const copy = structuredClone(current) as T;
      edit(copy);
      h.server.put(ref, copy);
    };
    for (const name of names) {
      h.server.put(refs.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-config`, namespace: ns }, data: { v: '0' } } as ConfigMap);
      const deployment = deploymentManifest(ns, name, 1) as RolloutDeployment;
      deployment.spec!.template!.spec!.volumes = [{ name: 'config', configMap: { name: `${name}-config` } }];
      h.server.put(refs.deployments, deployment);
      h.server.put(refs.autoscalers, autoscalerManifest(ns, name, name, 2));
    }
    for (let round = 0; round < 80; round++) {
      faults[Math.floor(rnd() * faults.length)]!();
      const name = names[Math.floor(rnd() * names.length)]!;
      const what = rnd();
      if (what < 0.3) change<PodAutoscaler>(refs.autoscalers, name, (pa) => void (pa.spec.replicas = Math.floor(rnd() * 5)));
      else if (what < 0.5) change<ConfigMap>(refs.configmaps, `${name}-config`, (cm) => void (cm.data = { v: String(round) }));
      else if (what < 0.65) change<Deployment>(refs.deployments, name, (d) => {
        if (d.spec !== undefined) d.spec.replicas = 40 + round;
      });
      else if (what < 0.75) h.server.remove(refs.autoscalers, name);
      else if (what < 0.85 && !h.server.snapshot(refs.autoscalers).some((o) => o.metadata.name === name)) {
        h.server.put(refs.autoscalers, autoscalerManifest(ns, name, names[Math.floor(rnd() * names.length)]!, 3));
      }
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    h.server.faults.reset();

    const state = (): ClusterState => ({
      autoscalers: h.server.snapshot({ group: 'autoscaling.rxkube.dev', version: 'v1', resource: 'podautoscalers', namespace: ns }) as PodAutoscaler[],
      deployments: h.server.snapshot({ group: 'apps', version: 'v1', resource: 'deployments', namespace: ns }) as Deployment[],
    });
    const staleStamps = () => {
      const configMaps = h.server.snapshot({ group: '', version: 'v1', resource: 'configmaps', namespace: ns }) as ConfigMap[];
      return (state().deployments as RolloutDeployment[]).filter((d) => {
        const wanted = configHash(configMapUses(d), (name) => configMaps.find((c) => c.metadata.name === name)).hash;
        return wanted !== undefined && d.spec?.template?.metadata?.annotations?.[CONFIG_HASH] !== wanted;
      });
    };
    try {
      await waitFor(() => problems(state()).length === 0 && staleStamps().length === 0, 'convergence after the faults', 20_000);
    } catch (err) {
      throw new Error(`${seed}: ${String(err)}; left: ${problems(state()).map(describeProblem).join('; ')}; stale stamps: ${staleStamps().map((d) => d.metadata.name).join(', ')}`);
    }
    expect(overlaps, seed).to.equal(0);
    // The faults took effect: requests were answered with the errors they armed. (Whether those
    // landed on a reconcile's write or on an informer's request is down to timing.)
    const faulted = h.server.requestLog.filter((r) => r.status === 500 || r.status === 429 || r.status === 409).length;
    expect(faulted, `${seed}: requests answered with an injected error`).to.be.greaterThan(0);
  });
});
