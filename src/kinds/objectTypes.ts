/**
 * The built-in kinds' object types, as rxkube's caches and `ctx.client` hold
 * them: client-node's generated models (Kubernetes 1.34's OpenAPI, with its
 * doc comments), read as the JSON the API server sends. Two differences
 * from the models themselves, which are classes for client-node's own
 * (de)serializer: a time is the RFC 3339 string of the JSON, not a `Date`
 * (rxkube never converts it), and `metadata` is rxkube's `ObjectMeta`,
 * present on every stored object. `apiVersion` and `kind` are the kind's
 * literals, so a `Deployment` is no `ConfigMap` to the type checker.
 */
import type {
  EventsV1Event,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1ControllerRevision,
  V1CronJob,
  V1CustomResourceDefinition,
  V1DaemonSet,
  V1Deployment,
  V1EndpointSlice,
  V1Endpoints,
  V1Ingress,
  V1IngressClass,
  V1Job,
  V1Lease,
  V1LimitRange,
  V1MutatingWebhookConfiguration,
  V1Namespace,
  V1NetworkPolicy,
  V1Node,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodDisruptionBudget,
  V1ReplicaSet,
  V1ResourceQuota,
  V1Role,
  V1RoleBinding,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1StatefulSet,
  V1StorageClass,
  V1ValidatingAdmissionPolicy,
  V1ValidatingAdmissionPolicyBinding,
  V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import type { ObjectMeta } from '../types.js';

/**
 * A client-node model as JSON carries it: every `Date` a string (RFC 3339),
 * arrays and nested objects alike; `any` (free-form JSON in the model) stays.
 */
export type AsJson<T> = 0 extends 1 & T ? T : T extends Date ? string : T extends readonly (infer U)[] ? AsJson<U>[] : T extends object ? { [P in keyof T]: AsJson<T[P]> } : T;

/**
 * A built-in kind's object: the model `M` as JSON, with rxkube's
 * `ObjectMeta` and the kind's `apiVersion` (`A`) and `kind` (`K`), which
 * list items leave out, as on `KubeObject`.
 */
export type BuiltinObject<M extends { metadata?: unknown }, A extends string, K extends string> = Omit<AsJson<M>, 'apiVersion' | 'kind' | 'metadata'> & {
  /** The group and version; list items leave it out. */
  apiVersion?: A;
  /** The kind; list items leave it out. */
  kind?: K;
  /** Name, namespace, labels and the other fields every object has. */
  metadata: ObjectMeta;
};

/** A Namespace (v1, cluster-scoped), as `namespaces` of `rxkube/kinds` types it. */
export type Namespace = BuiltinObject<V1Namespace, 'v1', 'Namespace'>;
/** A Pod (v1), as `pods` of `rxkube/kinds` types it. */
export type Pod = BuiltinObject<V1Pod, 'v1', 'Pod'>;
/** A ConfigMap (v1), as `configMaps` of `rxkube/kinds` types it. */
export type ConfigMap = BuiltinObject<V1ConfigMap, 'v1', 'ConfigMap'>;
/** A Secret (v1), as `secrets` of `rxkube/kinds` types it. */
export type Secret = BuiltinObject<V1Secret, 'v1', 'Secret'>;
/** A Service (v1), as `services` of `rxkube/kinds` types it. */
export type Service = BuiltinObject<V1Service, 'v1', 'Service'>;
/** An Endpoints (v1), as `endpoints` of `rxkube/kinds` types it. */
export type Endpoints = BuiltinObject<V1Endpoints, 'v1', 'Endpoints'>;
/** A ServiceAccount (v1), as `serviceAccounts` of `rxkube/kinds` types it. */
export type ServiceAccount = BuiltinObject<V1ServiceAccount, 'v1', 'ServiceAccount'>;
/** A PersistentVolumeClaim (v1), as `persistentVolumeClaims` of `rxkube/kinds` types it. */
export type PersistentVolumeClaim = BuiltinObject<V1PersistentVolumeClaim, 'v1', 'PersistentVolumeClaim'>;
/** A PersistentVolume (v1, cluster-scoped), as `persistentVolumes` of `rxkube/kinds` types it. */
export type PersistentVolume = BuiltinObject<V1PersistentVolume, 'v1', 'PersistentVolume'>;
/** A Node (v1, cluster-scoped), as `nodes` of `rxkube/kinds` types it. */
export type Node = BuiltinObject<V1Node, 'v1', 'Node'>;
/** A LimitRange (v1), as `limitRanges` of `rxkube/kinds` types it. */
export type LimitRange = BuiltinObject<V1LimitRange, 'v1', 'LimitRange'>;
/** A ResourceQuota (v1), as `resourceQuotas` of `rxkube/kinds` types it. */
export type ResourceQuota = BuiltinObject<V1ResourceQuota, 'v1', 'ResourceQuota'>;
/** A Deployment (apps/v1), as `deployments` of `rxkube/kinds` types it. */
export type Deployment = BuiltinObject<V1Deployment, 'apps/v1', 'Deployment'>;
/** A StatefulSet (apps/v1), as `statefulSets` of `rxkube/kinds` types it. */
export type StatefulSet = BuiltinObject<V1StatefulSet, 'apps/v1', 'StatefulSet'>;
/** A DaemonSet (apps/v1), as `daemonSets` of `rxkube/kinds` types it. */
export type DaemonSet = BuiltinObject<V1DaemonSet, 'apps/v1', 'DaemonSet'>;
/** A ReplicaSet (apps/v1), as `replicaSets` of `rxkube/kinds` types it. */
export type ReplicaSet = BuiltinObject<V1ReplicaSet, 'apps/v1', 'ReplicaSet'>;
/** A ControllerRevision (apps/v1), as `controllerRevisions` of `rxkube/kinds` types it. */
export type ControllerRevision = BuiltinObject<V1ControllerRevision, 'apps/v1', 'ControllerRevision'>;
/** A Job (batch/v1), as `jobs` of `rxkube/kinds` types it. */
export type Job = BuiltinObject<V1Job, 'batch/v1', 'Job'>;
/** A CronJob (batch/v1), as `cronJobs` of `rxkube/kinds` types it. */
export type CronJob = BuiltinObject<V1CronJob, 'batch/v1', 'CronJob'>;
/** An Event (events.k8s.io/v1), as `events` of `rxkube/kinds` types it; named so as not to shadow the global `Event`. */
export type KubeEvent = BuiltinObject<EventsV1Event, 'events.k8s.io/v1', 'Event'>;
/** An Ingress (networking.k8s.io/v1), as `ingresses` of `rxkube/kinds` types it. */
export type Ingress = BuiltinObject<V1Ingress, 'networking.k8s.io/v1', 'Ingress'>;
/** A NetworkPolicy (networking.k8s.io/v1), as `networkPolicies` of `rxkube/kinds` types it. */
export type NetworkPolicy = BuiltinObject<V1NetworkPolicy, 'networking.k8s.io/v1', 'NetworkPolicy'>;
/** An IngressClass (networking.k8s.io/v1, cluster-scoped), as `ingressClasses` of `rxkube/kinds` types it. */
export type IngressClass = BuiltinObject<V1IngressClass, 'networking.k8s.io/v1', 'IngressClass'>;
/** A PodDisruptionBudget (policy/v1), as `podDisruptionBudgets` of `rxkube/kinds` types it. */
export type PodDisruptionBudget = BuiltinObject<V1PodDisruptionBudget, 'policy/v1', 'PodDisruptionBudget'>;
/** A ClusterRoleBinding (rbac.authorization.k8s.io/v1, cluster-scoped), as `clusterRoleBindings` of `rxkube/kinds` types it. */
export type ClusterRoleBinding = BuiltinObject<V1ClusterRoleBinding, 'rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'>;
/** A ClusterRole (rbac.authorization.k8s.io/v1, cluster-scoped), as `clusterRoles` of `rxkube/kinds` types it. */
export type ClusterRole = BuiltinObject<V1ClusterRole, 'rbac.authorization.k8s.io/v1', 'ClusterRole'>;
/** A RoleBinding (rbac.authorization.k8s.io/v1), as `roleBindings` of `rxkube/kinds` types it. */
export type RoleBinding = BuiltinObject<V1RoleBinding, 'rbac.authorization.k8s.io/v1', 'RoleBinding'>;
/** A Role (rbac.authorization.k8s.io/v1), as `roles` of `rxkube/kinds` types it. */
export type Role = BuiltinObject<V1Role, 'rbac.authorization.k8s.io/v1', 'Role'>;
/** A Lease (coordination.k8s.io/v1), as `leases` of `rxkube/kinds` types it. */
export type Lease = BuiltinObject<V1Lease, 'coordination.k8s.io/v1', 'Lease'>;
/** A MutatingWebhookConfiguration (admissionregistration.k8s.io/v1, cluster-scoped), as `mutatingWebhookConfigurations` of `rxkube/kinds` types it. */
export type MutatingWebhookConfiguration = BuiltinObject<V1MutatingWebhookConfiguration, 'admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'>;
/** A ValidatingWebhookConfiguration (admissionregistration.k8s.io/v1, cluster-scoped), as `validatingWebhookConfigurations` of `rxkube/kinds` types it. */
export type ValidatingWebhookConfiguration = BuiltinObject<V1ValidatingWebhookConfiguration, 'admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'>;
/** A ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, cluster-scoped), as `validatingAdmissionPolicies` of `rxkube/kinds` types it. */
export type ValidatingAdmissionPolicy = BuiltinObject<V1ValidatingAdmissionPolicy, 'admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicy'>;
/** A ValidatingAdmissionPolicyBinding (admissionregistration.k8s.io/v1, cluster-scoped), as `validatingAdmissionPolicyBindings` of `rxkube/kinds` types it. */
export type ValidatingAdmissionPolicyBinding = BuiltinObject<V1ValidatingAdmissionPolicyBinding, 'admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicyBinding'>;
/** A CustomResourceDefinition (apiextensions.k8s.io/v1, cluster-scoped), as `customResourceDefinitions` of `rxkube/kinds` types it. */
export type CustomResourceDefinition = BuiltinObject<V1CustomResourceDefinition, 'apiextensions.k8s.io/v1', 'CustomResourceDefinition'>;
/** An EndpointSlice (discovery.k8s.io/v1), as `endpointSlices` of `rxkube/kinds` types it. */
export type EndpointSlice = BuiltinObject<V1EndpointSlice, 'discovery.k8s.io/v1', 'EndpointSlice'>;
/** A StorageClass (storage.k8s.io/v1, cluster-scoped), as `storageClasses` of `rxkube/kinds` types it. */
export type StorageClass = BuiltinObject<V1StorageClass, 'storage.k8s.io/v1', 'StorageClass'>;
