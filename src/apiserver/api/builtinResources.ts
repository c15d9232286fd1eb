import { allVerbs, type ResourceType } from './resourceType.js';

/** The built-in resources, with the scope, short names and categories that kube-apiserver 1.32 reports. */

export interface BuiltinSpec {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  storageKey?: string;
  scale?: ResourceType['scale'];
  extraSubresources?: ResourceType['extraSubresources'];
}

export function builtin(spec: BuiltinSpec): ResourceType {
  return Object.freeze({
    group: spec.group,
    version: spec.version,
    resource: spec.resource,
    singular: spec.kind.toLowerCase(),
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    namespaced: spec.namespaced,
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    verbs: allVerbs,
    status: spec.status ?? false,
    scale: spec.scale,
    builtin: true,
    storageKey: spec.storageKey ?? `${spec.group}/${spec.resource}`,
    selectableFields: [],
    extraSubresources: spec.extraSubresources,
  });
}

/** The storage key that core/v1 and events.k8s.io/v1 Events share, as they do in kube. */
export const eventsStorageKey = '/events';

export function builtinResources(): ResourceType[] {
  return [
    builtin({
      group: '',
      version: 'v1',
      resource: 'namespaces',
      kind: 'Namespace',
      namespaced: false,
      shortNames: ['ns'],
      status: true,
      extraSubresources: [{ name: 'finalize', kind: 'Namespace', verbs: ['update'] }],
    }),
    builtin({
      group: '',
      version: 'v1',
      resource: 'pods',
      kind: 'Pod',
      namespaced: true,
      shortNames: ['po'],
      categories: ['all'],
      status: true,
    }),
    builtin({ group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] }),
    builtin({ group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true }),
    builtin({
      group: '',
      version: 'v1',
      resource: 'services',
      kind: 'Service',
      namespaced: true,
      shortNames: ['svc'],
      categories: ['all'],
      status: true,
    }),
    builtin({
      group: '',
      version: 'v1',
      resource: 'events',
      kind: 'Event',
      namespaced: true,
      shortNames: ['ev'],
      storageKey: eventsStorageKey,
    }),
    builtin({
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      kind: 'Deployment',
      namespaced: true,
      shortNames: ['deploy'],
      categories: ['all'],
      status: true,
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.selector',
      },
    }),
    builtin({
      group: 'events.k8s.io',
      version: 'v1',
      resource: 'events',
      kind: 'Event',
      namespaced: true,
      shortNames: ['ev'],
      storageKey: eventsStorageKey,
    }),
    builtin({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true }),
    builtin({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      resource: 'customresourcedefinitions',
      kind: 'CustomResourceDefinition',
      namespaced: false,
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      status: true,
    }),
  ];
}
