import type { KubeConfig } from '@kubernetes/client-node';
import { controller, generationChanged, type Controller, type ControllerOptions } from 'rxkube';
import { reconcileRollout } from './reconcile.js';
import { byConfigMap } from './references.js';
import { configMapToDeployments } from './triggers.js';
import { BY_CONFIGMAP, configMaps, deployments, type Deployment } from './types.js';

/** Everything of `controller()`'s options but what makes it configmap-rollout; `name` defaults to `configmap-rollout`. */
export interface ConfigMapRolloutOptions extends Partial<Omit<ControllerOptions<Deployment>, 'kubeConfig' | 'for' | 'owns' | 'watches' | 'reconcile'>> {
  /** Watch one namespace only (default: all of them). */
  namespace?: string;
}

/**
 * The configmap-rollout controller's options: Deployments as the primary
 * resource (indexed by the ConfigMaps their pods use; only changes of
 * their generation pass, so status updates cost nothing), and ConfigMaps
 * watched and mapped to the Deployments that use them.
 */
export function configMapRolloutOptions(kubeConfig: KubeConfig, options: ConfigMapRolloutOptions = {}): ControllerOptions<Deployment> {
  const { namespace, ...rest } = options;
  return {
    name: 'configmap-rollout',
    predicates: generationChanged,
    ...rest,
    kubeConfig,
    for: deployments(namespace, { [BY_CONFIGMAP]: byConfigMap }),
    watches: [{ resource: configMaps(namespace), map: configMapToDeployments }],
    reconcile: reconcileRollout,
  };
}

export function configMapRolloutController(kubeConfig: KubeConfig, options: ConfigMapRolloutOptions = {}): Controller<Deployment> {
  return controller(configMapRolloutOptions(kubeConfig, options));
}

/**
 * What `rxkube manifests` and `rxkube run` read: configmap-rollout in the
 * namespace it is deployed to. Its one write is the merge patch of a
 * Deployment's pod template annotation; ConfigMaps it only watches.
 */
export function definition(kubeConfig: KubeConfig, where: { namespace: string }): ControllerOptions<Deployment> {
  return {
    ...configMapRolloutOptions(kubeConfig, { namespace: where.namespace }),
    permissions: [{ group: 'apps', resource: 'deployments', verbs: ['patch'] }],
  };
}
