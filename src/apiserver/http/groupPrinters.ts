import type { KubeObject } from '../../types.js';
import { isPlainObject } from '../../util/json.js';
import { ageColumn, column, containerColumns, createdAtColumn, get, humanAge, humanDuration, int, list, mapString, nameColumn, selectorColumn, selectorString, str, type Column, type Plain } from './printerCells.js';

/** Kube's columns for the kinds of the named groups (apps, batch, networking, policy, RBAC, ...). */

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

export const groupPrinters: Readonly<Record<string, () => Column[]>> = {
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
