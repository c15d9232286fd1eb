import type { KubeConfig } from '@kubernetes/client-node';
import type { ControllerOptions } from 'rxkube';
import { reconcileMirror } from './reconcile.js';
import { configMaps, type ConfigMap } from './types.js';

export interface MirrorOptions extends Partial<Omit<ControllerOptions<ConfigMap>, 'kubeConfig' | 'for' | 'owns' | 'watches'>> {
  namespace?: string;
}

/**
 * The soak's own controller: mirrors every ConfigMap labelled `mirror=src`
 * into a twin labelled `mirror=dst`. It watches every ConfigMap (no label
 * selector), so that, given the same `InformerFactory`, it shares one watch
 * and one store with configmap-rollout; it owns the twins, which are
 * ConfigMaps too: the same informer again, mapped to their source's key.
 */
export function mirrorOptions(kubeConfig: KubeConfig, options: MirrorOptions = {}): ControllerOptions<ConfigMap> {
  const { namespace, ...rest } = options;
  const resource = configMaps(namespace);
  return { name: 'mirror', reconcile: reconcileMirror, ...rest, kubeConfig, for: resource, owns: [resource] };
}
