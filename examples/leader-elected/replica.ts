import type { KubeConfig } from '@kubernetes/client-node';
import { hostname } from 'node:os';
import { controller, type Controller, type ControllerOptions, type KubeObject, type ObjectKey } from 'rxkube';
import { podAutoscalerOptions, podAutoscalerPermissions, type PodAutoscalerOptions } from '../podautoscaler/controller.js';
import { podAutoscalerCrd } from '../podautoscaler/crd.js';
import { reconcilePodAutoscaler } from '../podautoscaler/reconcile.js';
import type { PodAutoscaler } from '../podautoscaler/types.js';

/** What leader election reads and writes the Lease through (a test's cut-off client, say). */
type LeaseClient = NonNullable<NonNullable<ControllerOptions<PodAutoscaler>['leaderElection']>['client']>;

/** The Lease the replicas compete for, unless told otherwise. */
export const DEFAULT_LEASE = 'default/podautoscaler-leader';

export interface ReplicaOptions extends PodAutoscalerOptions {
  /** This replica's name in the Lease; unique per replica (a pod name, say). */
  identity: string;
  /** `namespace/name` of the Lease (default `default/podautoscaler-leader`). */
  lease?: string;
  /** The Lease's timings (ms); client-go's defaults otherwise: 15 s, 10 s, 2 s. */
  leaseDuration?: number;
  renewDeadline?: number;
  retryPeriod?: number;
  /** Give the lease up at shutdown so another replica takes over at once (default true). */
  releaseOnCancel?: boolean;
  /** The calls on the Lease (default: HTTP on the kubeConfig); tests cut a replica off through it. */
  leaseClient?: LeaseClient;
  /** Told when each reconcile of this replica starts and ends: who reconciled what, when. */
  onReconcile?: (event: { identity: string; key: ObjectKey; phase: 'start' | 'end' }) => void;
}

/**
 * One replica of the podautoscaler for a highly available deployment: the
 * same controller, run under leader election. Every replica keeps its
 * caches warm; only the one holding the Lease reconciles, and it stops at
 * once when it cannot renew in time, before another can take the Lease.
 * Each replica has informers of its own, as separate processes would.
 */
export function podAutoscalerReplica(kubeConfig: KubeConfig, options: ReplicaOptions): Controller<PodAutoscaler> {
  return controller(replicaOptions(kubeConfig, options));
}

export function replicaOptions(kubeConfig: KubeConfig, options: ReplicaOptions): ControllerOptions<PodAutoscaler> {
  const { identity, lease, leaseDuration, renewDeadline, retryPeriod, releaseOnCancel, leaseClient, onReconcile, ...rest } = options;
  const base = podAutoscalerOptions(kubeConfig, rest);
  return {
    ...base,
    leaderElection: {
      lease: lease ?? DEFAULT_LEASE,
      identity,
      ...(leaseDuration !== undefined ? { leaseDuration } : {}),
      ...(renewDeadline !== undefined ? { renewDeadline } : {}),
      ...(retryPeriod !== undefined ? { retryPeriod } : {}),
      ...(releaseOnCancel !== undefined ? { releaseOnCancel } : {}),
      ...(leaseClient !== undefined ? { client: leaseClient } : {}),
    },
    reconcile: onReconcile
      ? async (key, ctx) => {
          onReconcile({ identity, key, phase: 'start' });
          try {
            await reconcilePodAutoscaler(key, ctx);
          } finally {
            onReconcile({ identity, key, phase: 'end' });
          }
        }
      : reconcilePodAutoscaler,
  };
}

/**
 * What `rxkube manifests` and `rxkube run` read: the podautoscaler as
 * replicas under leader election (`--replicas 2`), on the Lease
 * `podautoscaler-leader` of the namespace it is deployed to, each named
 * after its pod.
 */
export function definition(kubeConfig: KubeConfig, where: { namespace: string }): ControllerOptions<PodAutoscaler> & { crds: KubeObject[] } {
  const identity = process.env.POD_NAME ?? hostname();
  return {
    ...replicaOptions(kubeConfig, { identity, namespace: where.namespace, lease: `${where.namespace}/podautoscaler-leader` }),
    permissions: podAutoscalerPermissions,
    crds: [podAutoscalerCrd()],
  };
}
