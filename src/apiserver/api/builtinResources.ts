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

const replicasScale: ResourceType['scale'] = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.status.selector',
};

/** What kube-apiserver serves for a pod that this server, which runs no containers, answers with a Status. */
const podConnectSubresources = [
  { name: 'attach', kind: 'PodAttachOptions', verbs: ['create', 'get'] },
  { name: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'] },
  { name: 'portforward', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
  { name: 'proxy', kind: 'PodProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
];

const core = (resource: string, kind: string, more: Partial<BuiltinSpec> = {}): BuiltinSpec => ({
  group: '',
  version: 'v1',
  resource,
  kind,
  namespaced: true,
  ...more,
});

const inGroup =
  (group: string) =>
  (resource: string, kind: string, more: Partial<BuiltinSpec> = {}): BuiltinSpec => ({ group, version: 'v1', resource, kind, namespaced: true, ...more });

const apps = inGroup('apps');
const batch = inGroup('batch');
const networking = inGroup('networking.k8s.io');
const rbac = inGroup('rbac.authorization.k8s.io');
const admission = inGroup('admissionregistration.k8s.io');

/**
 * The served built-ins, in the order of kube's discovery. Status subresources, scale and short
 * names are kube 1.32's; pods also list `log`, `exec`, `attach`, `portforward` and `proxy`, which
 * answer that this server runs no containers.
 */
export function builtinResources(): ResourceType[] {
  const specs: BuiltinSpec[] = [
    core('namespaces', 'Namespace', {
      namespaced: false,
      shortNames: ['ns'],
      status: true,
      extraSubresources: [{ name: 'finalize', kind: 'Namespace', verbs: ['update'] }],
    }),
    core('pods', 'Pod', {
      shortNames: ['po'],
      categories: ['all'],
      status: true,
      extraSubresources: [{ name: 'log', kind: 'Pod', verbs: ['get'] }, ...podConnectSubresources],
    }),
    core('configmaps', 'ConfigMap', { shortNames: ['cm'] }),
    core('secrets', 'Secret'),
    core('services', 'Service', {
      shortNames: ['svc'],
      categories: ['all'],
      status: true,
      extraSubresources: [{ name: 'proxy', kind: 'ServiceProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] }],
    }),
    core('events', 'Event', { shortNames: ['ev'], storageKey: eventsStorageKey }),
    core('endpoints', 'Endpoints', { shortNames: ['ep'] }),
    core('serviceaccounts', 'ServiceAccount', {
      shortNames: ['sa'],
      extraSubresources: [{ name: 'token', kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] }],
    }),
    core('persistentvolumeclaims', 'PersistentVolumeClaim', { shortNames: ['pvc'], status: true }),
    core('persistentvolumes', 'PersistentVolume', { namespaced: false, shortNames: ['pv'], status: true }),
    core('nodes', 'Node', {
      namespaced: false,
      shortNames: ['no'],
      status: true,
      extraSubresources: [{ name: 'proxy', kind: 'NodeProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] }],
    }),
    core('limitranges', 'LimitRange', { shortNames: ['limits'] }),
    core('resourcequotas', 'ResourceQuota', { shortNames: ['quota'], status: true }),
    apps('deployments', 'Deployment', { shortNames: ['deploy'], categories: ['all'], status: true, scale: replicasScale }),
    apps('statefulsets', 'StatefulSet', { shortNames: ['sts'], categories: ['all'], status: true, scale: replicasScale }),
    apps('daemonsets', 'DaemonSet', { shortNames: ['ds'], categories: ['all'], status: true }),
    apps('replicasets', 'ReplicaSet', { shortNames: ['rs'], categories: ['all'], status: true, scale: replicasScale }),
    apps('controllerrevisions', 'ControllerRevision'),
    batch('jobs', 'Job', { categories: ['all'], status: true }),
    batch('cronjobs', 'CronJob', { shortNames: ['cj'], categories: ['all'], status: true }),
    { group: 'events.k8s.io', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'], storageKey: eventsStorageKey },
    networking('ingresses', 'Ingress', { shortNames: ['ing'], status: true }),
    networking('networkpolicies', 'NetworkPolicy', { shortNames: ['netpol'] }),
    networking('ingressclasses', 'IngressClass', { namespaced: false }),
    { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', namespaced: true, shortNames: ['pdb'], status: true },
    rbac('clusterrolebindings', 'ClusterRoleBinding', { namespaced: false }),
    rbac('clusterroles', 'ClusterRole', { namespaced: false }),
    rbac('rolebindings', 'RoleBinding'),
    rbac('roles', 'Role'),
    { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true },
    admission('mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', { namespaced: false, categories: ['api-extensions'] }),
    admission('validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', { namespaced: false, categories: ['api-extensions'] }),
    admission('validatingadmissionpolicies', 'ValidatingAdmissionPolicy', { namespaced: false, categories: ['api-extensions'], status: true }),
    admission('validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding', { namespaced: false, categories: ['api-extensions'] }),
    {
      group: 'apiextensions.k8s.io',
      version: 'v1',
      resource: 'customresourcedefinitions',
      kind: 'CustomResourceDefinition',
      namespaced: false,
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      status: true,
    },
    { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', kind: 'EndpointSlice', namespaced: true },
    { group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses', kind: 'StorageClass', namespaced: false, shortNames: ['sc'] },
  ];
  return specs.map(builtin);
}
