import { PatchStrategy, setHeaderOptions, type V1PolicyRule } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { failure, start } from './apiserver.helpers.js';
import { clientsFor, clientsOf, https, role, roleBinding, tokenOf, type SubjectClients } from './rbac.helpers.js';

/**
 * Kube's RBAC storage in the embedded server: a Role, ClusterRole or
 * binding that grants what its requester does not hold is refused with
 * kube's 403, unless she may `escalate` roles or `bind` the role; a
 * binding's roleRef never changes. Each user is `user-N` in the groups the
 * server gives every user (`system:authenticated`), with only the rules a
 * test gives her in her own namespace `esc-N`.
 */

const rbacGroup = 'rbac.authorization.k8s.io';
const user = (name: string): { kind: string; name: string } => ({ kind: 'User', name });
const held = (name: string, lines: string[]): string =>
  `user "${name}" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;

describe('embedded API server: RBAC escalation checks', function () {
  this.timeout(20_000);
  let server: ApiServer;
  let admin: SubjectClients;
  let count = 0;

  before(async () => {
    server = await start({ rbac: true });
    admin = clientsOf(server.kubeConfig());
  });
  after(async () => {
    await server.close();
  });

  /** A user holding `rules` in a fresh namespace (through a Role and RoleBinding the admin makes), and her clients. */
  async function restricted(rules: V1PolicyRule[]): Promise<{ ns: string; name: string; as: SubjectClients }> {
    const n = ++count;
    const ns = `esc-${n}`;
    const name = `user-${n}`;
    await admin.core.createNamespace({ body: { metadata: { name: ns } } });
    await role(admin, ns, 'granted', rules);
    await roleBinding(admin, ns, 'granted', { kind: 'Role', name: 'granted' }, [user(name)]);
    return { ns, name, as: clientsFor(server, { user: name }) };
  }

  const bindingBody = (name: string, roleRef: { kind: string; name: string }, subjects: { kind: string; name: string }[]) => ({
    metadata: { name },
    roleRef: { apiGroup: rbacGroup, ...roleRef },
    subjects: subjects.map((s) => ({ apiGroup: rbacGroup, ...s })),
  });

  it('refuses a user allowed only to create rolebindings who binds cluster-admin to herself, with kube 403 and the rules she lacks; she still cannot list Secrets', async () => {
    const { ns, name, as } = await restricted([{ apiGroups: [rbacGroup], resources: ['rolebindings'], verbs: ['create'] }]);
    const refused = await failure(as.rbac.createNamespacedRoleBinding({ namespace: ns, body: bindingBody('mine', { kind: 'ClusterRole', name: 'cluster-admin' }, [user(name)]) }));
    expect(refused.code).to.equal(403);
    expect(refused.body).to.deep.equal({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `rolebindings.rbac.authorization.k8s.io "mine" is forbidden: ${held(name, ['{APIGroups:["*"], Resources:["*"], Verbs:["*"]}', '{NonResourceURLs:["*"], Verbs:["*"]}'])}`,
      reason: 'Forbidden',
      details: { name: 'mine', group: rbacGroup, kind: 'rolebindings' },
      code: 403,
    });
    expect((await failure(as.core.listNamespacedSecret({ namespace: ns }))).code).to.equal(403);
    expect((await admin.rbac.listNamespacedRoleBinding({ namespace: ns })).items.map((b) => b.metadata?.name)).to.deep.equal(['granted']);
  });

  it('refuses a user allowed only to create roles a Role of every verb on every resource, and one of a verb she lacks on a resource she may read', async () => {
    const { ns, name, as } = await restricted([
      { apiGroups: [rbacGroup], resources: ['roles'], verbs: ['create'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
    ]);
    const all = await failure(as.rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: 'all' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] } }));
    expect(all.code).to.equal(403);
    expect(all.body.message).to.equal(`roles.rbac.authorization.k8s.io "all" is forbidden: ${held(name, ['{APIGroups:["*"], Resources:["*"], Verbs:["*"]}'])}`);
    // Only what she lacks is listed, verbs of one resource in one rule, in the order asked.
    const more = await failure(
      as.rbac.createNamespacedRole({
        namespace: ns,
        body: { metadata: { name: 'more' }, rules: [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'delete', 'list'] }] },
      }),
    );
    expect(more.body.message).to.equal(
      `roles.rbac.authorization.k8s.io "more" is forbidden: ${held(name, ['{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}', '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete" "list"]}'])}`,
    );
    // What she holds she may grant.
    await as.rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: 'read' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'get'] }] } });
  });

  it('refuses a user allowed only to create clusterrolebindings who makes herself cluster-admin', async () => {
    const { name, as } = await restricted([]);
    await admin.rbac.createClusterRole({ body: { metadata: { name: `crb-creator-${name}` }, rules: [{ apiGroups: [rbacGroup], resources: ['clusterrolebindings'], verbs: ['create'] }] } });
    await admin.rbac.createClusterRoleBinding({ body: bindingBody(`crb-creator-${name}`, { kind: 'ClusterRole', name: `crb-creator-${name}` }, [user(name)]) });
    const refused = await failure(as.rbac.createClusterRoleBinding({ body: bindingBody(`admin-${name}`, { kind: 'ClusterRole', name: 'cluster-admin' }, [user(name)]) }));
    expect(refused.code).to.equal(403);
    expect(refused.body.message).to.equal(
      `clusterrolebindings.rbac.authorization.k8s.io "admin-${name}" is forbidden: ${held(name, ['{APIGroups:["*"], Resources:["*"], Verbs:["*"]}', '{NonResourceURLs:["*"], Verbs:["*"]}'])}`,
    );
    expect(refused.body.details).to.deep.equal({ name: `admin-${name}`, group: rbacGroup, kind: 'clusterrolebindings' });
    expect((await failure(as.core.listNamespace())).code).to.equal(403);
  });

  it('counts only cluster-wide rules for a ClusterRole: a user who may read Secrets in her namespace cannot grant it cluster-wide', async () => {
    const { ns, name, as } = await restricted([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    await admin.rbac.createClusterRole({ body: { metadata: { name: `cr-creator-${name}` }, rules: [{ apiGroups: [rbacGroup], resources: ['clusterroles', 'roles'], verbs: ['create'] }] } });
    await admin.rbac.createClusterRoleBinding({ body: bindingBody(`cr-creator-${name}`, { kind: 'ClusterRole', name: `cr-creator-${name}` }, [user(name)]) });
    const secrets = [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }];
    const refused = await failure(as.rbac.createClusterRole({ body: { metadata: { name: `secrets-${name}` }, rules: secrets } }));
    expect(refused.body.message).to.equal(`clusterroles.rbac.authorization.k8s.io "secrets-${name}" is forbidden: ${held(name, ['{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'])}`);
    await as.rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: 'secrets' }, rules: secrets } });
  });

  it('lets a user who may escalate roles create any Role, and one who may bind a role bind it, though she holds nothing of it', async () => {
    const { ns, name, as } = await restricted([
      { apiGroups: [rbacGroup], resources: ['roles'], verbs: ['create', 'escalate'] },
      { apiGroups: [rbacGroup], resources: ['rolebindings'], verbs: ['create'] },
      { apiGroups: [rbacGroup], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['edit'] },
    ]);
    await as.rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: 'all' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] } });
    await as.rbac.createNamespacedRoleBinding({ namespace: ns, body: bindingBody('edit', { kind: 'ClusterRole', name: 'edit' }, [user('someone')]) });
    // bind names one role: another she holds no more of is refused.
    const admin_ = await failure(as.rbac.createNamespacedRoleBinding({ namespace: ns, body: bindingBody('admin', { kind: 'ClusterRole', name: 'admin' }, [user('someone')]) }));
    expect(admin_.code).to.equal(403);
    expect(admin_.body.message).to.match(new RegExp(`^rolebindings\\.rbac\\.authorization\\.k8s\\.io "admin" is forbidden: user "${name}" .* is attempting to grant RBAC permissions not currently held:\\n`));
    // escalate is on roles: a binding of the Role she made (all of it) still needs bind or all of it held.
    const all = await failure(as.rbac.createNamespacedRoleBinding({ namespace: ns, body: bindingBody('all', { kind: 'Role', name: 'all' }, [user('someone')]) }));
    expect(all.code).to.equal(403);
  });

  it('scopes by resourceNames: a user who may get one Secret can grant that one, not another nor all', async () => {
    const { ns, name, as } = await restricted([
      { apiGroups: [rbacGroup], resources: ['roles'], verbs: ['create'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['a'] },
    ]);
    await as.rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: 'a' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['a'] }] } });
    const other = await failure(as.rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: 'b' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['a', 'b'] }] } }));
    expect(other.body.message).to.equal(`roles.rbac.authorization.k8s.io "b" is forbidden: ${held(name, ['{APIGroups:[""], Resources:["secrets"], ResourceNames:["b"], Verbs:["get"]}'])}`);
    const every = await failure(as.rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: 'every' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] } }));
    expect(every.body.message).to.equal(`roles.rbac.authorization.k8s.io "every" is forbidden: ${held(name, ['{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'])}`);
  });

  it('counts what an aggregated ClusterRole aggregates, on both sides: what she holds through it, and what a binding of it grants', async () => {
    const { ns, name, as } = await restricted([{ apiGroups: [rbacGroup], resources: ['roles', 'rolebindings'], verbs: ['create'] }]);
    const label = `esc.example.com/${name}`;
    await admin.rbac.createClusterRole({ body: { metadata: { name: `agg-${name}` }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: 'true' } }] } } });
    await admin.rbac.createClusterRole({ body: { metadata: { name: `part-${name}`, labels: { [label]: 'true' } }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] } });
    await roleBinding(admin, ns, 'agg', { kind: 'ClusterRole', name: `agg-${name}` }, [user(name)]);
    await as.rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: 'secrets' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] } });
    await as.rbac.createNamespacedRoleBinding({ namespace: ns, body: bindingBody('agg-too', { kind: 'ClusterRole', name: `agg-${name}` }, [user('someone')]) });
    await admin.rbac.patchClusterRole(
      { name: `part-${name}`, body: { rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }, { apiGroups: ['apps'], resources: ['deployments'], verbs: ['delete'] }] } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // She holds the new rule too (through her binding), so a Role of it is hers to make.
    await as.rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: 'deployments' }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['delete'] }] } });
    // A binding of an aggregated role she does not hold is refused for what it aggregates (its own rules are none).
    await admin.rbac.createClusterRole({ body: { metadata: { name: `agg2-${name}` }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [`${label}-2`]: 'true' } }] } } });
    await admin.rbac.createClusterRole({ body: { metadata: { name: `part2-${name}`, labels: { [`${label}-2`]: 'true' } }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['delete'] }] } });
    const refused = await failure(as.rbac.createNamespacedRoleBinding({ namespace: ns, body: bindingBody('agg2', { kind: 'ClusterRole', name: `agg2-${name}` }, [user('someone')]) }));
    expect(refused.body.message).to.equal(`rolebindings.rbac.authorization.k8s.io "agg2" is forbidden: ${held(name, ['{APIGroups:[""], Resources:["secrets"], Verbs:["delete"]}'])}`);
  });

  it('refuses an aggregationRule to anyone short of every permission, even with no rules', async () => {
    const { name, as } = await restricted([]);
    await admin.rbac.createClusterRole({ body: { metadata: { name: `cr-creator-${name}` }, rules: [{ apiGroups: [rbacGroup], resources: ['clusterroles'], verbs: ['create'] }] } });
    await admin.rbac.createClusterRoleBinding({ body: bindingBody(`cr-creator-${name}`, { kind: 'ClusterRole', name: `cr-creator-${name}` }, [user(name)]) });
    const refused = await failure(as.rbac.createClusterRole({ body: { metadata: { name: `gather-${name}` }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { any: 'thing' } }] } } }));
    expect(refused.code).to.equal(403);
    expect(refused.body.message).to.equal(`clusterroles.rbac.authorization.k8s.io "gather-${name}" is forbidden: must have cluster-admin privileges to use the aggregationRule`);
  });

  it('answers a binding of a role that does not exist with 404, as kube storage names it', async () => {
    const { ns, as } = await restricted([{ apiGroups: [rbacGroup], resources: ['rolebindings'], verbs: ['create'] }]);
    const missing = await failure(as.rbac.createNamespacedRoleBinding({ namespace: ns, body: bindingBody('ghost', { kind: 'ClusterRole', name: 'no-such-role' }, [user('someone')]) }));
    expect(missing.code).to.equal(404);
    expect(missing.body.message).to.equal('clusterroles.rbac.authorization.k8s.io "no-such-role" not found');
    const role_ = await failure(as.rbac.createNamespacedRoleBinding({ namespace: ns, body: bindingBody('ghost', { kind: 'Role', name: 'no-such-role' }, [user('someone')]) }));
    expect(role_.body.message).to.equal('roles.rbac.authorization.k8s.io "no-such-role" not found');
  });

  it('checks updates and patches too: a user who may update bindings cannot add herself to a binding of a role she lacks', async () => {
    const { ns, name, as } = await restricted([{ apiGroups: [rbacGroup], resources: ['rolebindings', 'roles'], verbs: ['get', 'update', 'patch'] }]);
    await roleBinding(admin, ns, 'admins', { kind: 'ClusterRole', name: 'admin' }, [user('boss')]);
    const live = await as.rbac.readNamespacedRoleBinding({ namespace: ns, name: 'admins' });
    const put = await failure(as.rbac.replaceNamespacedRoleBinding({ namespace: ns, name: 'admins', body: { ...live, subjects: [...(live.subjects ?? []), { apiGroup: rbacGroup, ...user(name) }] } }));
    expect(put.code).to.equal(403);
    expect(put.body.message).to.match(/^rolebindings\.rbac\.authorization\.k8s\.io "admins" is forbidden: user "user-\d+" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n/);
    const patch = await failure(
      as.rbac.patchNamespacedRoleBinding({ namespace: ns, name: 'admins', body: [{ op: 'add', path: '/subjects/-', value: { apiGroup: rbacGroup, ...user(name) } }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch)),
    );
    expect(patch.code).to.equal(403);
    await role(admin, ns, 'secrets', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    const grown = await failure(
      as.rbac.patchNamespacedRole({ namespace: ns, name: 'secrets', body: { rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }] } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
    );
    expect(grown.body.message).to.equal(`roles.rbac.authorization.k8s.io "secrets" is forbidden: ${held(name, ['{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}'])}`);
    expect((await admin.rbac.readNamespacedRoleBinding({ namespace: ns, name: 'admins' })).subjects).to.have.length(1);
  });

  it('lets an update that changes only what the garbage collector changes (finalizers, ownerReferences) through unchecked', async () => {
    const { ns, name, as } = await restricted([{ apiGroups: [rbacGroup], resources: ['roles'], verbs: ['patch'] }]);
    await role(admin, ns, 'gc', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    // Untracked (managedFields cleared in a write), so a finalizer changes nothing else.
    await admin.rbac.patchNamespacedRole({ namespace: ns, name: 'gc', body: { metadata: { managedFields: [], labels: { untracked: 'true' } } } }, merge);
    const kept = await as.rbac.patchNamespacedRole({ namespace: ns, name: 'gc', body: { metadata: { finalizers: ['example.com/keep'] } } }, merge);
    expect(kept.metadata?.finalizers).to.deep.equal(['example.com/keep']);
    const labelled = await failure(as.rbac.patchNamespacedRole({ namespace: ns, name: 'gc', body: { metadata: { labels: { a: 'b' } } } }, merge));
    expect(labelled.body.message).to.equal(`roles.rbac.authorization.k8s.io "gc" is forbidden: ${held(name, ['{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'])}`);
  });

  it('refuses a change of roleRef with 422, on update and on patch, even from the admin', async () => {
    const ns = 'default';
    await admin.rbac.createNamespacedRoleBinding({ namespace: ns, body: bindingBody('fixed', { kind: 'ClusterRole', name: 'view' }, [user('someone')]) });
    const live = await admin.rbac.readNamespacedRoleBinding({ namespace: ns, name: 'fixed' });
    const put = await failure(admin.rbac.replaceNamespacedRoleBinding({ namespace: ns, name: 'fixed', body: { ...live, roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: 'edit' } } }));
    const message = 'RoleBinding.rbac.authorization.k8s.io "fixed" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef';
    expect(put.code).to.equal(422);
    expect(put.body).to.deep.include({ reason: 'Invalid', message });
    expect(put.body.details).to.deep.equal({
      name: 'fixed',
      group: rbacGroup,
      kind: 'RoleBinding',
      causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef', field: 'roleRef' }],
    });
    const patch = await failure(admin.rbac.patchNamespacedRoleBinding({ namespace: ns, name: 'fixed', body: { roleRef: { name: 'edit' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
    expect(patch).to.deep.include({ code: 422 });
    expect(patch.body.message).to.equal(message);
    await admin.rbac.createClusterRoleBinding({ body: bindingBody('fixed-cluster', { kind: 'ClusterRole', name: 'view' }, [user('someone')]) });
    const cluster = await failure(admin.rbac.patchClusterRoleBinding({ name: 'fixed-cluster', body: { roleRef: { kind: 'ClusterRole', name: 'edit' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
    expect(cluster.body.message).to.equal(
      'ClusterRoleBinding.rbac.authorization.k8s.io "fixed-cluster" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
    );
    // Its subjects may change.
    await admin.rbac.patchNamespacedRoleBinding({ namespace: ns, name: 'fixed', body: { subjects: [{ apiGroup: rbacGroup, kind: 'User', name: 'other' }] } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect((await admin.rbac.readNamespacedRoleBinding({ namespace: ns, name: 'fixed' })).roleRef.name).to.equal('view');
  });

  it('checks an impersonated user, not the one who impersonates', async () => {
    const { ns, name } = await restricted([{ apiGroups: [rbacGroup], resources: ['rolebindings'], verbs: ['create'] }]);
    const token = tokenOf(admin.kc);
    const res = await https(server, 'POST', `/apis/${rbacGroup}/v1/namespaces/${ns}/rolebindings`, { Authorization: `Bearer ${token}`, 'Impersonate-User': name }, bindingBody('as-her', { kind: 'ClusterRole', name: 'view' }, [user(name)]));
    expect(res.status).to.equal(403);
    expect(res.json().message).to.match(/^rolebindings\.rbac\.authorization\.k8s\.io "as-her" is forbidden: user "user-\d+" \(groups=\["system:authenticated"\]\) is attempting to grant/);
  });
});
