import type { ControllerStores, Delta, KubeObject, ObjectKey } from 'rxkube';
import type { Deployment } from 'rxkube/kinds';
import { BY_TARGET, PODAUTOSCALERS_STORE, SCALED_BY, byTarget, type PodAutoscaler } from './types.js';

/**
 * The PodAutoscalers a Deployment change concerns: those that target it
 * (through the `targetDeployment` index), and the one named by its
 * `scaled-by` stamp, before and after the change. So a replica count
 * changed behind the controller's back, a Deployment created late or
 * deleted, and a stamp left behind all bring the right autoscaler back.
 */
export function deploymentToAutoscalers(delta: Delta<Deployment>, stores: ControllerStores): ObjectKey[] {
  const autoscalers = stores[PODAUTOSCALERS_STORE];
  const keys = new Set<ObjectKey>();
  for (const deployment of versions(delta)) {
    const namespace = deployment.metadata.namespace ?? '';
    for (const key of autoscalers?.indexKeys(BY_TARGET, `${namespace}/${deployment.metadata.name ?? ''}`) ?? []) keys.add(key);
    const scaler = deployment.metadata.annotations?.[SCALED_BY];
    if (typeof scaler === 'string' && scaler !== '') keys.add(`${namespace}/${scaler}`);
  }
  return [...keys];
}

/**
 * The other PodAutoscalers that target the same Deployment as the one that
 * changed (before or after the change): when the one driving a Deployment
 * goes, retargets or is created older, the others must look again at who
 * drives it.
 */
export function autoscalerToRivals(delta: Delta<PodAutoscaler>, stores: ControllerStores): ObjectKey[] {
  const autoscalers = stores[PODAUTOSCALERS_STORE];
  const keys = new Set<ObjectKey>();
  for (const pa of versions(delta)) {
    for (const target of byTarget(pa)) {
      for (const key of autoscalers?.indexKeys(BY_TARGET, target) ?? []) if (key !== delta.key) keys.add(key);
    }
  }
  return [...keys];
}

function versions<T extends KubeObject>(delta: Delta<T>): T[] {
  return delta.old !== undefined ? [delta.object, delta.old] : [delta.object];
}
