import type { KubeConfig } from '@kubernetes/client-node';
import { controller, type Controller, type ControllerOptions } from 'rxkube';
import { reconcilePodAutoscaler } from './reconcile.js';
import { autoscalerToRivals, deploymentToAutoscalers } from './triggers.js';
import { deployments, podAutoscalers, type PodAutoscaler } from './types.js';

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
