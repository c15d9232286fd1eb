import type { KubeConfig } from '@kubernetes/client-node';
import { controller, manifests, runController, type ControllerOptions } from 'rxkube';
import type { Api } from '../api.js';
import { DIRECTORY, reconcileWidget } from './reconcile.js';
import { convergeWidget } from './sample.js';
import { deployments, GROUP, services, Widget, widgets } from './resource.js';

/** The Widget controller's wiring: Widgets, and the Deployments and Services they own, in one namespace (or all). */
export function widgetOptions(kubeConfig: KubeConfig, namespace?: string): ControllerOptions<Widget> {
  return {
    name: 'widget',
    kubeConfig,
    for: { ...widgets, namespace },
    owns: [
      { ...deployments, namespace },
      { ...services, namespace },
    ],
    // What the reconcile writes besides watching; `rxkube manifests` turns this into the Role, and src/rbac.test.ts checks it.
    permissions: [
      { group: GROUP, resource: 'widgets', verbs: ['patch'] },
      { group: GROUP, resource: 'widgets/status', verbs: ['patch'] },
      { group: 'apps', resource: 'deployments', verbs: ['patch'] },
      { resource: 'services', verbs: ['patch'] },
      { resource: 'configmaps', verbs: ['create'] },
      { resource: 'configmaps', verbs: ['get', 'update'], resourceNames: [DIRECTORY] },
    ],
    reconcile: reconcileWidget,
  };
}

/** What `rxkube manifests` and `rxkube run` read: the controller in the namespace it is deployed to, and its CRD. */
export function definition(kubeConfig: KubeConfig, where: { namespace: string }) {
  return { ...widgetOptions(kubeConfig, where.namespace), crds: [Widget] };
}

/** The Widget API as src/main.ts and src/rbac.test.ts use it (listed in src/apis.ts). */
export const widgetApi: Api = {
  kind: 'Widget',
  crd: Widget.crd,
  manifests: (options) => manifests(definition, options),
  controller: (kubeConfig, namespace, logger) => controller({ ...widgetOptions(kubeConfig, namespace), logger }),
  run: (kubeConfig) => runController({ ...widgetOptions(kubeConfig), health: false }),
  converge: convergeWidget,
};
