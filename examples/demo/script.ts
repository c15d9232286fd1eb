import type { KubeClient } from 'rxkube';
import { autoscalerManifest, autoscalerRef, deploymentManifest, deploymentRef } from '../podautoscaler/manifests.js';

/** One step of the demo's workload: what a person (or another controller) does to the cluster. */
export interface Step {
  title: string;
  run(client: KubeClient, namespace: string, signal: AbortSignal): Promise<void>;
}

const burst = 24;

/**
 * The scripted workload: creates, scales, edits, retargets and deletes
 * PodAutoscalers and Deployments, changes replicas behind the controller's
 * back, sets two autoscalers on one Deployment, and ends with a burst. The
 * demo waits for convergence after each step.
 */
export const steps: readonly Step[] = [
  {
    title: 'create Deployments web (1), api (2), worker (1) and batch (1)',
    async run(client, ns, signal) {
      for (const [name, replicas] of [['web', 1], ['api', 2], ['worker', 1], ['batch', 1]] as const) {
        await client.create(deploymentManifest(ns, name, replicas), { signal });
      }
    },
  },
  {
    title: 'create PodAutoscalers web→3, api→4, worker→2, and queue→2 (no such Deployment yet)',
    async run(client, ns, signal) {
      for (const [name, replicas] of [['web', 3], ['api', 4], ['worker', 2], ['queue', 2]] as const) {
        await client.create(autoscalerManifest(ns, name, name, replicas), { signal });
      }
    },
  },
  {
    title: 'edit: web wants 6, api wants 1',
    async run(client, ns, signal) {
      await client.patchMerge(autoscalerRef(ns, 'web'), { spec: { replicas: 6 } }, { signal });
      await client.patchMerge(autoscalerRef(ns, 'api'), { spec: { replicas: 1 } }, { signal });
    },
  },
  {
    title: 'retarget: worker now drives batch',
    async run(client, ns, signal) {
      await client.patchMerge(autoscalerRef(ns, 'worker'), { spec: { targetDeployment: 'batch' } }, { signal });
    },
  },
  {
    title: 'behind its back: someone scales Deployment web to 9',
    async run(client, ns, signal) {
      await client.patchMerge(deploymentRef(ns, 'web'), { spec: { replicas: 9 } }, { signal });
    },
  },
  {
    title: 'create the missing Deployment queue (1)',
    async run(client, ns, signal) {
      await client.create(deploymentManifest(ns, 'queue', 1), { signal });
    },
  },
  {
    title: 'a second autoscaler, web-canary→5, targets web: the older one keeps it',
    async run(client, ns, signal) {
      await client.create(autoscalerManifest(ns, 'web-canary', 'web', 5), { signal });
    },
  },
  {
    title: 'delete autoscaler web: web-canary takes over',
    async run(client, ns, signal) {
      await client.remove(autoscalerRef(ns, 'web'), { signal });
    },
  },
  {
    title: 'delete autoscaler api: its Deployment is let go',
    async run(client, ns, signal) {
      await client.remove(autoscalerRef(ns, 'api'), { signal });
    },
  },
  {
    title: `burst: ${burst} Deployments and ${burst} PodAutoscalers at once`,
    async run(client, ns, signal) {
      const names = Array.from({ length: burst }, (_, i) => `svc-${String(i + 1).padStart(2, '0')}`);
      await Promise.all(
        names.map(async (name, i) => {
          await client.create(autoscalerManifest(ns, name, name, 1 + (i % 4)), { signal });
          await client.create(deploymentManifest(ns, name, 1), { signal });
        }),
      );
    },
  },
  {
    title: 'delete every third burst autoscaler, scale the others up by one',
    async run(client, ns, signal) {
      await Promise.all(
        Array.from({ length: burst }, (_, i) => {
          const name = `svc-${String(i + 1).padStart(2, '0')}`;
          return i % 3 === 0
            ? client.remove(autoscalerRef(ns, name), { signal })
            : client.patchMerge(autoscalerRef(ns, name), { spec: { replicas: 2 + (i % 4) } }, { signal });
        }),
      );
    },
  },
];
