import type { KubeObject } from 'rxkube';
import type { ApiServer } from 'rxkube/testing';
import type { Deployment as RolloutDeployment } from '../../examples/configmap-rollout/types.js';
import type { PodAutoscaler } from '../../examples/podautoscaler/types.js';
import type { ConfigMap } from '../mirror/types.js';
import { resources } from '../workload.js';

/** What the API server holds in one namespace, by name: read in-process, never through a cache. */
export interface ClusterView {
  namespace: string;
  configMaps: Map<string, ConfigMap>;
  deployments: Map<string, RolloutDeployment>;
  autoscalers: Map<string, PodAutoscaler>;
}

const byName = <T extends KubeObject>(objects: KubeObject[]): Map<string, T> => new Map(objects.map((o) => [o.metadata.name as string, o as T]));

export function clusterView(server: ApiServer, namespace: string, withApps: boolean): ClusterView {
  return {
    namespace,
    configMaps: byName(server.snapshot(resources.configmaps(namespace))),
    deployments: withApps ? byName(server.snapshot(resources.deployments(namespace))) : new Map(),
    autoscalers: withApps ? byName(server.snapshot(resources.podautoscalers(namespace))) : new Map(),
  };
}
