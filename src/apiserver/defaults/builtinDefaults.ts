import { isPlainObject } from '../../util/json.js';
import { type Plain, unset, objects } from './fields.js';
import type { ResourceType } from '../api/resourceType.js';
import { defaultPod, defaultTemplate } from './podSpec.js';
import { defaultAdmission, defaultCrd, defaultPolicy, defaultPolicyBinding } from './extensionDefaults.js';
import { defaultService } from './serviceDefaults.js';

/**
 * Defaulting of built-in kinds as kube-apiserver 1.32 does it, run on every write after the body
 * is decoded (create, update, every patch, apply) and before validation and storage: the
 * `SetDefaults_*` functions of `pkg/apis/<group>/<version>/defaults.go` with the declarative
 * `+default` markers of k8s.io/api, and what a registry strategy sets on create (a Job's
 * selector and labels). A Service's cluster IP and node ports are the cluster's to allocate
 * (serviceAllocator.ts). The table of every default, with its source, is
 * test/data/defaults/kube-1.32.json. Feature gates are as kube 1.32 has them by default
 * (StatefulSetAutoDeletePVC, JobPodReplacementPolicy on; PodLevelResources, ImageVolume off).
 *
 * Each kind's function writes in place and only where a field is unset; a frozen part (shared,
 * unchanged, with the stored object, which was defaulted when stored) is skipped.
 */

type Defaulter = (obj: Plain, create: boolean) => void;

function spec(obj: Plain): Plain | undefined {
  return isPlainObject(obj.spec) && !Object.isFrozen(obj.spec) ? obj.spec : undefined;
}

function child(obj: Plain, key: string): Plain {
  const value = obj[key];
  if (isPlainObject(value)) return value;
  const made: Plain = {};
  obj[key] = made;
  return made;
}

/** A Deployment's or DaemonSet's strategy: RollingUpdate, with its two limits. */
function rollingUpdate(strategy: Plain, maxUnavailable: number | string, maxSurge: number | string): void {
  if (unset(strategy.type)) strategy.type = 'RollingUpdate';
  if (strategy.type !== 'RollingUpdate') return;
  const rolling = child(strategy, 'rollingUpdate');
  if (unset(rolling.maxUnavailable)) rolling.maxUnavailable = maxUnavailable;
  if (unset(rolling.maxSurge)) rolling.maxSurge = maxSurge;
}

function deployment(obj: Plain): void {
  const s = spec(obj);
  if (s === undefined) return;
  if (unset(s.replicas)) s.replicas = 1;
  rollingUpdate(child(s, 'strategy'), '25%', '25%');
  if (unset(s.revisionHistoryLimit)) s.revisionHistoryLimit = 10;
  if (unset(s.progressDeadlineSeconds)) s.progressDeadlineSeconds = 600;
  defaultTemplate(s.template);
}

function daemonSet(obj: Plain): void {
  const s = spec(obj);
  if (s === undefined) return;
  rollingUpdate(child(s, 'updateStrategy'), 1, 0);
  if (unset(s.revisionHistoryLimit)) s.revisionHistoryLimit = 10;
  defaultTemplate(s.template);
}

/** A claim's spec and, for the templates of a StatefulSet, its status too (kube defaults the struct it always has). */
function claim(obj: Plain): void {
  const s = spec(obj);
  if (s !== undefined && unset(s.volumeMode)) s.volumeMode = 'Filesystem';
  const status = isPlainObject(obj.status) ? obj.status : undefined;
  if (status === undefined) obj.status = { phase: 'Pending' };
  else if (!Object.isFrozen(status) && unset(status.phase)) status.phase = 'Pending';
}

function statefulSet(obj: Plain): void {
  const s = spec(obj);
  if (s === undefined) return;
  if (unset(s.podManagementPolicy)) s.podManagementPolicy = 'OrderedReady';
  const strategy = child(s, 'updateStrategy');
  if (unset(strategy.type)) {
    strategy.type = 'RollingUpdate';
    child(strategy, 'rollingUpdate');
  }
  if (strategy.type === 'RollingUpdate' && isPlainObject(strategy.rollingUpdate) && unset(strategy.rollingUpdate.partition)) {
    strategy.rollingUpdate.partition = 0;
  }
  const retention = child(s, 'persistentVolumeClaimRetentionPolicy');
  if (unset(retention.whenDeleted)) retention.whenDeleted = 'Retain';
  if (unset(retention.whenScaled)) retention.whenScaled = 'Retain';
  if (unset(s.replicas)) s.replicas = 1;
  if (unset(s.revisionHistoryLimit)) s.revisionHistoryLimit = 10;
  defaultTemplate(s.template);
  for (const template of objects(s.volumeClaimTemplates)) claim(template);
}

function replicaSet(obj: Plain): void {
  const s = spec(obj);
  if (s === undefined) return;
  if (unset(s.replicas)) s.replicas = 1;
  defaultTemplate(s.template);
}

/** The labels the Job strategy puts on a Job's pods and selects them by (kube 1.32: both the legacy and the prefixed names). */
function jobSelector(obj: Plain, s: Plain): void {
  if (s.manualSelector === true) return;
  const meta = obj.metadata as Plain;
  const uid = String(meta.uid);
  const template = child(s, 'template');
  const templateMeta = child(template, 'metadata');
  const labels = isPlainObject(templateMeta.labels) ? templateMeta.labels : {};
  labels['batch.kubernetes.io/controller-uid'] = uid;
  labels['batch.kubernetes.io/job-name'] = String(meta.name);
  labels['controller-uid'] = uid;
  labels['job-name'] = String(meta.name);
  templateMeta.labels = labels;
  s.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
}

/**
 * SetDefaults_Job gives a Job without labels its template's. Kube runs it when it decodes the
 * request and again when it reads back what the strategy stored, so a Job created without labels
 * or template labels ends up with the selector labels the strategy added.
 */
function labelsFromTemplate(obj: Plain, s: Plain): void {
  const meta = obj.metadata as Plain;
  const templateMeta = isPlainObject(s.template) && isPlainObject(s.template.metadata) ? s.template.metadata : undefined;
  if (templateMeta === undefined || !isPlainObject(templateMeta.labels)) return;
  if (isPlainObject(meta.labels) && Object.keys(meta.labels).length > 0) return;
  meta.labels = { ...templateMeta.labels };
}

function job(obj: Plain, create: boolean): void {
  const s = spec(obj);
  if (s === undefined) return;
  if (unset(s.completions) && unset(s.parallelism)) s.completions = 1;
  if (unset(s.parallelism)) s.parallelism = 1;
  if (unset(s.backoffLimit)) s.backoffLimit = unset(s.backoffLimitPerIndex) ? 6 : 2147483647;
  labelsFromTemplate(obj, s);
  if (unset(s.completionMode)) s.completionMode = 'NonIndexed';
  if (unset(s.suspend)) s.suspend = false;
  const failurePolicy = isPlainObject(s.podFailurePolicy) ? s.podFailurePolicy : undefined;
  for (const rule of objects(failurePolicy?.rules)) for (const pattern of objects(rule.onPodConditions)) if (unset(pattern.status)) pattern.status = 'True';
  if (unset(s.podReplacementPolicy)) s.podReplacementPolicy = failurePolicy === undefined ? 'TerminatingOrFailed' : 'Failed';
  defaultTemplate(s.template);
  if (!create) return;
  if (unset(s.manualSelector)) s.manualSelector = false;
  jobSelector(obj, s);
  labelsFromTemplate(obj, s);
}

function cronJob(obj: Plain): void {
  const s = spec(obj);
  if (s === undefined) return;
  if (unset(s.concurrencyPolicy)) s.concurrencyPolicy = 'Allow';
  if (unset(s.suspend)) s.suspend = false;
  if (unset(s.successfulJobsHistoryLimit)) s.successfulJobsHistoryLimit = 3;
  if (unset(s.failedJobsHistoryLimit)) s.failedJobsHistoryLimit = 1;
  const jobTemplate = isPlainObject(s.jobTemplate) ? s.jobTemplate : undefined;
  if (jobTemplate !== undefined && isPlainObject(jobTemplate.spec)) defaultTemplate(jobTemplate.spec.template);
}

/** The label SetDefaults_Namespace sets, and the finalizer the Namespace strategy puts on create. */
function namespace(obj: Plain, create: boolean): void {
  const meta = obj.metadata as Plain;
  if (create) obj.spec = { ...(isPlainObject(obj.spec) ? obj.spec : {}), finalizers: ['kubernetes'] };
  if (typeof meta.name === 'string' && meta.name !== '') {
    const labels = isPlainObject(meta.labels) && !Object.isFrozen(meta.labels) ? meta.labels : { ...(isPlainObject(meta.labels) ? meta.labels : {}) };
    labels['kubernetes.io/metadata.name'] = meta.name;
    meta.labels = labels;
  }
}

function persistentVolume(obj: Plain): void {
  const s = spec(obj);
  if (s !== undefined) {
    if (unset(s.persistentVolumeReclaimPolicy)) s.persistentVolumeReclaimPolicy = 'Retain';
    if (unset(s.volumeMode)) s.volumeMode = 'Filesystem';
  }
  const status = isPlainObject(obj.status) ? obj.status : undefined;
  if (status === undefined) obj.status = { phase: 'Pending' };
  else if (!Object.isFrozen(status) && unset(status.phase)) status.phase = 'Pending';
}

function secret(obj: Plain): void {
  if (unset(obj.type)) obj.type = 'Opaque';
}

function endpoints(obj: Plain): void {
  for (const subset of objects(obj.subsets)) for (const port of objects(subset.ports)) if (unset(port.protocol)) port.protocol = 'TCP';
}

function limitRange(obj: Plain): void {
  const s = spec(obj);
  if (s === undefined) return;
  for (const item of objects(s.limits)) {
    if (item.type !== 'Container') continue;
    const defaults = child(item, 'default');
    const requests = child(item, 'defaultRequest');
    const fill = (into: Plain, from: unknown): void => {
      if (isPlainObject(from)) for (const [k, v] of Object.entries(from)) if (!Object.hasOwn(into, k)) into[k] = v;
    };
    fill(defaults, item.max);
    fill(requests, defaults);
    fill(requests, item.min);
  }
}

function networkPolicy(obj: Plain): void {
  const s = spec(obj);
  if (s === undefined) return;
  for (const rule of [...objects(s.ingress), ...objects(s.egress)]) for (const port of objects(rule.ports)) if (unset(port.protocol)) port.protocol = 'TCP';
  if (!Array.isArray(s.policyTypes) || s.policyTypes.length === 0) {
    s.policyTypes = Array.isArray(s.egress) && s.egress.length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}

function ingressClass(obj: Plain): void {
  const s = spec(obj);
  if (s !== undefined && isPlainObject(s.parameters) && unset(s.parameters.scope)) s.parameters.scope = 'Cluster';
}

const rbacGroup = 'rbac.authorization.k8s.io';

function binding(obj: Plain): void {
  if (isPlainObject(obj.roleRef) && !Object.isFrozen(obj.roleRef) && unset(obj.roleRef.apiGroup)) obj.roleRef.apiGroup = rbacGroup;
  for (const subject of objects(obj.subjects)) {
    if (!unset(subject.apiGroup)) continue;
    if (subject.kind === 'ServiceAccount') subject.apiGroup = '';
    else if (subject.kind === 'User' || subject.kind === 'Group') subject.apiGroup = rbacGroup;
  }
}

function storageClass(obj: Plain): void {
  if (unset(obj.reclaimPolicy)) obj.reclaimPolicy = 'Delete';
  if (unset(obj.volumeBindingMode)) obj.volumeBindingMode = 'Immediate';
}

function endpointSlice(obj: Plain): void {
  for (const port of objects(obj.ports)) {
    if (port.name === undefined || port.name === null) port.name = '';
    if (unset(port.protocol)) port.protocol = 'TCP';
  }
}

const defaulters: ReadonlyMap<string, Defaulter> = new Map<string, Defaulter>([
  ['/pods', (obj) => defaultPod(obj)],
  ['/services', (obj) => defaultService(obj)],
  ['/namespaces', namespace],
  ['/secrets', secret],
  ['/persistentvolumeclaims', claim],
  ['/persistentvolumes', persistentVolume],
  ['/endpoints', endpoints],
  ['/limitranges', limitRange],
  ['apps/deployments', deployment],
  ['apps/statefulsets', statefulSet],
  ['apps/daemonsets', daemonSet],
  ['apps/replicasets', replicaSet],
  ['batch/jobs', job],
  ['batch/cronjobs', cronJob],
  ['networking.k8s.io/networkpolicies', networkPolicy],
  ['networking.k8s.io/ingressclasses', ingressClass],
  [`${rbacGroup}/rolebindings`, binding],
  [`${rbacGroup}/clusterrolebindings`, binding],
  ['storage.k8s.io/storageclasses', storageClass],
  ['discovery.k8s.io/endpointslices', endpointSlice],
  ['admissionregistration.k8s.io/mutatingwebhookconfigurations', (obj) => defaultAdmission(obj, true)],
  ['admissionregistration.k8s.io/validatingwebhookconfigurations', (obj) => defaultAdmission(obj, false)],
  ['admissionregistration.k8s.io/validatingadmissionpolicies', defaultPolicy],
  ['admissionregistration.k8s.io/validatingadmissionpolicybindings', defaultPolicyBinding],
  ['apiextensions.k8s.io/customresourcedefinitions', defaultCrd],
]);

/** Defaults a decoded built-in object in place; `create` adds what the registry strategy sets on create only. */
export function defaultBuiltin(type: ResourceType, obj: Record<string, unknown>, create: boolean): void {
  if (!type.builtin) return;
  defaulters.get(`${type.group}/${type.resource}`)?.(obj, create);
}
