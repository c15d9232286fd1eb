import type { WatchedResource } from 'rxkube';
import { configMaps as allConfigMaps, deployments as allDeployments, type ConfigMap, type Deployment } from 'rxkube/kinds';

export type { ConfigMap, Deployment };
/** A Deployment's pod spec, as rxkube/kinds types it. */
export type PodSpec = NonNullable<NonNullable<Deployment['spec']>['template']['spec']>;
export type Container = PodSpec['containers'][number];

/**
 * The pod template annotation that holds the hash of every ConfigMap the
 * pods use: a change of it is a change of the template, so the Deployment
 * rolls its pods out again.
 */
export const CONFIG_HASH = 'rollout.rxkube.dev/config-hash';

/** The index on the Deployment store: `namespace/configmap` of each ConfigMap its pods use. */
export const BY_CONFIGMAP = 'configMap';

export const DEPLOYMENTS_STORE = 'deployments.apps';
export const CONFIGMAPS_STORE = 'configmaps';

export function deployments(namespace?: string, indexers?: WatchedResource<Deployment>['indexers']): WatchedResource<Deployment> {
  return { ...allDeployments, ...(indexers ? { indexers } : {}), ...(namespace !== undefined ? { namespace } : {}) };
}

export function configMaps(namespace?: string): WatchedResource<ConfigMap> {
  return { ...allConfigMaps, ...(namespace !== undefined ? { namespace } : {}) };
}
