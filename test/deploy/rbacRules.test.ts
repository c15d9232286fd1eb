import { expect } from 'chai';
import { checkPermissions } from '../../src/controller/permissions.js';
import { controllerRbac, type RbacInput } from '../../src/deploy/rbacRules.js';

const widgets = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' };
const deployments = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' };
const configMaps = { version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
const base: RbacInput = { name: 'w', for: widgets };
const events = { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] };

describe('controllerRbac: the least RBAC from a controller\'s wiring', () => {
  it('grants list and watch on every informer (for, owns, watches, metadata-only too) and Events, cluster-wide when they watch every namespace', () => {
    const rules = controllerRbac({ ...base, owns: [deployments], watches: [{ resource: { ...configMaps, metadataOnly: true }, map: () => [] }] });
    expect(rules).to.deep.equal([
      {
        namespace: undefined,
        rules: [
          { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'] },
          { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list', 'watch'] },
          events,
          { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['list', 'watch'] },
        ],
      },
    ]);
  });

  it('keeps a namespaced controller in a Role of its namespace, with the declared verbs merged per resource in a fixed order', () => {
    const rules = controllerRbac({
      ...base,
      for: { ...widgets, namespace: 'apps' },
      owns: [{ ...deployments, namespace: 'apps' }],
      permissions: [
        { group: 'apps', resource: 'deployments', verbs: ['patch', 'create'] },
        { group: 'apps', resource: 'deployments', verbs: ['delete', 'create'] },
        { group: 'example.com', resource: 'widgets/status', verbs: ['update'] },
      ],
    });
    expect(rules).to.deep.equal([
      {
        namespace: 'apps',
        rules: [
          { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list', 'watch', 'create', 'patch', 'delete'] },
          events,
          { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['list', 'watch'] },
          { apiGroups: ['example.com'], resources: ['widgets/status'], verbs: ['update'] },
        ],
      },
    ]);
  });

  it('puts the Lease of leader election in its namespace: create, and get and update of that one Lease only', () => {
    const rules = controllerRbac({ ...base, for: { ...widgets, namespace: 'apps' }, leaderElection: { lease: 'kube-system/w-leader' } });
    expect(rules.map((s) => s.namespace)).to.deep.equal(['apps', 'kube-system']);
    expect(rules[1]?.rules).to.deep.equal([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'], resourceNames: ['w-leader'] },
    ]);
  });

  it('gives a sharded controller the Leases of its members: get, list, create and update in their namespace, by any name (each replica names its own)', () => {
    const rules = controllerRbac({ ...base, for: { ...widgets, namespace: 'apps' }, sharding: { replicas: 'auto', by: 'uid', namespace: 'shards' } });
    expect(rules.map((s) => s.namespace)).to.deep.equal(['apps', 'shards']);
    expect(rules[1]?.rules).to.deep.equal([{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'create', 'update', 'delete'] }]);
    expect(controllerRbac({ ...base, sharding: { replicas: 2, by: 'namespace' } }).find((s) => s.namespace === 'default')?.rules).to.deep.include({
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: ['get', 'list', 'create', 'update', 'delete'],
    });
  });

  it('places a permission where it says: another namespace, or every namespace ("*") in the ClusterRole', () => {
    const rules = controllerRbac({
      ...base,
      for: { ...widgets, namespace: 'apps' },
      permissions: [
        { resource: 'secrets', verbs: ['get'], resourceNames: ['token'], namespace: 'vault' },
        { resource: 'namespaces', verbs: ['get'], namespace: '*' },
      ],
    });
    expect(rules).to.deep.equal([
      { namespace: undefined, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }] },
      { namespace: 'apps', rules: [events, { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['list', 'watch'] }] },
      { namespace: 'vault', rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['token'] }] },
    ]);
  });

  it('refuses a Lease that is not namespace/name', () => {
    expect(() => controllerRbac({ ...base, leaderElection: { lease: 'leader' } })).to.throw(TypeError, 'leaderElection.lease must be "namespace/name", got "leader"');
  });
});

describe('checkPermissions: what controller() accepts as permissions', () => {
  it('accepts well-formed grants and none', () => {
    expect(() => checkPermissions('w', undefined)).not.to.throw();
    expect(() => checkPermissions('w', [{ group: 'apps', resource: 'deployments/scale', verbs: ['get', 'update'], resourceNames: ['web'] }])).not.to.throw();
  });

  for (const [what, grant, message] of [
    ['a wildcard verb', { resource: 'pods', verbs: ['*'] }, 'permissions[0].verbs: "*" is not one of get, list'],
    ['a wildcard resource', { resource: '*', verbs: ['get'] }, 'permissions[0].resource must be a plural resource name'],
    ['a wildcard group', { group: '*', resource: 'pods', verbs: ['get'] }, 'permissions[0].group must be an API group name (no wildcard)'],
    ['no verbs', { resource: 'pods', verbs: [] }, 'permissions[0].verbs must list at least one verb'],
    ['an unknown verb', { resource: 'pods', verbs: ['frobnicate'] }, 'permissions[0].verbs: "frobnicate" is not one of'],
    ['escalate without allowPrivilegeEscalation', { group: 'rbac.authorization.k8s.io', resource: 'roles', verbs: ['escalate'] }, 'permissions[0].verbs: "escalate" lets the controller act beyond its own permissions; say that it is meant with allowPrivilegeEscalation: true'],
    ['a create limited by name', { resource: 'pods', verbs: ['create'], resourceNames: ['a'] }, 'permissions[0]: "create" cannot be limited by resourceNames'],
    ['an empty namespace', { resource: 'pods', verbs: ['get'], namespace: '' }, 'permissions[0].namespace must be a namespace or "*"'],
  ] as const) {
    it(`refuses ${what}, naming the controller and the grant`, () => {
      expect(() => checkPermissions('w', [grant])).to.throw(TypeError, `controller "w": ${message}`);
    });
  }
});
