import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, Watch, type V1ClusterRole } from '@kubernetes/client-node';
import { expect } from 'chai';
import { runCli } from '../../src/cli.js';
import type { ApiServer } from 'rxkube/testing';
import { eventually, failure, start } from './apiserver.helpers.js';
import { clientsFor, clientsOf, https, role, roleBinding, serviceAccount, tokenOf, type SubjectClients } from './rbac.helpers.js';

/**
 * RBAC in the embedded server (`startApiServer({ rbac: true })`), through
 * client-node over HTTPS: who may do what, decided by the Roles and
 * bindings stored at the moment of each request, and refused in kube's words.
 */

describe('embedded API server: RBAC', function () {
  this.timeout(20_000);
  let server: ApiServer;
  let admin: SubjectClients;
  let namespaces = 0;

  before(async () => {
    server = await start({ rbac: true });
    admin = clientsOf(server.kubeConfig());
  });
  after(async () => {
    await server.close();
  });

  /** A fresh namespace with a ServiceAccount `bot` in it, and clients that authenticate as that account. */
  async function botIn(prefix: string): Promise<{ ns: string; bot: SubjectClients; user: string }> {
    const ns = `${prefix}-${++namespaces}`;
    await admin.core.createNamespace({ body: { metadata: { name: ns } } });
    await admin.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'bot' } } });
    return { ns, bot: clientsFor(server, { serviceAccount: `${ns}/bot` }), user: `system:serviceaccount:${ns}:bot` };
  }

  it('serves HTTPS and lets the default kubeconfig, a system:masters admin, do anything', async () => {
    expect(server.url).to.match(/^https:\/\//);
    const roles = await admin.rbac.listClusterRole();
    expect(roles.items.map((r) => r.metadata?.name)).to.include.members(['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer']);
    const bindings = await admin.rbac.listClusterRoleBinding();
    const masters = bindings.items.find((b) => b.metadata?.name === 'cluster-admin');
    expect(masters?.subjects).to.deep.equal([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' }]);
    await admin.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'by-admin' } } });
    await admin.core.deleteNamespacedConfigMap({ namespace: 'default', name: 'by-admin' });
  });

  it('answers 401 Unauthorized without a token, with a token it never issued, and with the token of a deleted ServiceAccount', async () => {
    const none = await https(server, 'GET', '/api/v1/namespaces');
    expect(none.status).to.equal(401);
    expect(none.json()).to.deep.equal({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    const kc = server.kubeConfig();
    const forged = clientsOf(kc);
    (kc.getCurrentUser() as { token: string }).token = 'not-a-token-of-this-server';
    expect((await failure(forged.core.listNamespace())).code).to.equal(401);
    const { ns, bot } = await botIn('gone');
    const token = tokenOf(bot.kc);
    // The token works while its ServiceAccount exists (a 403 is authenticated) ...
    expect((await https(server, 'GET', `/api/v1/namespaces/${ns}/pods`, { Authorization: `Bearer ${token}` })).status).to.equal(403);
    await admin.core.deleteNamespacedServiceAccount({ namespace: ns, name: 'bot' });
    // ... and not after, not even once an account of the same name is back.
    await admin.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'bot' } } });
    expect((await failure(bot.core.listNamespacedPod({ namespace: ns }))).code).to.equal(401);
    const tampered = `${token.slice(0, -4)}AAAA`;
    expect((await https(server, 'GET', '/api', { Authorization: `Bearer ${tampered}` })).status).to.equal(401);
  });

  it('denies a ServiceAccount a list in kube words, then allows it once a RoleBinding exists, and denies it again once it is gone', async () => {
    const { ns, bot, user } = await botIn('x');
    const denied = await failure(bot.core.listNamespacedPod({ namespace: ns }));
    expect(denied.code).to.equal(403);
    expect(denied.body).to.deep.equal({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `pods is forbidden: User "${user}" cannot list resource "pods" in API group "" in the namespace "${ns}"`,
      reason: 'Forbidden',
      details: { kind: 'pods' },
      code: 403,
    });
    await roleBinding(admin, ns, 'bot-view', { kind: 'ClusterRole', name: 'view' }, [serviceAccount(ns, 'bot')]);
    expect((await bot.core.listNamespacedPod({ namespace: ns })).items).to.deep.equal([]);
    // The binding is in `ns` only.
    expect((await failure(bot.core.listNamespacedPod({ namespace: 'default' }))).body.message).to.equal(
      `pods is forbidden: User "${user}" cannot list resource "pods" in API group "" in the namespace "default"`,
    );
    await admin.rbac.deleteNamespacedRoleBinding({ namespace: ns, name: 'bot-view' });
    expect((await failure(bot.core.listNamespacedPod({ namespace: ns }))).code).to.equal(403);
  });

  it('authorizes watch separately from list', async () => {
    const { ns, bot, user } = await botIn('watch');
    await role(admin, ns, 'list-only', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }]);
    await roleBinding(admin, ns, 'list-only', { kind: 'Role', name: 'list-only' }, [serviceAccount(ns, 'bot')]);
    await bot.core.listNamespacedConfigMap({ namespace: ns });
    const refused = await https(server, 'GET', `/api/v1/namespaces/${ns}/configmaps?watch=true`, { Authorization: `Bearer ${tokenOf(bot.kc)}` });
    expect(refused.status).to.equal(403);
    expect(refused.json().message).to.equal(`configmaps is forbidden: User "${user}" cannot watch resource "configmaps" in API group "" in the namespace "${ns}"`);
    let ended: unknown = 'open';
    await new Watch(bot.kc).watch(`/api/v1/namespaces/${ns}/configmaps`, {}, () => {}, (err) => (ended = err));
    await eventually(() => ended !== 'open', 5000, 'the refused watch to end');
    expect(String(ended)).to.match(/Forbidden/);

    await admin.rbac.patchNamespacedRole({
      namespace: ns,
      name: 'list-only',
      body: [{ op: 'replace', path: '/rules/0/verbs', value: ['list', 'watch'] }],
    });
    const seen: string[] = [];
    const watching = await new Watch(bot.kc).watch(`/api/v1/namespaces/${ns}/configmaps`, {}, (type, obj: { metadata?: { name?: string } }) => seen.push(`${type} ${obj.metadata?.name}`), () => {});
    try {
      await eventually(() => server.openWatches() > 0, 5000, 'the watch to open');
      await admin.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'c1' } } });
      await eventually(() => seen.includes('ADDED c1'), 5000, 'the ADDED event');
    } finally {
      watching.abort();
    }
  });

  it('authorizes subresources on their own: deployments/scale and pods/status', async () => {
    const { ns, bot, user } = await botIn('sub');
    await admin.apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
      },
    });
    await admin.core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } });
    await role(admin, ns, 'scaler', [
      { apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['get', 'update', 'patch'] },
      { apiGroups: [''], resources: ['pods/status'], verbs: ['get', 'patch'] },
    ]);
    await roleBinding(admin, ns, 'scaler', { kind: 'Role', name: 'scaler' }, [serviceAccount(ns, 'bot')]);
    const scale = await bot.apps.readNamespacedDeploymentScale({ namespace: ns, name: 'web' });
    expect(scale.spec?.replicas).to.equal(1);
    const main = await failure(bot.apps.readNamespacedDeployment({ namespace: ns, name: 'web' }));
    expect(main.body.message).to.equal(`deployments.apps "web" is forbidden: User "${user}" cannot get resource "deployments" in API group "apps" in the namespace "${ns}"`);
    expect(main.body.details).to.deep.equal({ name: 'web', group: 'apps', kind: 'deployments' });
    await bot.core.patchNamespacedPodStatus({ namespace: ns, name: 'p', body: [{ op: 'add', path: '/status/message', value: 'hi' }] });
    const pod = await failure(bot.core.patchNamespacedPod({ namespace: ns, name: 'p', body: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }] }));
    expect(pod.body.message).to.equal(`pods "p" is forbidden: User "${user}" cannot patch resource "pods" in API group "" in the namespace "${ns}"`);
    const status = await failure(bot.core.replaceNamespacedPodStatus({ namespace: ns, name: 'p', body: { metadata: { name: 'p' } } }));
    expect(status.body.message).to.equal(`pods "p" is forbidden: User "${user}" cannot update resource "pods/status" in API group "" in the namespace "${ns}"`);
  });

  it('limits a rule with resourceNames to the objects it names: get, and list or watch of one name by fieldSelector', async () => {
    const { ns, bot, user } = await botIn('names');
    for (const name of ['mine', 'theirs']) await admin.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name } } });
    await role(admin, ns, 'one', [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['mine'], verbs: ['get', 'list', 'delete'] }]);
    await roleBinding(admin, ns, 'one', { kind: 'Role', name: 'one' }, [serviceAccount(ns, 'bot')]);
    expect((await bot.core.readNamespacedConfigMap({ namespace: ns, name: 'mine' })).metadata?.name).to.equal('mine');
    expect((await failure(bot.core.readNamespacedConfigMap({ namespace: ns, name: 'theirs' }))).body.message).to.equal(
      `configmaps "theirs" is forbidden: User "${user}" cannot get resource "configmaps" in API group "" in the namespace "${ns}"`,
    );
    expect((await failure(bot.core.listNamespacedConfigMap({ namespace: ns }))).code).to.equal(403);
    const one = await bot.core.listNamespacedConfigMap({ namespace: ns, fieldSelector: 'metadata.name=mine' });
    expect(one.items.map((c) => c.metadata?.name)).to.deep.equal(['mine']);
    expect((await failure(bot.core.deleteCollectionNamespacedConfigMap({ namespace: ns }))).body.message).to.equal(
      `configmaps is forbidden: User "${user}" cannot deletecollection resource "configmaps" in API group "" in the namespace "${ns}"`,
    );
    await bot.core.deleteNamespacedConfigMap({ namespace: ns, name: 'mine' });
  });

  it('matches * in verbs, groups and resources, and */subresource', async () => {
    const { ns, bot, user } = await botIn('wild');
    await role(admin, ns, 'apps-all', [
      { apiGroups: ['apps'], resources: ['*'], verbs: ['*'] },
      { apiGroups: ['*'], resources: ['*/status'], verbs: ['get'] },
    ]);
    await roleBinding(admin, ns, 'apps-all', { kind: 'Role', name: 'apps-all' }, [serviceAccount(ns, 'bot')]);
    await bot.apps.listNamespacedDeployment({ namespace: ns });
    await bot.apps.deleteCollectionNamespacedDeployment({ namespace: ns });
    await admin.core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } });
    await bot.core.readNamespacedPodStatus({ namespace: ns, name: 'p' });
    expect((await failure(bot.core.readNamespacedPod({ namespace: ns, name: 'p' }))).body.message).to.equal(
      `pods "p" is forbidden: User "${user}" cannot get resource "pods" in API group "" in the namespace "${ns}"`,
    );
  });

  it('grants through ClusterRoleBindings to the groups of ServiceAccounts, words cluster-scope refusals, and lets a RoleBinding grant its own Namespace', async () => {
    const { ns, bot, user } = await botIn('groups');
    const refused = await failure(bot.core.listNamespace());
    expect(refused.body.message).to.equal(`namespaces is forbidden: User "${user}" cannot list resource "namespaces" in API group "" at the cluster scope`);
    const own = await failure(bot.core.readNamespace({ name: ns }));
    expect(own.body.message).to.equal(`namespaces "${ns}" is forbidden: User "${user}" cannot get resource "namespaces" in API group "" in the namespace "${ns}"`);
    await roleBinding(admin, ns, 'view', { kind: 'ClusterRole', name: 'view' }, [{ kind: 'Group', name: `system:serviceaccounts:${ns}` }]);
    expect((await bot.core.readNamespace({ name: ns })).metadata?.name).to.equal(ns);
    expect((await failure(bot.core.readNamespace({ name: 'default' }))).code).to.equal(403);
    await admin.rbac.createClusterRole({ body: { metadata: { name: `${ns}-ns-reader` }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['list'] }] } });
    await admin.rbac.createClusterRoleBinding({
      body: {
        metadata: { name: `${ns}-ns-reader` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-ns-reader` },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:serviceaccounts' }],
      },
    });
    expect((await bot.core.listNamespace()).items.map((n) => n.metadata?.name)).to.include(ns);
  });

  it('authorizes users and their groups, from kubeConfigFor({ user, groups })', async () => {
    const alice = clientsFor(server, { user: 'alice', groups: ['devs'] });
    const refused = await failure(alice.core.listNamespacedSecret({ namespace: 'default' }));
    expect(refused.body.message).to.equal('secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "default"');
    await roleBinding(admin, 'default', 'devs-edit', { kind: 'ClusterRole', name: 'edit' }, [{ kind: 'Group', name: 'devs' }]);
    await alice.core.listNamespacedSecret({ namespace: 'default' });
    await roleBinding(admin, 'default', 'bob', { kind: 'ClusterRole', name: 'view' }, [{ kind: 'User', name: 'bob' }]);
    const bob = clientsFor(server, { user: 'bob' });
    await bob.core.listNamespacedPod({ namespace: 'default' });
    expect((await failure(bob.core.listNamespacedSecret({ namespace: 'default' }))).code).to.equal(403);
  });

  it('refuses a non-resource URL by path, and allows discovery, openapi, version and health to every authenticated user', async () => {
    const { ns, bot, user } = await botIn('urls');
    const auth = { Authorization: `Bearer ${tokenOf(bot.kc)}` };
    for (const path of ['/api', '/api/v1', '/apis', '/apis/apps/v1', '/version', '/healthz', '/readyz', '/openapi/v3']) {
      expect((await https(server, 'GET', path, auth)).status, path).to.equal(200);
    }
    const metrics = await https(server, 'GET', '/metrics', auth);
    expect(metrics.status).to.equal(403);
    expect(metrics.json()).to.deep.include({ message: `forbidden: User "${user}" cannot get path "/metrics"`, reason: 'Forbidden', details: {} });
    await admin.rbac.createClusterRole({ body: { metadata: { name: `${ns}-metrics` }, rules: [{ nonResourceURLs: ['/metrics', '/debug/*'], verbs: ['get'] }] } });
    await admin.rbac.createClusterRoleBinding({
      body: { metadata: { name: `${ns}-metrics` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-metrics` }, subjects: [serviceAccount(ns, 'bot')] },
    });
    // Allowed now, and then not found: this server serves no /metrics.
    expect((await https(server, 'GET', '/metrics', auth)).status).to.equal(404);
    expect((await https(server, 'GET', '/debug/pprof', auth)).status).to.equal(404);
    expect((await https(server, 'POST', '/debug/pprof', auth)).status).to.equal(403);
  });

  it('names a binding whose role is missing in the reason of the refusal', async () => {
    const { ns, bot, user } = await botIn('missing');
    await roleBinding(admin, ns, 'dangling', { kind: 'Role', name: 'nowhere' }, [serviceAccount(ns, 'bot')]);
    const refused = await failure(bot.core.listNamespacedPod({ namespace: ns }));
    expect(refused.body.message).to.equal(
      `pods is forbidden: User "${user}" cannot list resource "pods" in API group "" in the namespace "${ns}": RBAC: role.rbac.authorization.k8s.io "nowhere" not found`,
    );
    await role(admin, ns, 'nowhere', [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]);
    await bot.core.listNamespacedPod({ namespace: ns });
  });

  it('aggregates ClusterRoles: the selected roles rules, kept up to date as they change, appear and go', async () => {
    const label = 'rbac.example.com/aggregate-to-monitoring';
    await admin.rbac.createClusterRole({ body: { metadata: { name: 'monitoring' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: 'true' } }] } } });
    const rulesOf = async (name: string): Promise<V1ClusterRole['rules']> => (await admin.rbac.readClusterRole({ name })).rules;
    expect((await rulesOf('monitoring')) ?? []).to.deep.equal([]);
    const pods = { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] };
    const services = { apiGroups: [''], resources: ['services'], verbs: ['get', 'list'] };
    await admin.rbac.createClusterRole({ body: { metadata: { name: 'monitoring-pods', labels: { [label]: 'true' } }, rules: [pods] } });
    await admin.rbac.createClusterRole({ body: { metadata: { name: 'monitoring-services', labels: { [label]: 'true' } }, rules: [services, pods] } });
    await admin.rbac.createClusterRole({ body: { metadata: { name: 'unrelated', labels: { [label]: 'false' } }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] } });
    expect(await rulesOf('monitoring')).to.deep.equal([pods, services]);

    const { ns, bot } = await botIn('agg');
    await roleBinding(admin, ns, 'monitoring', { kind: 'ClusterRole', name: 'monitoring' }, [serviceAccount(ns, 'bot')]);
    await bot.core.listNamespacedService({ namespace: ns });
    const endpoints = { apiGroups: [''], resources: ['endpoints'], verbs: ['list'] };
    await admin.rbac.patchClusterRole({ name: 'monitoring-services', body: [{ op: 'replace', path: '/rules', value: [endpoints] }] });
    expect(await rulesOf('monitoring')).to.deep.equal([pods, endpoints]);
    expect((await failure(bot.core.listNamespacedService({ namespace: ns }))).code).to.equal(403);
    await admin.rbac.deleteClusterRole({ name: 'monitoring-pods' });
    expect(await rulesOf('monitoring')).to.deep.equal([endpoints]);
    // Rules written to an aggregated role are the controller's to replace.
    await admin.rbac.patchClusterRole({ name: 'monitoring', body: [{ op: 'replace', path: '/rules', value: [pods] }] });
    expect(await rulesOf('monitoring')).to.deep.equal([endpoints]);
  });

  it('aggregates kube default roles: view into edit into admin', async () => {
    const view = (await admin.rbac.readClusterRole({ name: 'view' })).rules ?? [];
    const edit = (await admin.rbac.readClusterRole({ name: 'edit' })).rules ?? [];
    const adminRole = (await admin.rbac.readClusterRole({ name: 'admin' })).rules ?? [];
    expect(view).to.deep.include({ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] });
    expect(edit).to.include.deep.members(view);
    expect(adminRole).to.include.deep.members(edit);
    expect(adminRole).to.deep.include({ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['get', 'list', 'watch', 'create', 'delete', 'deletecollection', 'patch', 'update'] });
  });

  it('answers SelfSubjectAccessReviews, SubjectAccessReviews and LocalSubjectAccessReviews', async () => {
    const { ns, bot, user } = await botIn('review');
    const ask = async (who: SubjectClients, verb: string): Promise<unknown> =>
      (await who.authz.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { namespace: ns, verb, resource: 'pods' } } } })).status;
    expect(await ask(bot, 'list')).to.deep.equal({ allowed: false });
    expect(await ask(admin, 'list')).to.deep.equal({ allowed: true });
    await roleBinding(admin, ns, 'view', { kind: 'ClusterRole', name: 'view' }, [serviceAccount(ns, 'bot')]);
    expect(await ask(bot, 'list')).to.deep.equal({ allowed: true, reason: `RBAC: allowed by RoleBinding "view/${ns}" of ClusterRole "view" to ServiceAccount "bot/${ns}"` });
    const sar = await admin.authz.createSubjectAccessReview({
      body: { spec: { user, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'], resourceAttributes: { namespace: ns, verb: 'delete', resource: 'pods' } } },
    });
    expect(sar.status).to.deep.equal({ allowed: false });
    const local = await admin.authz.createNamespacedLocalSubjectAccessReview({ namespace: ns, body: { spec: { user, resourceAttributes: { verb: 'get', resource: 'pods' } } } });
    expect(local.status?.allowed).to.equal(true);
    const nonResource = await bot.authz.createSelfSubjectAccessReview({ body: { spec: { nonResourceAttributes: { path: '/metrics', verb: 'get' } } } });
    expect(nonResource.status?.allowed).to.equal(false);
    // Only an admin (or whoever RBAC allows) may ask about others.
    expect((await failure(bot.authz.createSubjectAccessReview({ body: { spec: { user: 'x', resourceAttributes: { verb: 'get', resource: 'pods' } } } }))).body.message).to.equal(
      `subjectaccessreviews.authorization.k8s.io is forbidden: User "${user}" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope`,
    );
    const bad = await failure(bot.authz.createSelfSubjectAccessReview({ body: { spec: {} } }));
    expect(bad.code).to.equal(422);
    expect(bad.body.message).to.equal(
      'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
    // Reviews are only created: a list is refused (403 before anything else), or, for whom RBAC allows it, not allowed (405).
    expect((await https(server, 'GET', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { Authorization: `Bearer ${tokenOf(bot.kc)}` })).status).to.equal(403);
    expect((await https(server, 'GET', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { Authorization: `Bearer ${tokenOf(admin.kc)}` })).status).to.equal(405);
  });

  it('issues ServiceAccount tokens by TokenRequest, checking the requested lifetime', async () => {
    const { ns } = await botIn('tokens');
    const issued = await admin.core.createNamespacedServiceAccountToken({ namespace: ns, name: 'bot', body: { spec: { audiences: [], expirationSeconds: 600 } } });
    const token = issued.status?.token ?? '';
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(claims).to.deep.include({ sub: `system:serviceaccount:${ns}:bot`, iss: 'https://kubernetes.default.svc.cluster.local' });
    expect((claims.exp as number) - (claims.iat as number)).to.equal(600);
    const me = await https(server, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { Authorization: `Bearer ${token}` }, { spec: { resourceAttributes: { namespace: ns, verb: 'get', resource: 'pods' } } });
    expect(me.status).to.equal(201);
    const short = await failure(admin.core.createNamespacedServiceAccountToken({ namespace: ns, name: 'bot', body: { spec: { audiences: [], expirationSeconds: 60 } } }));
    expect(short.body.message).to.equal('TokenRequest.authentication.k8s.io "bot" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes');
    expect((await failure(admin.core.createNamespacedServiceAccountToken({ namespace: ns, name: 'nobody', body: { spec: { audiences: [] } } }))).code).to.equal(404);
    const other = await admin.core.createNamespacedServiceAccountToken({ namespace: ns, name: 'bot', body: { spec: { audiences: ['https://vault.example.com'] } } });
    // A token for another audience is not one this server takes.
    expect((await https(server, 'GET', '/api', { Authorization: `Bearer ${other.status?.token ?? ''}` })).status).to.equal(401);
    expect(() => server.kubeConfigFor({ serviceAccount: `${ns}/nobody` })).to.throw(`the ServiceAccount ${ns}/nobody does not exist`);
  });

  it('answers SelfSubjectReviews (who am I) and TokenReviews (whom does this token name)', async () => {
    const { ns, bot, user } = await botIn('whoami');
    const me = await bot.authn.createSelfSubjectReview({ body: {} });
    expect(me.status?.userInfo?.username).to.equal(user);
    expect(me.status?.userInfo?.groups).to.deep.equal(['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated']);
    expect((await admin.authn.createSelfSubjectReview({ body: {} })).status?.userInfo).to.deep.equal({ username: 'rxkube-admin', groups: ['system:masters', 'system:authenticated'] });
    const review = await admin.authn.createTokenReview({ body: { spec: { token: tokenOf(bot.kc) } } });
    expect(review.status).to.deep.include({ authenticated: true, audiences: ['https://kubernetes.default.svc.cluster.local'] });
    expect(review.status?.user?.username).to.equal(user);
    expect((await admin.authn.createTokenReview({ body: { spec: { token: 'nope' } } })).status?.authenticated).to.equal(undefined);
    // Token reviews are for whom system:auth-delegator (or more) is bound to.
    expect((await failure(bot.authn.createTokenReview({ body: { spec: { token: 'nope' } } }))).code).to.equal(403);
    await admin.rbac.createClusterRoleBinding({
      body: { metadata: { name: `${ns}-delegator` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' }, subjects: [serviceAccount(ns, 'bot')] },
    });
    expect((await bot.authn.createTokenReview({ body: { spec: { token: tokenOf(admin.kc) } } })).status?.user?.username).to.equal('rxkube-admin');
  });

  it('lets a user impersonate only whom RBAC allows, and then acts as them', async () => {
    const { ns, bot, user } = await botIn('imp');
    const asBot = { 'Impersonate-User': user, Authorization: `Bearer ${tokenOf(admin.kc)}` };
    expect((await https(server, 'GET', `/api/v1/namespaces/${ns}/pods`, asBot)).json().message).to.equal(
      `pods is forbidden: User "${user}" cannot list resource "pods" in API group "" in the namespace "${ns}"`,
    );
    const refused = await https(server, 'GET', `/api/v1/namespaces/${ns}/pods`, { 'Impersonate-User': 'alice', Authorization: `Bearer ${tokenOf(bot.kc)}` });
    expect(refused.status).to.equal(403);
    expect(refused.json().message).to.equal(`users "alice" is forbidden: User "${user}" cannot impersonate resource "users" in API group "" at the cluster scope`);
    const groups = await https(server, 'GET', `/api/v1/namespaces/${ns}/pods`, { 'Impersonate-User': 'carol', 'Impersonate-Group': 'system:masters', Authorization: `Bearer ${tokenOf(admin.kc)}` });
    expect(groups.status).to.equal(200);
  });
});

describe('embedded API server: RBAC off (the default)', () => {
  let server: ApiServer;
  before(async () => {
    server = await start();
  });
  after(async () => {
    await server.close();
  });

  it('serves plain HTTP, lets any request do anything, and says so to access reviews', async () => {
    expect(server.url).to.match(/^http:\/\//);
    const kc = server.kubeConfig();
    const anyone = clientsOf(kc);
    await anyone.core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'bot' } } });
    const bot = clientsFor(server, { serviceAccount: 'default/bot' });
    await bot.core.listNamespacedSecret({ namespace: 'default' });
    const review = await bot.authz.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { verb: 'delete', resource: 'nodes' } } } });
    expect(review.status).to.deep.equal({ allowed: true });
    expect((await anyone.rbac.listClusterRole()).items).to.deep.equal([]);
  });
});

describe('rxkube apiserver --rbac', () => {
  it('serves HTTPS with RBAC on, and writes a kubeconfig of a system:masters admin', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rxkube-cli-rbac-'));
    const path = join(dir, 'kubeconfig');
    const out: string[] = [];
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const exit = runCli(['apiserver', '--port', '0', '--kubeconfig', path, '--rbac'], { out: (l) => out.push(l), err: (l) => out.push(l), untilStopped: () => stopped });
    try {
      const url = await eventually(() => /listening on (https:\/\/\S+)/.exec(out.join('\n'))?.[1]);
      expect(out.join('\n')).to.contain('RBAC is on');
      const kc = new KubeConfig();
      kc.loadFromString(await readFile(path, 'utf8'));
      const admin = clientsOf(kc);
      const review = await admin.authz.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { verb: '*', group: '*', resource: '*' } } } });
      expect(review.status?.allowed).to.equal(true);
      expect((await https({ url }, 'GET', '/api/v1/namespaces')).status).to.equal(401);
    } finally {
      stop();
      expect(await exit).to.equal(0);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
