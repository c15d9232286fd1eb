/**
 * A `TypedResource` for each built-in kind the API server serves (those of
 * kube 1.32 that the embedded API server serves too): `for: deployments`
 * gives a controller whose reconcile reads `Deployment`s, with no type of
 * the user's own. Each is frozen: spread one to add a namespace or
 * selectors (`{ ...pods, namespace: 'web', labelSelector: 'app=web' }`),
 * which keeps its type.
 */
import type { TypedResource } from '../controller/controller.js';
import type { KubeObject } from '../types.js';
import type {
  ClusterRole,
  ClusterRoleBinding,
  ConfigMap,
  ControllerRevision,
  CronJob,
  CustomResourceDefinition,
  DaemonSet,
  Deployment,
  EndpointSlice,
  Endpoints,
  KubeEvent,
  Ingress,
  IngressClass,
  Job,
  Lease,
  LimitRange,
  MutatingWebhookConfiguration,
  Namespace,
  NetworkPolicy,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  ReplicaSet,
  ResourceQuota,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
  StorageClass,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
  ValidatingWebhookConfiguration,
} from './objectTypes.js';

function typed<T extends KubeObject>(group: string, resource: string, kind: string): TypedResource<T> {
  const version = 'v1';
  return Object.freeze({ ...(group === '' ? {} : { group }), version, apiVersion: group === '' ? version : `${group}/${version}`, resource, kind });
}

/** Namespaces (v1, cluster-scoped): `namespaces`, objects typed as `Namespace`. */
export const namespaces = typed<Namespace>('', 'namespaces', 'Namespace');
/** Pods (v1): `pods`, objects typed as `Pod`. */
export const pods = typed<Pod>('', 'pods', 'Pod');
/** ConfigMaps (v1): `configmaps`, objects typed as `ConfigMap`. */
export const configMaps = typed<ConfigMap>('', 'configmaps', 'ConfigMap');
/** Secrets (v1): `secrets`, objects typed as `Secret`. */
export const secrets = typed<Secret>('', 'secrets', 'Secret');
/** Services (v1): `services`, objects typed as `Service`. */
export const services = typed<Service>('', 'services', 'Service');
/** Endpoints (v1): `endpoints`, objects typed as `Endpoints`. */
export const endpoints = typed<Endpoints>('', 'endpoints', 'Endpoints');
/** ServiceAccounts (v1): `serviceaccounts`, objects typed as `ServiceAccount`. */
export const serviceAccounts = typed<ServiceAccount>('', 'serviceaccounts', 'ServiceAccount');
/** PersistentVolumeClaims (v1): `persistentvolumeclaims`, objects typed as `PersistentVolumeClaim`. */
export const persistentVolumeClaims = typed<PersistentVolumeClaim>('', 'persistentvolumeclaims', 'PersistentVolumeClaim');
/** PersistentVolumes (v1, cluster-scoped): `persistentvolumes`, objects typed as `PersistentVolume`. */
export const persistentVolumes = typed<PersistentVolume>('', 'persistentvolumes', 'PersistentVolume');
/** Nodes (v1, cluster-scoped): `nodes`, objects typed as `Node`. */
export const nodes = typed<Node>('', 'nodes', 'Node');
/** LimitRanges (v1): `limitranges`, objects typed as `LimitRange`. */
export const limitRanges = typed<LimitRange>('', 'limitranges', 'LimitRange');
/** ResourceQuotas (v1): `resourcequotas`, objects typed as `ResourceQuota`. */
export const resourceQuotas = typed<ResourceQuota>('', 'resourcequotas', 'ResourceQuota');
/** Deployments (apps/v1): `deployments.apps`, objects typed as `Deployment`. */
export const deployments = typed<Deployment>('apps', 'deployments', 'Deployment');
/** StatefulSets (apps/v1): `statefulsets.apps`, objects typed as `StatefulSet`. */
export const statefulSets = typed<StatefulSet>('apps', 'statefulsets', 'StatefulSet');
/** DaemonSets (apps/v1): `daemonsets.apps`, objects typed as `DaemonSet`. */
export const daemonSets = typed<DaemonSet>('apps', 'daemonsets', 'DaemonSet');
/** ReplicaSets (apps/v1): `replicasets.apps`, objects typed as `ReplicaSet`. */
export const replicaSets = typed<ReplicaSet>('apps', 'replicasets', 'ReplicaSet');
/** ControllerRevisions (apps/v1): `controllerrevisions.apps`, objects typed as `ControllerRevision`. */
export const controllerRevisions = typed<ControllerRevision>('apps', 'controllerrevisions', 'ControllerRevision');
/** Jobs (batch/v1): `jobs.batch`, objects typed as `Job`. */
export const jobs = typed<Job>('batch', 'jobs', 'Job');
/** CronJobs (batch/v1): `cronjobs.batch`, objects typed as `CronJob`. */
export const cronJobs = typed<CronJob>('batch', 'cronjobs', 'CronJob');
/** Events (events.k8s.io/v1): `events.events.k8s.io`, objects typed as `KubeEvent`. */
export const events = typed<KubeEvent>('events.k8s.io', 'events', 'Event');
/** Ingresses (networking.k8s.io/v1): `ingresses.networking.k8s.io`, objects typed as `Ingress`. */
export const ingresses = typed<Ingress>('networking.k8s.io', 'ingresses', 'Ingress');
/** NetworkPolicies (networking.k8s.io/v1): `networkpolicies.networking.k8s.io`, objects typed as `NetworkPolicy`. */
export const networkPolicies = typed<NetworkPolicy>('networking.k8s.io', 'networkpolicies', 'NetworkPolicy');
/** IngressClasses (networking.k8s.io/v1, cluster-scoped): `ingressclasses.networking.k8s.io`, objects typed as `IngressClass`. */
export const ingressClasses = typed<IngressClass>('networking.k8s.io', 'ingressclasses', 'IngressClass');
/** PodDisruptionBudgets (policy/v1): `poddisruptionbudgets.policy`, objects typed as `PodDisruptionBudget`. */
export const podDisruptionBudgets = typed<PodDisruptionBudget>('policy', 'poddisruptionbudgets', 'PodDisruptionBudget');
/** ClusterRoleBindings (rbac.authorization.k8s.io/v1, cluster-scoped): `clusterrolebindings.rbac.authorization.k8s.io`, objects typed as `ClusterRoleBinding`. */
export const clusterRoleBindings = typed<ClusterRoleBinding>('rbac.authorization.k8s.io', 'clusterrolebindings', 'ClusterRoleBinding');
/** ClusterRoles (rbac.authorization.k8s.io/v1, cluster-scoped): `clusterroles.rbac.authorization.k8s.io`, objects typed as `ClusterRole`. */
export const clusterRoles = typed<ClusterRole>('rbac.authorization.k8s.io', 'clusterroles', 'ClusterRole');
/** RoleBindings (rbac.authorization.k8s.io/v1): `rolebindings.rbac.authorization.k8s.io`, objects typed as `RoleBinding`. */
export const roleBindings = typed<RoleBinding>('rbac.authorization.k8s.io', 'rolebindings', 'RoleBinding');
/** Roles (rbac.authorization.k8s.io/v1): `roles.rbac.authorization.k8s.io`, objects typed as `Role`. */
export const roles = typed<Role>('rbac.authorization.k8s.io', 'roles', 'Role');
/** Leases (coordination.k8s.io/v1): `leases.coordination.k8s.io`, objects typed as `Lease`. */
export const leases = typed<Lease>('coordination.k8s.io', 'leases', 'Lease');
/** MutatingWebhookConfigurations (admissionregistration.k8s.io/v1, cluster-scoped): `mutatingwebhookconfigurations.admissionregistration.k8s.io`, objects typed as `MutatingWebhookConfiguration`. */
export const mutatingWebhookConfigurations = typed<MutatingWebhookConfiguration>('admissionregistration.k8s.io', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration');
/** ValidatingWebhookConfigurations (admissionregistration.k8s.io/v1, cluster-scoped): `validatingwebhookconfigurations.admissionregistration.k8s.io`, objects typed as `ValidatingWebhookConfiguration`. */
export const validatingWebhookConfigurations = typed<ValidatingWebhookConfiguration>('admissionregistration.k8s.io', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration');
/** ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1, cluster-scoped): `validatingadmissionpolicies.admissionregistration.k8s.io`, objects typed as `ValidatingAdmissionPolicy`. */
export const validatingAdmissionPolicies = typed<ValidatingAdmissionPolicy>('admissionregistration.k8s.io', 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy');
/** ValidatingAdmissionPolicyBindings (admissionregistration.k8s.io/v1, cluster-scoped): `validatingadmissionpolicybindings.admissionregistration.k8s.io`, objects typed as `ValidatingAdmissionPolicyBinding`. */
export const validatingAdmissionPolicyBindings = typed<ValidatingAdmissionPolicyBinding>('admissionregistration.k8s.io', 'validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding');
/** CustomResourceDefinitions (apiextensions.k8s.io/v1, cluster-scoped): `customresourcedefinitions.apiextensions.k8s.io`, objects typed as `CustomResourceDefinition`. */
export const customResourceDefinitions = typed<CustomResourceDefinition>('apiextensions.k8s.io', 'customresourcedefinitions', 'CustomResourceDefinition');
/** EndpointSlices (discovery.k8s.io/v1): `endpointslices.discovery.k8s.io`, objects typed as `EndpointSlice`. */
export const endpointSlices = typed<EndpointSlice>('discovery.k8s.io', 'endpointslices', 'EndpointSlice');
/** StorageClasses (storage.k8s.io/v1, cluster-scoped): `storageclasses.storage.k8s.io`, objects typed as `StorageClass`. */
export const storageClasses = typed<StorageClass>('storage.k8s.io', 'storageclasses', 'StorageClass');
