import { isPlainObject } from '../../util/json.js';
import { type Plain, unset, objects } from './fields.js';

/**
 * The defaults kube-apiserver 1.32 gives a pod spec wherever one appears (a Pod, and the pod
 * template of a Deployment, ReplicaSet, StatefulSet, DaemonSet, Job or CronJob), as its
 * generated defaulter runs them: `SetDefaults_PodSpec`, `SetDefaults_Container` (also for init
 * and ephemeral containers), the declarative `protocol: TCP` of ContainerPort, probes and their
 * HTTP actions, volumes and their sources, and `fieldRef.apiVersion` (pkg/apis/core/v1/defaults.go,
 * k8s.io/api/core/v1/types.go). Everything is written in place and only where a field is unset,
 * so a spec already defaulted (a stored one, frozen) is read and never written.
 */


function setIfUnset(obj: Plain, key: string, value: unknown): void {
  if (unset(obj[key])) obj[key] = value;
}

/** The tag of an image reference as kube's parsers.ParseImageName reads it (`latest` when none is given, none for a digest). */
export function imageTag(image: string): string {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  if (colon > slash) return name.slice(colon + 1);
  return at >= 0 ? '' : 'latest';
}

/** `Always` for `:latest` (or no tag), `IfNotPresent` otherwise. */
export function defaultPullPolicy(image: unknown): string {
  return typeof image === 'string' && imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent';
}

/** An int32 that is no pointer: zero is unset. */
function setIfZero(obj: Plain, key: string, value: number): void {
  if (obj[key] === undefined || obj[key] === null || obj[key] === 0) obj[key] = value;
}

function defaultProbe(probe: unknown): void {
  if (!isPlainObject(probe)) return;
  setIfZero(probe, 'timeoutSeconds', 1);
  setIfZero(probe, 'periodSeconds', 10);
  setIfZero(probe, 'successThreshold', 1);
  setIfZero(probe, 'failureThreshold', 3);
  defaultHandler(probe);
}

/** A probe's or lifecycle hook's HTTP action: path `/`, scheme `HTTP`; a gRPC action's service `""`. */
function defaultHandler(handler: unknown): void {
  if (!isPlainObject(handler)) return;
  if (isPlainObject(handler.httpGet)) {
    setIfUnset(handler.httpGet, 'path', '/');
    setIfUnset(handler.httpGet, 'scheme', 'HTTP');
  }
  if (isPlainObject(handler.grpc) && handler.grpc.service === undefined) handler.grpc.service = '';
}

function defaultFieldRef(source: unknown): void {
  if (isPlainObject(source) && isPlainObject(source.fieldRef)) setIfUnset(source.fieldRef, 'apiVersion', 'v1');
}

function defaultContainer(container: Plain): void {
  setIfUnset(container, 'imagePullPolicy', defaultPullPolicy(container.image));
  setIfUnset(container, 'terminationMessagePath', '/dev/termination-log');
  setIfUnset(container, 'terminationMessagePolicy', 'File');
  // ResourceRequirements is a struct, not a pointer: kube always writes it.
  if (container.resources === undefined || container.resources === null) container.resources = {};
  for (const port of objects(container.ports)) setIfUnset(port, 'protocol', 'TCP');
  defaultProbe(container.livenessProbe);
  defaultProbe(container.readinessProbe);
  defaultProbe(container.startupProbe);
  if (isPlainObject(container.lifecycle)) {
    defaultHandler(container.lifecycle.postStart);
    defaultHandler(container.lifecycle.preStop);
  }
  for (const env of objects(container.env)) defaultFieldRef(env.valueFrom);
}

function defaultVolume(volume: Plain): void {
  const sources = Object.keys(volume).filter((key) => key !== 'name' && volume[key] !== null && volume[key] !== undefined);
  if (sources.length === 0) volume.emptyDir = {};
  if (isPlainObject(volume.secret)) setIfUnset(volume.secret, 'defaultMode', 420);
  if (isPlainObject(volume.configMap)) setIfUnset(volume.configMap, 'defaultMode', 420);
  if (isPlainObject(volume.downwardAPI)) {
    setIfUnset(volume.downwardAPI, 'defaultMode', 420);
    for (const item of objects(volume.downwardAPI.items)) defaultFieldRef(item);
  }
  if (isPlainObject(volume.hostPath) && volume.hostPath.type === undefined) volume.hostPath.type = '';
  if (isPlainObject(volume.projected)) {
    setIfUnset(volume.projected, 'defaultMode', 420);
    for (const source of objects(volume.projected.sources)) {
      if (isPlainObject(source.serviceAccountToken)) setIfUnset(source.serviceAccountToken, 'expirationSeconds', 3600);
      if (isPlainObject(source.downwardAPI)) for (const item of objects(source.downwardAPI.items)) defaultFieldRef(item);
    }
  }
  if (isPlainObject(volume.ephemeral) && isPlainObject(volume.ephemeral.volumeClaimTemplate)) {
    const spec = volume.ephemeral.volumeClaimTemplate.spec;
    if (isPlainObject(spec)) setIfUnset(spec, 'volumeMode', 'Filesystem');
  }
  if (isPlainObject(volume.iscsi)) setIfUnset(volume.iscsi, 'iscsiInterface', 'default');
  if (isPlainObject(volume.rbd)) {
    setIfUnset(volume.rbd, 'pool', 'rbd');
    setIfUnset(volume.rbd, 'user', 'admin');
    setIfUnset(volume.rbd, 'keyring', '/etc/ceph/keyring');
  }
  if (isPlainObject(volume.azureDisk)) {
    setIfUnset(volume.azureDisk, 'cachingMode', 'ReadWrite');
    setIfUnset(volume.azureDisk, 'fsType', 'ext4');
    if (volume.azureDisk.readOnly === undefined) volume.azureDisk.readOnly = false;
    setIfUnset(volume.azureDisk, 'kind', 'Shared');
  }
  if (isPlainObject(volume.scaleIO)) {
    setIfUnset(volume.scaleIO, 'storageMode', 'ThinProvisioned');
    setIfUnset(volume.scaleIO, 'fsType', 'xfs');
  }
}

/** `SetDefaults_PodSpec` and the defaults of everything a pod spec holds. */
export function defaultPodSpec(spec: unknown): void {
  if (!isPlainObject(spec) || Object.isFrozen(spec)) return;
  setIfUnset(spec, 'dnsPolicy', 'ClusterFirst');
  setIfUnset(spec, 'restartPolicy', 'Always');
  if (spec.securityContext === undefined || spec.securityContext === null) spec.securityContext = {};
  setIfUnset(spec, 'terminationGracePeriodSeconds', 30);
  setIfUnset(spec, 'schedulerName', 'default-scheduler');
  for (const container of objects(spec.containers)) defaultContainer(container);
  for (const container of objects(spec.initContainers)) defaultContainer(container);
  for (const container of objects(spec.ephemeralContainers)) defaultContainer(container);
  for (const volume of objects(spec.volumes)) defaultVolume(volume);
}

function requestsFromLimits(container: Plain): void {
  const resources = container.resources;
  if (!isPlainObject(resources) || !isPlainObject(resources.limits)) return;
  const requests = isPlainObject(resources.requests) ? resources.requests : {};
  for (const [name, quantity] of Object.entries(resources.limits)) if (!Object.hasOwn(requests, name)) requests[name] = quantity;
  resources.requests = requests;
}

/**
 * What `SetDefaults_Pod` adds for a Pod alone (not a template): requests from limits,
 * `enableServiceLinks: true`, and host ports equal to container ports under host networking.
 */
export function defaultPod(pod: Plain): void {
  const spec = pod.spec;
  if (!isPlainObject(spec) || Object.isFrozen(spec)) return;
  for (const container of objects(spec.containers)) requestsFromLimits(container);
  for (const container of objects(spec.initContainers)) requestsFromLimits(container);
  if (spec.enableServiceLinks === undefined || spec.enableServiceLinks === null) spec.enableServiceLinks = true;
  if (spec.hostNetwork === true) {
    for (const container of [...objects(spec.containers), ...objects(spec.initContainers)]) {
      for (const port of objects(container.ports)) if (port.hostPort === undefined || port.hostPort === 0) port.hostPort = port.containerPort;
    }
  }
  defaultPodSpec(spec);
}

/** The pod spec of a workload's `spec.template`. */
export function defaultTemplate(template: unknown): void {
  if (isPlainObject(template)) defaultPodSpec(template.spec);
}
