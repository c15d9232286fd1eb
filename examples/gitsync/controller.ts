import type { KubeConfig } from '@kubernetes/client-node';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controller, type Controller, type ControllerOptions, type Delta, type ObjectKey } from 'rxkube';
import { gitSyncReconciler } from './reconcile.js';
import { applications, INVENTORY_LABEL, trackedKinds, type Application } from './types.js';

/** Everything of `controller()`'s options but what makes it gitsync; `name` (and so the field manager) defaults to `gitsync`. */
export interface GitSyncOptions extends Partial<Omit<ControllerOptions<Application>, 'kubeConfig' | 'for' | 'owns' | 'watches' | 'reconcile'>> {
  /** Watch one namespace only (default: all of them). */
  namespace?: string;
  /** Where repositories named by URL are cloned (default: `gitsync` in the OS's temp folder). */
  cacheDir?: string;
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
  const { namespace, cacheDir, ...rest } = options;
  return {
    name: 'gitsync',
    ...rest,
    kubeConfig,
    for: applications(namespace),
    watches: trackedKinds(namespace).map((resource) => ({ resource, map: inventoryOwner })),
    reconcile: gitSyncReconciler({ cacheDir: cacheDir ?? join(tmpdir(), 'gitsync') }),
  };
}

/** The gitsync controller: subscribe to run it. */
export function gitSyncController(kubeConfig: KubeConfig, options: GitSyncOptions = {}): Controller<Application> {
  return controller(gitSyncOptions(kubeConfig, options));
}
