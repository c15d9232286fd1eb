import type { ControllerStores, Delta, ObjectKey } from 'rxkube';
import { BY_CONFIGMAP, DEPLOYMENTS_STORE } from './types.js';

/**
 * The Deployments a ConfigMap change concerns: those in its namespace whose
 * pods use it, through the `configMap` index of the Deployment store.
 */
export function configMapToDeployments(delta: Delta, stores: ControllerStores): ObjectKey[] {
  const namespace = delta.object.metadata.namespace ?? '';
  return stores[DEPLOYMENTS_STORE]?.indexKeys(BY_CONFIGMAP, `${namespace}/${delta.object.metadata.name ?? ''}`) ?? [];
}
