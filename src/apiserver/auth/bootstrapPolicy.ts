import type { KubeObject } from '../../types.js';
import type { PolicyRule } from './policyRule.js';
import { authorizationGroup, rbacGroup } from './rbacResources.js';
import { authenticatedGroup, mastersGroup } from './user.js';

/**
 * The default ClusterRoles and ClusterRoleBindings kube-apiserver creates at
 * start (its bootstrap policy), for the kinds this server serves:
 * `cluster-admin` bound to `system:masters`; `system:discovery`,
 * `system:basic-user` and `system:public-info-viewer` bound to every
 * authenticated user (discovery, openapi, health, version, and the
 * self-reviews `kubectl auth can-i` sends); and the user-facing `admin`,
 * `edit` and `view`, which are aggregated from the `system:aggregate-to-*`
 * roles (and from each other) by the aggregation controller, as in kube.
 */

const read = ['get', 'list', 'watch'];
const write = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const aggregateLabel = (to: 'admin' | 'edit' | 'view'): string => `rbac.authorization.k8s.io/aggregate-to-${to}`;

function meta(name: string, labels: Record<string, string> = {}): KubeObject['metadata'] {
  return {
    name,
    labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults', ...labels },
    annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
  };
}

function clusterRole(name: string, rules: PolicyRule[], labels?: Record<string, string>, aggregateFrom?: 'admin' | 'edit' | 'view'): KubeObject {
  return {
    apiVersion: `${rbacGroup}/v1`,
    kind: 'ClusterRole',
    metadata: meta(name, labels),
    ...(aggregateFrom !== undefined ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggregateLabel(aggregateFrom)]: 'true' } }] } } : {}),
    rules,
  } as KubeObject;
}

function groupBinding(name: string, role: string, groups: string[]): KubeObject {
  return {
    apiVersion: `${rbacGroup}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: meta(name),
    roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: role },
    subjects: groups.map((g) => ({ apiGroup: rbacGroup, kind: 'Group', name: g })),
  } as KubeObject;
}

const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({ verbs, apiGroups, resources });

export function bootstrapClusterRoles(): KubeObject[] {
  return [
    clusterRole('cluster-admin', [
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ]),
    clusterRole('system:discovery', [
      { verbs: ['get'], nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'] },
    ]),
    clusterRole('system:public-info-viewer', [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] }]),
    clusterRole('system:basic-user', [
      rule(['create'], [authorizationGroup], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ]),
    clusterRole('system:auth-delegator', [
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], [authorizationGroup], ['subjectaccessreviews']),
    ]),
    clusterRole('admin', [], undefined, 'admin'),
    clusterRole('edit', [], { [aggregateLabel('admin')]: 'true' }, 'edit'),
    clusterRole('view', [], { [aggregateLabel('edit')]: 'true' }, 'view'),
    clusterRole('system:aggregate-to-admin', [rule(['create'], [authorizationGroup], ['localsubjectaccessreviews']), rule([...read, ...write], [rbacGroup], ['roles', 'rolebindings'])], {
      [aggregateLabel('admin')]: 'true',
    }),
    clusterRole(
      'system:aggregate-to-edit',
      [
        rule(['impersonate'], [''], ['serviceaccounts']),
        rule(write, [''], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
        rule(['create'], [''], ['pods/eviction']),
        rule(write, [''], ['replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/proxy', 'persistentvolumeclaims', 'configmaps', 'secrets', 'events']),
        rule(['create'], [''], ['serviceaccounts/token']),
        rule(write, ['apps'], ['statefulsets', 'statefulsets/scale', 'daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale']),
        rule(write, ['batch'], ['jobs', 'cronjobs']),
        rule(write, ['policy'], ['poddisruptionbudgets']),
        rule(write, ['networking.k8s.io'], ['networkpolicies', 'ingresses']),
        rule(read, [''], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
      ],
      { [aggregateLabel('edit')]: 'true' },
    ),
    clusterRole(
      'system:aggregate-to-view',
      [
        rule(read, [''], ['pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps']),
        rule(read, [''], ['limitranges', 'resourcequotas', 'bindings', 'events', 'pods/status', 'resourcequotas/status', 'namespaces/status', 'replicationcontrollers/status', 'pods/log']),
        rule(read, [''], ['namespaces']),
        rule(read, ['discovery.k8s.io'], ['endpointslices']),
        rule(read, ['apps'], ['controllerrevisions', 'statefulsets', 'statefulsets/scale', 'statefulsets/status', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status']),
        rule(read, ['batch'], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
        rule(read, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        rule(read, ['networking.k8s.io'], ['networkpolicies', 'ingresses', 'ingresses/status']),
      ],
      { [aggregateLabel('view')]: 'true' },
    ),
  ];
}

export function bootstrapClusterRoleBindings(): KubeObject[] {
  return [
    groupBinding('cluster-admin', 'cluster-admin', [mastersGroup]),
    groupBinding('system:discovery', 'system:discovery', [authenticatedGroup]),
    groupBinding('system:basic-user', 'system:basic-user', [authenticatedGroup]),
    groupBinding('system:public-info-viewer', 'system:public-info-viewer', [authenticatedGroup, 'system:unauthenticated']),
  ];
}
