import type { KubeConfig } from '@kubernetes/client-node';
import { controller, type Controller, type ControllerOptions } from 'rxkube';
import { reconcilePodAutoscaler } from './reconcile.js';
import { autoscalerToRivals, deploymentToAutoscalers } from './triggers.js';
import { deployments, GROUP, PodAutoscaler, podAutoscalers } from './types.js';
import { podAutoscalerWebhooks } from './webhooks.js';

/** Everything of `controller()`'s options but what makes it a podautoscaler; `name` defaults to `podautoscaler`. */
export interface PodAutoscalerOptions extends Partial<Omit<ControllerOptions<PodAutoscaler>, 'kubeConfig' | 'for' | 'owns' | 'watches' | 'reconcile'>> {
  /** Watch one namespace only (default: all of them). */
  namespace?: string;
}

/**
 * The podautoscaler's controller options: PodAutoscalers as the primary
 * resource, Deployments watched and mapped to the autoscalers that target
 * or stamped them, and the autoscalers themselves mapped to their rivals
 * for the same Deployment. It owns nothing: it never creates an object.
 * For `controller()` or `runController()`.
 */
export function podAutoscalerOptions(kubeConfig: KubeConfig, options: PodAutoscalerOptions = {}): ControllerOptions<PodAutoscaler> {
  const { namespace, ...rest } = options;
  const autoscalers = podAutoscalers(namespace);
  return {
    name: 'podautoscaler',
    ...rest,
    kubeConfig,
    for: autoscalers,
    watches: [
      { resource: deployments(namespace), map: deploymentToAutoscalers },
      { resource: autoscalers, map: autoscalerToRivals },
    ],
    reconcile: reconcilePodAutoscaler,
  };
}

/** The podautoscaler controller: subscribe to run it. */
export function podAutoscalerController(kubeConfig: KubeConfig, options: PodAutoscalerOptions = {}): Controller<PodAutoscaler> {
  return controller(podAutoscalerOptions(kubeConfig, options));
}

/**
 * What `rxkube manifests` and `rxkube run` read: the podautoscaler in the
 * namespace it is deployed to, with what its reconcile writes (the
 * finalizer and status of PodAutoscalers, the replicas and stamp of
 * Deployments), its webhooks and its CRD (v1 and v2, converted through
 * its conversion webhook: `rxkube manifests` sets that up).
 *
 *   npx rxkube manifests examples/podautoscaler/controller.ts --namespace autoscalers | kubectl apply -f -
 */
export function definition(kubeConfig: KubeConfig, where: { namespace: string }) {
  return {
    ...podAutoscalerOptions(kubeConfig, { namespace: where.namespace }),
    permissions: podAutoscalerPermissions,
    webhooks: { tls: { certDir: '/tmp/k8s-webhook-server/serving-certs' }, ...podAutoscalerWebhooks() },
    crds: [PodAutoscaler],
  };
}

/** What the reconcile does besides watching: reads and patches PodAutoscalers (the finalizer), writes their status, patches Deployments. */
export const podAutoscalerPermissions: NonNullable<ControllerOptions<PodAutoscaler>['permissions']> = [
  { group: GROUP, resource: 'podautoscalers', verbs: ['get', 'patch'] },
  { group: GROUP, resource: 'podautoscalers/status', verbs: ['update'] },
  { group: 'apps', resource: 'deployments', verbs: ['patch'] },
];
