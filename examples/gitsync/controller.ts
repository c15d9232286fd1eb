import type { KubeConfig } from '@kubernetes/client-node';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controller, type Controller, type ControllerOptions, type Delta, type ObjectKey } from 'rxkube';
import type { Observable } from 'rxjs';
import { pushTrigger } from './pushes.js';
import { gitSyncReconciler } from './reconcile.js';
import { applicationCrd } from './crd.js';
import { applications, GROUP, INVENTORY_LABEL, trackedKinds, type Application } from './types.js';

/** Everything of `controller()`'s options but what makes it gitsync; `name` (and so the field manager) defaults to `gitsync`. */
export interface GitSyncOptions extends Partial<Omit<ControllerOptions<Application>, 'kubeConfig' | 'for' | 'owns' | 'watches' | 'reconcile'>> {
  /** Watch one namespace only (default: all of them). */
  namespace?: string;
  /** Where repositories named by URL are cloned (default: `gitsync` in the OS's temp folder). */
  cacheDir?: string;
  /**
   * Repository URLs pushed to (a push endpoint's `pushes`, say): the
   * Applications that follow one sync at once; polling stays the fallback.
   */
  pushes?: Observable<string>;
}

/** An object an Application applied, as the key of that Application: its namespace and the inventory label's value. */
export function inventoryOwner(delta: Delta): ObjectKey[] {
  const name = delta.object.metadata.labels?.[INVENTORY_LABEL] ?? delta.old?.metadata.labels?.[INVENTORY_LABEL];
  return typeof name === 'string' && name !== '' ? [`${delta.object.metadata.namespace ?? ''}/${name}`] : [];
}

/**
 * The gitsync controller's options: Applications as the primary resource,
 * and the objects they applied of the tracked kinds (ConfigMaps, Services,
 * Deployments, selected by the inventory label) mapped back to their
 * Application, so that a change by hand is corrected at once and a
 * Deployment's rollout shows in the health. For `controller()` or `runController()`.
 */
export function gitSyncOptions(kubeConfig: KubeConfig, options: GitSyncOptions = {}): ControllerOptions<Application> {
  const { namespace, cacheDir, pushes, ...rest } = options;
  return {
    name: 'gitsync',
    ...rest,
    kubeConfig,
    for: applications(namespace),
    watches: trackedKinds(namespace).map((resource) => ({ resource, map: inventoryOwner })),
    ...(pushes !== undefined ? { triggers: [...(rest.triggers ?? []), pushTrigger(pushes)] } : {}),
    reconcile: gitSyncReconciler({ cacheDir: cacheDir ?? join(tmpdir(), 'gitsync') }),
  };
}

/** The gitsync controller: subscribe to run it. */
export function gitSyncController(kubeConfig: KubeConfig, options: GitSyncOptions = {}): Controller<Application> {
  return controller(gitSyncOptions(kubeConfig, options));
}

/**
 * What the reconcile does besides watching: reads its Application and
 * writes its status; gets, applies (create or patch), lists for prune and
 * deletes the objects of the tracked kinds. A manifest of another kind is
 * refused by the server as this ServiceAccount, and reported on that
 * resource alone.
 */
export const gitSyncPermissions: NonNullable<ControllerOptions<Application>['permissions']> = [
  { group: GROUP, resource: 'applications', verbs: ['get'] },
  { group: GROUP, resource: 'applications/status', verbs: ['patch'] },
  ...trackedKinds().map(({ group, resource }) => ({ group, resource, verbs: ['get', 'list', 'create', 'patch', 'delete'] as const })),
];

/**
 * What `rxkube manifests` and `rxkube run` read: gitsync in the namespace
 * it is deployed to, with what its reconcile writes and its CRD. The
 * repositories it clones are kept in the container's temp folder.
 *
 *   npx rxkube manifests examples/gitsync/controller.ts --namespace gitops | kubectl apply -f -
 */
export function definition(kubeConfig: KubeConfig, where: { namespace: string }) {
  return { ...gitSyncOptions(kubeConfig, { namespace: where.namespace }), permissions: gitSyncPermissions, crds: [applicationCrd()] };
}
