import type { KubeObject } from '../../types.js';
import { isPlainObject } from '../../util/json.js';
import { ageColumn, column, createdAtColumn, get, humanAge, list, mapString, nameColumn, str, type Column, type Plain } from './printerCells.js';

/** Kube's columns for the core (v1) kinds, and for events.k8s.io Events, which kube prints as core Events. */

function podRow(o: KubeObject): { ready: string; status: string; restarts: number } {
  const containers = list(o, '.spec.containers');
  const statuses = list(o, '.status.containerStatuses').filter(isPlainObject);
  const ready = statuses.filter((s) => s.ready === true).length;
  let status = str(o, '.status.reason', '') || str(o, '.status.phase', '');
  for (const s of statuses) {
    const state = isPlainObject(s.state) ? s.state : {};
    const waiting = isPlainObject(state.waiting) ? state.waiting : undefined;
    if (waiting !== undefined && typeof waiting.reason === 'string' && waiting.reason !== '') status = waiting.reason;
  }
  if (o.metadata.deletionTimestamp !== undefined) status = 'Terminating';
  const restarts = statuses.reduce((sum, s) => sum + (typeof s.restartCount === 'number' ? s.restartCount : 0), 0);
  return { ready: `${ready}/${containers.length}`, status, restarts };
}

function servicePorts(o: KubeObject): string {
  const ports = list(o, '.spec.ports').filter(isPlainObject);
  if (ports.length === 0) return '<none>';
  return ports.map((p) => `${String(p.port)}${typeof p.nodePort === 'number' && p.nodePort !== 0 ? `:${p.nodePort}` : ''}/${String(p.protocol ?? 'TCP')}`).join(',');
}

function externalIp(o: KubeObject): string {
  const type = str(o, '.spec.type', 'ClusterIP');
  const external = list(o, '.spec.externalIPs').map(String);
  const ingress = list(o, '.status.loadBalancer.ingress')
    .filter(isPlainObject)
    .map((i) => String(i.ip ?? i.hostname ?? ''))
    .filter((s) => s !== '');
  if (type === 'ExternalName') return str(o, '.spec.externalName');
  if (type === 'LoadBalancer') {
    const all = [...ingress, ...external];
    return all.length > 0 ? all.join(',') : '<pending>';
  }
  return external.length > 0 ? external.join(',') : '<none>';
}

function endpointsString(o: KubeObject): string {
  const out: string[] = [];
  for (const subset of list(o, '.subsets').filter(isPlainObject)) {
    const ports = (Array.isArray(subset.ports) ? subset.ports : []).filter(isPlainObject);
    for (const address of (Array.isArray(subset.addresses) ? subset.addresses : []).filter(isPlainObject)) {
      if (ports.length === 0) out.push(String(address.ip));
      for (const port of ports) out.push(`${String(address.ip)}:${String(port.port)}`);
    }
  }
  if (out.length === 0) return '<none>';
  return out.length > 3 ? `${out.slice(0, 3).join(',')} + ${out.length - 3} more...` : out.join(',');
}

function nodeStatus(o: KubeObject): string {
  const ready = list(o, '.status.conditions').find((c) => isPlainObject(c) && c.type === 'Ready') as Plain | undefined;
  const status = ready === undefined ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady';
  return get(o, '.spec.unschedulable') === true ? `${status},SchedulingDisabled` : status;
}

function nodeRoles(o: KubeObject): string {
  const labels = isPlainObject(o.metadata.labels) ? Object.keys(o.metadata.labels) : [];
  const roles = labels.filter((l) => l.startsWith('node-role.kubernetes.io/')).map((l) => l.slice('node-role.kubernetes.io/'.length));
  if (o.metadata.labels?.['kubernetes.io/role'] !== undefined) roles.push(o.metadata.labels['kubernetes.io/role']);
  return roles.length === 0 ? '<none>' : roles.sort().join(',');
}

function nodeAddress(type: string): Column['cell'] {
  return (o) => {
    const found = list(o, '.status.addresses').find((a) => isPlainObject(a) && a.type === type) as Plain | undefined;
    return found === undefined ? '<none>' : String(found.address);
  };
}

function accessModes(o: KubeObject, path: string): string {
  const short: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };
  return list(o, path)
    .map((m) => short[String(m)] ?? String(m))
    .join(',');
}

function eventFields(o: KubeObject): Plain {
  const e = o as unknown as Plain;
  // events.k8s.io/v1 names the core/v1 fields differently; kube prints both with one printer.
  if (e.apiVersion === 'events.k8s.io/v1') {
    return {
      ...e,
      involvedObject: e.regarding,
      message: e.note,
      firstTimestamp: e.deprecatedFirstTimestamp,
      lastTimestamp: e.deprecatedLastTimestamp,
      count: e.deprecatedCount,
      source: e.deprecatedSource,
    };
  }
  return e;
}

function eventCells(o: KubeObject, now: number): Plain {
  const e = eventFields(o);
  const first = typeof e.firstTimestamp === 'string' && e.firstTimestamp !== '' ? humanAge(e.firstTimestamp, now) : humanAge(e.eventTime, now);
  let last = typeof e.lastTimestamp === 'string' && e.lastTimestamp !== '' ? humanAge(e.lastTimestamp, now) : first;
  let count = typeof e.count === 'number' && e.count !== 0 ? e.count : 1;
  if (isPlainObject(e.series)) {
    last = humanAge(e.series.lastObservedTime, now);
    count = typeof e.series.count === 'number' ? e.series.count : count;
  }
  const involved = isPlainObject(e.involvedObject) ? e.involvedObject : {};
  const kind = String(involved.kind ?? '').toLowerCase();
  const object = typeof involved.name === 'string' && involved.name !== '' ? `${kind}/${involved.name}` : kind;
  const source = isPlainObject(e.source) ? e.source : {};
  const component = String(source.component ?? '') || String(e.reportingComponent ?? e.reportingController ?? '');
  const host = String(source.host ?? '') || String(e.reportingInstance ?? '');
  return {
    last,
    first,
    count,
    object,
    subobject: String(involved.fieldPath ?? ''),
    source: host === '' ? component : `${component}, ${host}`,
    message: String(e.message ?? '').trim(),
  };
}

function eventColumns(): Column[] {
  const cell =
    (key: string): Column['cell'] =>
    (o, now) =>
      eventCells(o, now)[key];
  return [
    column('Last Seen', 'string', cell('last'), 0, 'Time when last event occurred'),
    column('Type', 'string', (o) => String(eventFields(o).type ?? ''), 0, 'Type of this event.'),
    column('Reason', 'string', (o) => String(eventFields(o).reason ?? ''), 0, 'Reason why this event was generated.'),
    column('Object', 'string', cell('object'), 0, 'The object this Event is about.'),
    column('Subobject', 'string', cell('subobject'), 1, 'The subobject this Event is about.'),
    column('Source', 'string', cell('source'), 1, 'The component reporting this Event.'),
    column('Message', 'string', cell('message'), 0, 'A human-readable description of the status of this operation.'),
    column('First Seen', 'string', cell('first'), 1, 'Time when first event occurred'),
    column('Count', 'integer', cell('count'), 1, 'Number of times this event has occurred.'),
    { ...nameColumn, priority: 1 },
  ];
}

function quotaString(o: KubeObject, limits: boolean): string {
  const hard = (get(o, '.status.hard') ?? get(o, '.spec.hard')) as Plain | undefined;
  const used = (get(o, '.status.used') ?? {}) as Plain;
  if (!isPlainObject(hard)) return '';
  return Object.keys(hard)
    .filter((k) => k.startsWith('limits.') === limits)
    .sort()
    .map((k) => `${k}: ${String(used[k] ?? '0')}/${String(hard[k])}`)
    .join(', ');
}

export const corePrinters: Readonly<Record<string, () => Column[]>> = {
  '/pods': () => [
    nameColumn,
    column('Ready', 'string', (o) => podRow(o).ready, 0, 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'string', (o) => podRow(o).status, 0, 'The aggregate status of the containers in this pod.'),
    column('Restarts', 'string', (o) => String(podRow(o).restarts), 0, 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
    ageColumn,
    column('IP', 'string', (o) => str(o, '.status.podIP'), 1, 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.'),
    column('Node', 'string', (o) => str(o, '.spec.nodeName'), 1, 'NodeName is a request to schedule this pod onto a specific node.'),
    column('Nominated Node', 'string', (o) => str(o, '.status.nominatedNodeName'), 1, 'nominatedNodeName is set when this pod preempts other pods on the node.'),
    column('Readiness Gates', 'string', (o) => (list(o, '.spec.readinessGates').length === 0 ? '<none>' : `0/${list(o, '.spec.readinessGates').length}`), 1, 'If specified, all readiness gates will be evaluated for pod readiness.'),
  ],
  '/namespaces': () => [nameColumn, column('Status', 'string', (o) => str(o, '.status.phase', ''), 0, 'The status of the namespace'), ageColumn],
  '/configmaps': () => [nameColumn, column('Data', 'integer', (o) => Object.keys((get(o, '.data') as Plain | undefined) ?? {}).length + Object.keys((get(o, '.binaryData') as Plain | undefined) ?? {}).length, 0, 'Data contains the configuration data'), ageColumn],
  '/secrets': () => [
    nameColumn,
    column('Type', 'string', (o) => str(o, '.type', ''), 0, 'The type of the secret'),
    column('Data', 'integer', (o) => Object.keys((get(o, '.data') as Plain | undefined) ?? {}).length, 0, 'The number of entries in the secret'),
    ageColumn,
  ],
  '/services': () => [
    nameColumn,
    column('Type', 'string', (o) => str(o, '.spec.type', 'ClusterIP'), 0, 'The type of the service.'),
    column('Cluster-IP', 'string', (o) => str(o, '.spec.clusterIP'), 0, 'The IP address of the service.'),
    column('External-IP', 'string', externalIp, 0, 'The external IP address of the service.'),
    column('Port(s)', 'string', servicePorts, 0, 'The ports exposed by the service.'),
    ageColumn,
    column('Selector', 'string', (o) => mapString(get(o, '.spec.selector')), 1, 'Route service traffic to pods with label keys and values matching this selector.'),
  ],
  '/events': eventColumns,
  'events.k8s.io/events': eventColumns,
  '/endpoints': () => [nameColumn, column('Endpoints', 'string', endpointsString, 0, 'Endpoints is the list of endpoints.'), ageColumn],
  '/serviceaccounts': () => [nameColumn, column('Secrets', 'string', (o) => String(list(o, '.secrets').length), 0, 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.'), ageColumn],
  '/persistentvolumeclaims': () => [
    nameColumn,
    column('Status', 'string', (o) => (o.metadata.deletionTimestamp !== undefined ? 'Terminating' : str(o, '.status.phase', '')), 0, 'The current phase of the claim.'),
    column('Volume', 'string', (o) => str(o, '.spec.volumeName', ''), 0, 'The name of the PersistentVolume bound to this claim.'),
    column('Capacity', 'string', (o) => str(o, '.status.capacity.storage', ''), 0, 'The actual resources of the volume.'),
    column('Access Modes', 'string', (o) => accessModes(o, '.status.accessModes'), 0, 'All access modes the volume backing the claim has.'),
    column('StorageClass', 'string', (o) => str(o, '.spec.storageClassName'), 0, 'StorageClass of the claim.'),
    column('VolumeAttributesClass', 'string', (o) => str(o, '.status.currentVolumeAttributesClassName'), 0, 'VolumeAttributesClass of the claim.'),
    ageColumn,
    column('VolumeMode', 'string', (o) => str(o, '.spec.volumeMode', 'Filesystem'), 1, 'Whether the claim is a block device or a filesystem.'),
  ],
  '/persistentvolumes': () => [
    nameColumn,
    column('Capacity', 'string', (o) => str(o, '.spec.capacity.storage', ''), 0, 'The capacity of the volume.'),
    column('Access Modes', 'string', (o) => accessModes(o, '.spec.accessModes'), 0, 'The ways the volume can be mounted.'),
    column('Reclaim Policy', 'string', (o) => str(o, '.spec.persistentVolumeReclaimPolicy', ''), 0, 'What happens to the volume when released from its claim.'),
    column('Status', 'string', (o) => (o.metadata.deletionTimestamp !== undefined ? 'Terminating' : str(o, '.status.phase', '')), 0, 'The current phase of the volume.'),
    column('Claim', 'string', (o) => (get(o, '.spec.claimRef.name') === undefined ? '' : `${str(o, '.spec.claimRef.namespace', '')}/${str(o, '.spec.claimRef.name', '')}`), 0, 'The claim bound to the volume.'),
    column('StorageClass', 'string', (o) => str(o, '.spec.storageClassName', ''), 0, 'StorageClass of the volume.'),
    column('VolumeAttributesClass', 'string', (o) => str(o, '.spec.volumeAttributesClassName'), 0, 'VolumeAttributesClass of the volume.'),
    column('Reason', 'string', (o) => str(o, '.status.reason', ''), 0, 'Why the volume is in its phase.'),
    ageColumn,
    column('VolumeMode', 'string', (o) => str(o, '.spec.volumeMode', 'Filesystem'), 1, 'Whether the volume is a block device or a filesystem.'),
  ],
  '/nodes': () => [
    nameColumn,
    column('Status', 'string', nodeStatus, 0, 'The status of the node'),
    column('Roles', 'string', nodeRoles, 0, 'The roles of the node'),
    ageColumn,
    column('Version', 'string', (o) => str(o, '.status.nodeInfo.kubeletVersion', ''), 0, 'Kubelet Version reported by the node.'),
    column('Internal-IP', 'string', nodeAddress('InternalIP'), 1, 'List of addresses reachable to the node.'),
    column('External-IP', 'string', nodeAddress('ExternalIP'), 1, 'List of addresses reachable to the node.'),
    column('OS-Image', 'string', (o) => str(o, '.status.nodeInfo.osImage', '<unknown>'), 1, 'OS Image reported by the node.'),
    column('Kernel-Version', 'string', (o) => str(o, '.status.nodeInfo.kernelVersion', '<unknown>'), 1, 'Kernel Version reported by the node.'),
    column('Container-Runtime', 'string', (o) => str(o, '.status.nodeInfo.containerRuntimeVersion', '<unknown>'), 1, 'Container Runtime Version reported by the node.'),
  ],
  '/limitranges': () => [nameColumn, createdAtColumn],
  '/resourcequotas': () => [
    nameColumn,
    ageColumn,
    column('Request', 'string', (o) => quotaString(o, false), 0, 'Request represents a minimum amount of cpu/memory that a container may consume.'),
    column('Limit', 'string', (o) => quotaString(o, true), 0, 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.'),
  ],
};
