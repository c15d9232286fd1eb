import type { KubeObject, WatchedResource } from 'rxkube';

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

interface ConfigMapKeyRef {
  name?: string;
  optional?: boolean;
}

export interface Container {
  name?: string;
  envFrom?: { configMapRef?: ConfigMapKeyRef }[];
  env?: { name?: string; valueFrom?: { configMapKeyRef?: ConfigMapKeyRef } }[];
}

export interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  volumes?: { name?: string; configMap?: ConfigMapKeyRef; projected?: { sources?: { configMap?: ConfigMapKeyRef }[] } }[];
}

/** The part of an apps/v1 Deployment this controller reads and writes. */
export interface Deployment extends KubeObject {
  spec?: {
    template?: { metadata?: { annotations?: Record<string, string>; labels?: Record<string, string> }; spec?: PodSpec };
    [field: string]: unknown;
  };
}

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

export function deployments(namespace?: string, indexers?: WatchedResource['indexers']): WatchedResource {
  return {
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    kind: 'Deployment',
    ...(indexers ? { indexers } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
  };
}

export function configMaps(namespace?: string): WatchedResource {
  return { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', ...(namespace !== undefined ? { namespace } : {}) };
}
