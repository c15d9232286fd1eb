import type { KubeConfig } from '@kubernetes/client-node';
import { findCondition, kubeClient } from 'rxkube';
import { claimant, specProblem } from '../podautoscaler/reconcile.js';
import { deployments as allDeployments, type Deployment } from 'rxkube/kinds';
import { FINALIZER, PodAutoscaler, SCALED_BY } from '../podautoscaler/types.js';

/** What the API server holds in the demo's namespace. */
export interface ClusterState {
  autoscalers: PodAutoscaler[];
  deployments: Deployment[];
}

/** Something not converged yet: which object, and how. */
export interface Problem {
  /** `PodAutoscaler web`, `Deployment api`. */
  object: string;
  message: string;
}

export const describeProblem = (p: Problem): string => `${p.object} ${p.message}`;

/** Reads the demo namespace straight from the API server (not from any cache). */
export function stateReader(kubeConfig: KubeConfig, namespace: string): (signal?: AbortSignal) => Promise<ClusterState> {
  const client = kubeClient(kubeConfig, { fieldManager: 'demo-reader' });
  return async (signal) => {
    const [autoscalers, deployments] = await Promise.all([
      client.list({ ...PodAutoscaler.resource, namespace }, { signal }),
      client.list({ ...allDeployments, namespace }, { signal }),
    ]);
    return { autoscalers, deployments };
  };
}

/**
 * Everything in `state` that is not yet what the controller should make of
 * it, one sentence each; converged when there is none. The rules are the
 * controller's contract, checked from the outside:
 *
 * - an autoscaler being deleted should be gone (its finalizer removed);
 * - every other one carries the finalizer and has acted on its generation;
 * - the one that drives a Deployment (see `claimant`) is `Ready/Scaled`,
 *   and the Deployment has its replicas and its stamp; one whose Deployment
 *   is missing says `DeploymentNotFound`; one that lost the claim says
 *   `DeploymentClaimed`; an invalid one says `InvalidSpec`;
 * - no Deployment carries a stamp but that of the autoscaler driving it.
 */
export function problems(state: ClusterState): Problem[] {
  const out: Problem[] = [];
  const deployments = new Map(state.deployments.map((d) => [d.metadata.name as string, d]));
  const drivers = new Map<string, string>();
  for (const pa of state.autoscalers) {
    const name = `PodAutoscaler ${pa.metadata.name ?? ''}`;
    const problem = (message: string) => out.push({ object: name, message });
    if (pa.metadata.deletionTimestamp) {
      problem(`is being deleted but still there`);
      continue;
    }
    if (!pa.metadata.finalizers?.includes(FINALIZER)) problem(`has no finalizer`);
    if (pa.status?.observedGeneration !== pa.metadata.generation) {
      problem(`has observedGeneration ${String(pa.status?.observedGeneration)}, generation ${String(pa.metadata.generation)}`);
    }
    const ready = findCondition(pa.status?.conditions, 'Ready');
    const expect = (reason: string) => {
      if (ready?.reason !== reason) problem(`is ${ready?.reason ?? 'not reported'}, expected ${reason}`);
    };
    if (specProblem(pa) !== undefined) {
      expect('InvalidSpec');
      continue;
    }
    const target = pa.spec.targetDeployment;
    if (claimant(pa, state.autoscalers) !== pa.metadata.name) {
      expect('DeploymentClaimed');
      continue;
    }
    drivers.set(target, pa.metadata.name as string);
    const deployment = deployments.get(target);
    if (deployment === undefined) {
      expect('DeploymentNotFound');
      continue;
    }
    expect('Scaled');
    const replicas = deployment.spec?.replicas ?? 1;
    if (replicas !== pa.spec.replicas) problem(`wants ${pa.spec.replicas} replicas, Deployment ${target} has ${replicas}`);
    if (pa.status?.currentReplicas !== replicas) problem(`reports ${String(pa.status?.currentReplicas)} replicas, the Deployment has ${replicas}`);
  }
  for (const deployment of state.deployments) {
    const stamp = deployment.metadata.annotations?.[SCALED_BY];
    const driver = drivers.get(deployment.metadata.name as string);
    if (stamp !== driver) {
      out.push({ object: `Deployment ${deployment.metadata.name ?? ''}`, message: `is stamped by ${stamp ?? 'nobody'}, driven by ${driver ?? 'nobody'}` });
    }
  }
  return out;
}
