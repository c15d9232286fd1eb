import type { KubeObject } from '../../types.js';
import { isPlainObject } from '../../util/json.js';

/**
 * The columns `kubectl get` prints for built-in kinds, as kube-apiserver's printers
 * (pkg/printers/internalversion) define them in 1.32: names, types, priorities (1: only with
 * `-o wide`) and how each cell is made, `<none>` and all. The server always fills every column;
 * kubectl hides those of priority 1 unless asked.
 */

export interface Column {
  name: string;
  type: string;
  format?: string;
  description: string;
  priority?: number;
  cell: (obj: KubeObject, now: number) => unknown;
}

type Plain = Record<string, unknown>;

/** A JSONPath subset: `.a.b`, `.a[0].b`, `.a[?(@.k=="v")].b`, enough for printer columns. */
export function evaluatePath(obj: unknown, path: string): unknown {
  const tokens = path.replace(/^\{?\.?/, '').replace(/\}$/, '').match(/[^.[\]]+|\[[^\]]*\]/g) ?? [];
  let current: unknown = obj;
  for (const token of tokens) {
    if (current === undefined || current === null) return undefined;
    if (token.startsWith('[')) {
      const inner = token.slice(1, -1);
      const filter = /^\?\(@\.([\w.-]+)\s*==\s*["']?([^"']*)["']?\)$/.exec(inner);
      if (!Array.isArray(current)) return undefined;
      if (filter !== null) current = current.find((item) => String(evaluatePath(item, filter[1])) === filter[2]);
      else current = current[Number(inner)];
    } else {
      if (!isPlainObject(current)) return undefined;
      current = current[token];
    }
  }
  return current;
}

/** Kube's HumanDuration: 45s, 3m20s, 12m, 5h3m, 20h, 3d4h, 40d, 2y100d, 9y. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** Kube's translateTimestampSince: `<unknown>` for no time. */
export function humanAge(since: unknown, now = Date.now()): string {
  if (typeof since !== 'string' || since === '') return '<unknown>';
  return humanDuration(now - Date.parse(since));
}

export const nameColumn: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  cell: (o) => o.metadata.name,
};

export const ageColumn: Column = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  cell: (o, now) => humanAge(o.metadata.creationTimestamp, now),
};

const createdAtColumn: Column = { name: 'Created At', type: 'date', description: ageColumn.description, cell: (o) => o.metadata.creationTimestamp ?? '' };

function get(o: unknown, path: string): unknown {
  return evaluatePath(o, path);
}

function str(o: unknown, path: string, none = '<none>'): string {
  const value = get(o, path);
  return value === undefined || value === null || value === '' ? none : String(value);
}

function int(o: unknown, path: string): number {
  const value = get(o, path);
  return typeof value === 'number' ? value : 0;
}

function list(o: unknown, path: string): unknown[] {
  const value = get(o, path);
  return Array.isArray(value) ? value : [];
}

function column(name: string, type: string, cell: Column['cell'], priority = 0, description = ''): Column {
  return { name, type, description, priority, cell };
}

/** A label selector as kube prints it (`app=web,tier in (a,b)`), `<none>` when empty. */
function selectorString(selector: unknown): string {
  if (!isPlainObject(selector)) return '<none>';
  const parts: string[] = [];
  if (isPlainObject(selector.matchLabels)) for (const [k, v] of Object.entries(selector.matchLabels).sort()) parts.push(`${k}=${String(v)}`);
  for (const e of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    if (!isPlainObject(e)) continue;
    const values = Array.isArray(e.values) ? (e.values as unknown[]).map(String).sort().join(',') : '';
    const op = String(e.operator);
    if (op === 'In') parts.push(`${String(e.key)} in (${values})`);
    else if (op === 'NotIn') parts.push(`${String(e.key)} notin (${values})`);
    else if (op === 'Exists') parts.push(String(e.key));
    else if (op === 'DoesNotExist') parts.push(`!${String(e.key)}`);
  }
  return parts.length === 0 ? '<none>' : parts.join(',');
}

function mapString(value: unknown): string {
  if (!isPlainObject(value) || Object.keys(value).length === 0) return '<none>';
  return Object.entries(value)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');
}

function containerColumns(templateSpec: string): Column[] {
  const containers = (o: KubeObject): Plain[] => list(o, `${templateSpec}.containers`).filter(isPlainObject);
  return [
    column('Containers', 'string', (o) => containers(o).map((c) => String(c.name)).join(','), 1, 'Names of each container in the template.'),
    column('Images', 'string', (o) => containers(o).map((c) => String(c.image)).join(','), 1, 'Images referenced by each container in the template.'),
  ];
}

const selectorColumn = column('Selector', 'string', (o) => selectorString(get(o, '.spec.selector')), 1, 'The label selector.');

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

function hasCondition(o: KubeObject, type: string): boolean {
  return list(o, '.status.conditions').some((c) => isPlainObject(c) && c.type === type && c.status === 'True');
}

function jobStatus(o: KubeObject): string {
  if (hasCondition(o, 'Complete')) return 'Complete';
  if (hasCondition(o, 'Failed')) return 'Failed';
  if (o.metadata.deletionTimestamp !== undefined) return 'Terminating';
  if (hasCondition(o, 'Suspended')) return 'Suspended';
  if (hasCondition(o, 'FailureTarget')) return 'FailureTarget';
  if (hasCondition(o, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

function jobCompletions(o: KubeObject): string {
  const succeeded = int(o, '.status.succeeded');
  const completions = get(o, '.spec.completions');
  if (typeof completions === 'number') return `${succeeded}/${completions}`;
  const parallelism = int(o, '.spec.parallelism');
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function jobDuration(o: KubeObject, now: number): string {
  const start = get(o, '.status.startTime');
  if (typeof start !== 'string') return '';
  const end = get(o, '.status.completionTime');
  return humanDuration((typeof end === 'string' ? Date.parse(end) : now) - Date.parse(start));
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

function ready(readyPath: string, desiredPath: string): Column['cell'] {
  return (o) => `${int(o, readyPath)}/${int(o, desiredPath)}`;
}

function bindingColumns(): Column[] {
  const subjects =
    (kind: string): Column['cell'] =>
    (o) =>
      list(o, '.subjects')
        .filter((s): s is Plain => isPlainObject(s) && s.kind === kind)
        .map((s) => (kind === 'ServiceAccount' ? `${String(s.namespace ?? '')}/${String(s.name)}` : String(s.name)))
        .join(', ');
  return [
    nameColumn,
    column('Role', 'string', (o) => `${str(o, '.roleRef.kind', '')}/${str(o, '.roleRef.name', '')}`, 0, 'RoleRef references the role being bound.'),
    ageColumn,
    column('Users', 'string', subjects('User'), 1, 'Users in the binding.'),
    column('Groups', 'string', subjects('Group'), 1, 'Groups in the binding.'),
    column('ServiceAccounts', 'string', subjects('ServiceAccount'), 1, 'ServiceAccounts in the binding.'),
  ];
}

const webhookColumns = (): Column[] => [nameColumn, column('Webhooks', 'integer', (o) => list(o, '.webhooks').length, 0, 'Webhooks indicates the number of webhooks registered in this configuration.'), ageColumn];

const printers: Readonly<Record<string, () => Column[]>> = {
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
  'apps/deployments': () => [
    nameColumn,
    column('Ready', 'string', ready('.status.readyReplicas', '.spec.replicas'), 0, 'Number of the pod with ready state'),
    column('Up-to-date', 'integer', (o) => int(o, '.status.updatedReplicas'), 0, 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.'),
    column('Available', 'integer', (o) => int(o, '.status.availableReplicas'), 0, 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.'),
    ageColumn,
    ...containerColumns('.spec.template.spec'),
    selectorColumn,
  ],
  'apps/statefulsets': () => [nameColumn, column('Ready', 'string', ready('.status.readyReplicas', '.spec.replicas'), 0, 'Number of the pod with ready state'), ageColumn, ...containerColumns('.spec.template.spec')],
  'apps/daemonsets': () => [
    nameColumn,
    column('Desired', 'integer', (o) => int(o, '.status.desiredNumberScheduled'), 0, 'The total number of nodes that should be running the daemon pod.'),
    column('Current', 'integer', (o) => int(o, '.status.currentNumberScheduled'), 0, 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.'),
    column('Ready', 'integer', (o) => int(o, '.status.numberReady'), 0, 'numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.'),
    column('Up-to-date', 'integer', (o) => int(o, '.status.updatedNumberScheduled'), 0, 'The total number of nodes that are running updated daemon pod'),
    column('Available', 'integer', (o) => int(o, '.status.numberAvailable'), 0, 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)'),
    column('Node Selector', 'string', (o) => mapString(get(o, '.spec.template.spec.nodeSelector')), 0, 'NodeSelector is a selector which must be true for the pod to fit on a node.'),
    ageColumn,
    ...containerColumns('.spec.template.spec'),
    selectorColumn,
  ],
  'apps/replicasets': () => [
    nameColumn,
    column('Desired', 'integer', (o) => int(o, '.spec.replicas'), 0, 'Replicas is the number of desired replicas.'),
    column('Current', 'integer', (o) => int(o, '.status.replicas'), 0, 'Replicas is the most recently observed number of replicas.'),
    column('Ready', 'integer', (o) => int(o, '.status.readyReplicas'), 0, 'The number of ready replicas for this replica set.'),
    ageColumn,
    ...containerColumns('.spec.template.spec'),
    selectorColumn,
  ],
  'apps/controllerrevisions': () => [
    nameColumn,
    column('Controller', 'string', (o) => controllerOf(o), 0, 'Controller of the object'),
    column('Revision', 'integer', (o) => int(o, '.revision'), 0, 'Revision indicates the revision of the state represented by Data.'),
    ageColumn,
  ],
  'batch/jobs': () => [
    nameColumn,
    column('Status', 'string', jobStatus, 0, 'Status of the job.'),
    column('Completions', 'string', jobCompletions, 0, 'The desired number of successfully finished pods the job should be run with.'),
    column('Duration', 'string', jobDuration, 0, 'Time required to complete the job.'),
    ageColumn,
    ...containerColumns('.spec.template.spec'),
    selectorColumn,
  ],
  'batch/cronjobs': () => [
    nameColumn,
    column('Schedule', 'string', (o) => str(o, '.spec.schedule', ''), 0, 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
    column('Timezone', 'string', (o) => str(o, '.spec.timeZone'), 0, 'The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.'),
    column('Suspend', 'boolean', (o) => (get(o, '.spec.suspend') === true ? 'True' : 'False'), 0, 'This flag tells the controller to suspend subsequent executions.'),
    column('Active', 'integer', (o) => list(o, '.status.active').length, 0, 'A list of pointers to currently running jobs.'),
    column('Last Schedule', 'string', (o, now) => (typeof get(o, '.status.lastScheduleTime') === 'string' ? humanAge(get(o, '.status.lastScheduleTime'), now) : '<none>'), 0, 'Information when was the last time the job was successfully scheduled.'),
    ageColumn,
    ...containerColumns('.spec.jobTemplate.spec.template.spec'),
    column('Selector', 'string', (o) => selectorString(get(o, '.spec.jobTemplate.spec.selector')), 1, 'The label selector.'),
  ],
  'networking.k8s.io/ingresses': () => [
    nameColumn,
    column('Class', 'string', (o) => str(o, '.spec.ingressClassName'), 0, 'The name of the IngressClass resource.'),
    column('Hosts', 'string', ingressHosts, 0, 'Hosts that incoming requests are matched against before the ingress rule'),
    column('Address', 'string', (o) => ingressAddress(o), 0, 'Address is a list containing ingress points for the load-balancer'),
    column('Ports', 'string', (o) => (list(o, '.spec.tls').length > 0 ? '80, 443' : '80'), 0, 'Ports of TLS configurations that open'),
    ageColumn,
  ],
  'networking.k8s.io/ingressclasses': () => [
    nameColumn,
    column('Controller', 'string', (o) => str(o, '.spec.controller', ''), 0, 'Controller that is responsible for handling this class'),
    column('Parameters', 'string', ingressClassParameters, 0, 'A reference to a resource with additional parameters'),
    ageColumn,
  ],
  'networking.k8s.io/networkpolicies': () => [nameColumn, column('Pod-Selector', 'string', (o) => selectorString(get(o, '.spec.podSelector')), 0, 'Selects the pods to which this NetworkPolicy object applies.'), ageColumn],
  'policy/poddisruptionbudgets': () => [
    nameColumn,
    column('Min Available', 'string', (o) => str(o, '.spec.minAvailable', 'N/A'), 0, 'The minimum number of pods that must be available simultaneously.'),
    column('Max Unavailable', 'string', (o) => str(o, '.spec.maxUnavailable', 'N/A'), 0, 'The maximum number of simultaneous unavailable pods.'),
    column('Allowed Disruptions', 'integer', (o) => int(o, '.status.disruptionsAllowed'), 0, 'Calculated number of pods that may be disrupted at this time.'),
    ageColumn,
  ],
  'rbac.authorization.k8s.io/roles': () => [nameColumn, createdAtColumn],
  'rbac.authorization.k8s.io/clusterroles': () => [nameColumn, createdAtColumn],
  'rbac.authorization.k8s.io/rolebindings': bindingColumns,
  'rbac.authorization.k8s.io/clusterrolebindings': bindingColumns,
  'coordination.k8s.io/leases': () => [nameColumn, column('Holder', 'string', (o) => str(o, '.spec.holderIdentity', ''), 0, 'The holder of the lease.'), ageColumn],
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': webhookColumns,
  'admissionregistration.k8s.io/validatingwebhookconfigurations': webhookColumns,
  'admissionregistration.k8s.io/validatingadmissionpolicies': () => [
    nameColumn,
    column('Validations', 'integer', (o) => list(o, '.spec.validations').length, 0, 'Validations indicates the number of validation rules defined in this configuration'),
    column('ParamKind', 'string', (o) => (get(o, '.spec.paramKind') === undefined ? '<unset>' : `${str(o, '.spec.paramKind.apiVersion', '')}/${str(o, '.spec.paramKind.kind', '')}`), 0, 'ParamKind specifies the kind of resources used to parameterize this policy'),
    ageColumn,
  ],
  'admissionregistration.k8s.io/validatingadmissionpolicybindings': () => [
    nameColumn,
    column('PolicyName', 'string', (o) => str(o, '.spec.policyName', ''), 0, 'PolicyName references a ValidatingAdmissionPolicy name which the ValidatingAdmissionPolicyBinding binds to.'),
    column('ParamRef', 'string', (o) => (get(o, '.spec.paramRef') === undefined ? '<unset>' : `${str(o, '.spec.paramRef.namespace', '')}/${str(o, '.spec.paramRef.name', '*')}`), 0, 'ParamRef specifies the parameter resource used to configure the admission control policy.'),
    ageColumn,
  ],
  'apiextensions.k8s.io/customresourcedefinitions': () => [nameColumn, createdAtColumn],
  'discovery.k8s.io/endpointslices': () => [
    nameColumn,
    column('AddressType', 'string', (o) => str(o, '.addressType', ''), 0, 'Type of address carried by this EndpointSlice.'),
    column('Ports', 'string', sliceList('.ports', (p) => String(p.port ?? '')), 0, 'Ports provided by this EndpointSlice.'),
    column('Endpoints', 'string', sliceEndpoints, 0, 'Endpoints included in this EndpointSlice.'),
    ageColumn,
  ],
  'storage.k8s.io/storageclasses': () => [
    { ...nameColumn, cell: (o) => (o.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true' ? `${o.metadata.name ?? ''} (default)` : o.metadata.name) },
    column('Provisioner', 'string', (o) => str(o, '.provisioner', ''), 0, 'Indicates the type of the provisioner.'),
    column('ReclaimPolicy', 'string', (o) => str(o, '.reclaimPolicy', 'Delete'), 0, 'Indicates the type of the reclaim policy.'),
    column('VolumeBindingMode', 'string', (o) => str(o, '.volumeBindingMode', 'Immediate'), 0, 'Indicates when volume binding and dynamic provisioning should occur.'),
    column('AllowVolumeExpansion', 'string', (o) => (get(o, '.allowVolumeExpansion') === true ? 'true' : 'false'), 0, 'Indicates whether the storage class allow volume expand.'),
    ageColumn,
  ],
};

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

function controllerOf(o: KubeObject): string {
  const owner = (o.metadata.ownerReferences ?? []).find((r) => isPlainObject(r) && r.controller === true) as Plain | undefined;
  if (owner === undefined) return '<none>';
  const apiVersion = String(owner.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  return `${String(owner.kind).toLowerCase()}${group === '' ? '' : `.${group}`}/${String(owner.name)}`;
}

function ingressHosts(o: KubeObject): string {
  const hosts = list(o, '.spec.rules')
    .filter(isPlainObject)
    .map((r) => String(r.host ?? ''))
    .filter((h) => h !== '');
  if (hosts.length === 0) return '*';
  return hosts.length > 3 ? `${hosts.slice(0, 3).join(',')} + ${hosts.length - 3} more...` : hosts.join(',');
}

function ingressAddress(o: KubeObject): string {
  return list(o, '.status.loadBalancer.ingress')
    .filter(isPlainObject)
    .map((i) => String(i.ip ?? i.hostname ?? ''))
    .filter((s) => s !== '')
    .join(',');
}

function ingressClassParameters(o: KubeObject): string {
  const p = get(o, '.spec.parameters');
  if (!isPlainObject(p)) return '<none>';
  const group = typeof p.apiGroup === 'string' && p.apiGroup !== '' ? `.${p.apiGroup}` : '';
  return `${String(p.kind)}${group}/${String(p.name)}`;
}

function sliceList(path: string, item: (p: Plain) => string): Column['cell'] {
  return (o) => {
    const items = list(o, path).filter(isPlainObject).map(item);
    if (items.length === 0) return '<unset>';
    return items.length > 3 ? `${items.slice(0, 3).join(',')} + ${items.length - 3} more...` : items.join(',');
  };
}

function sliceEndpoints(o: KubeObject): string {
  const addresses = list(o, '.endpoints')
    .filter(isPlainObject)
    .flatMap((e) => (Array.isArray(e.addresses) ? e.addresses.map(String) : []));
  if (addresses.length === 0) return '<unset>';
  return addresses.length > 3 ? `${addresses.slice(0, 3).join(',')} + ${addresses.length - 3} more...` : addresses.join(',');
}

/** Kube's columns for a built-in resource (`group/resource`), or undefined for the default Name and Age. */
export function builtinColumns(group: string, resource: string): Column[] | undefined {
  return printers[`${group}/${resource}`]?.();
}
