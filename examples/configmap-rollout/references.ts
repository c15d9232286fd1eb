import type { KubeObject } from 'rxkube';
import type { Container, Deployment } from './types.js';

/** A ConfigMap a pod template uses; optional when every use of it says `optional: true`. */
export interface ConfigMapUse {
  name: string;
  optional: boolean;
}

/**
 * The ConfigMaps a Deployment's pods use, sorted by name: mounted as a
 * volume (also inside a projected volume), or read into the environment of
 * a container or init container (`envFrom[].configMapRef`,
 * `env[].valueFrom.configMapKeyRef`). An odd template (a field of the wrong
 * type) yields what can be read of it, never a throw: this runs inside an
 * index function.
 */
export function configMapUses(deployment: Deployment): ConfigMapUse[] {
  const uses = new Map<string, boolean>();
  const use = (ref: { name?: unknown; optional?: unknown } | undefined) => {
    if (ref === null || typeof ref !== 'object' || typeof ref.name !== 'string' || ref.name === '') return;
    uses.set(ref.name, (uses.get(ref.name) ?? true) && ref.optional === true);
  };
  const pod = deployment.spec?.template?.spec;
  for (const volume of list(pod?.volumes)) {
    use(volume?.configMap);
    for (const source of list(volume?.projected?.sources)) use(source?.configMap);
  }
  for (const container of [...list<Container>(pod?.containers), ...list<Container>(pod?.initContainers)]) {
    for (const from of list(container?.envFrom)) use(from?.configMapRef);
    for (const variable of list(container?.env)) use(variable?.valueFrom?.configMapKeyRef);
  }
  return [...uses].map(([name, optional]) => ({ name, optional })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function list<T>(value: T[] | undefined): T[] {
  return Array.isArray(value) ? value : [];
}

/** Index function: a Deployment under `namespace/configmap` for each ConfigMap its pods use. */
export function byConfigMap(deployment: KubeObject): readonly string[] {
  const namespace = deployment.metadata.namespace ?? '';
  return configMapUses(deployment as Deployment).map((u) => `${namespace}/${u.name}`);
}
