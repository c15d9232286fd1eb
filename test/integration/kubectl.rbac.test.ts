import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import type { ApiServer } from 'rxkube/testing';
import { start } from './apiserver.helpers.js';
import { describeKubectl, kubectlPath } from './kubectl.helpers.js';

/**
 * kubectl 1.32 against the embedded server with RBAC on (over HTTPS, since
 * kubectl sends a kubeconfig's token over TLS only): `auth can-i`, the RBAC
 * `create` commands, `create token`, refusals as kubectl prints them, and
 * `--as` impersonation. The tests run in order on one server: the first
 * creates the namespace `x` and its ServiceAccount `bot` that the others use.
 */


interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describeKubectl('kubectl against the embedded API server with RBAC', function () {
  this.timeout(60_000);
  let server: ApiServer;
  let dir: string;
  let adminConfig: string;
  const children: ChildProcess[] = [];

  before(async () => {
    server = await start({ rbac: true });
    dir = await mkdtemp(join(tmpdir(), 'rxkube-kubectl-rbac-'));
    adminConfig = join(dir, 'admin.kubeconfig');
    await server.writeKubeconfig(adminConfig);
  });
  after(async () => {
    for (const child of children) child.kill();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  function kubectl(kubeconfig: string, args: string[], stdin?: string): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn(kubectlPath, ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], { env: { PATH: process.env.PATH ?? '', HOME: dir } });
      children.push(child);
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin?.end(stdin ?? '');
    });
  }

  async function ok(kubeconfig: string, args: string[], stdin?: string): Promise<string> {
    const run = await kubectl(kubeconfig, args, stdin);
    expect(run.code, `kubectl ${args.join(' ')}: ${run.stderr}`).to.equal(0);
    return run.stdout;
  }

  const admin = (args: string[], stdin?: string): Promise<string> => ok(adminConfig, args, stdin);

  async function serviceAccountConfig(ns: string, name: string): Promise<string> {
    const path = join(dir, `${ns}-${name}.kubeconfig`);
    await writeFile(path, server.kubeconfigYamlFor({ serviceAccount: `${ns}/${name}` }));
    return path;
  }

  it('answers auth can-i yes for the admin, and no (exit 1) for a ServiceAccount, until a RoleBinding made with kubectl allows it', async () => {
    expect(await admin(['auth', 'can-i', 'delete', 'namespaces'])).to.equal('yes\n');
    await admin(['create', 'namespace', 'x']);
    expect(await admin(['create', 'serviceaccount', 'bot', '-n', 'x'])).to.equal('serviceaccount/bot created\n');
    const bot = await serviceAccountConfig('x', 'bot');
    const no = await kubectl(bot, ['auth', 'can-i', 'list', 'pods', '-n', 'x']);
    expect(no).to.deep.include({ code: 1, stdout: 'no\n' });
    const refused = await kubectl(bot, ['get', 'pods', '-n', 'x']);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.equal('Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:x:bot" cannot list resource "pods" in API group "" in the namespace "x"\n');
    expect(await admin(['create', 'rolebinding', 'bot-view', '--clusterrole=view', '--serviceaccount=x:bot', '-n', 'x'])).to.equal('rolebinding.rbac.authorization.k8s.io/bot-view created\n');
    expect(await ok(bot, ['auth', 'can-i', 'list', 'pods', '-n', 'x'])).to.equal('yes\n');
    expect(await ok(bot, ['get', 'pods', '-n', 'x'])).to.equal('');
    // Its kubeconfig's context is in its own namespace, as a Pod's ServiceAccount is.
    expect((await kubectl(bot, ['get', 'pods'])).stderr).to.equal('No resources found in x namespace.\n');
    expect((await kubectl(bot, ['auth', 'can-i', 'create', 'pods', '-n', 'x'])).stdout).to.equal('no\n');
  });

  it('creates Roles with subresources and resourceNames, and can-i answers by them', async () => {
    expect(await admin(['create', 'role', 'scaler', '-n', 'x', '--verb=get,update', '--resource=deployments.apps/scale', '--resource-name=web'])).to.equal('role.rbac.authorization.k8s.io/scaler created\n');
    await admin(['create', 'rolebinding', 'scaler', '--role=scaler', '--serviceaccount=x:bot', '-n', 'x']);
    const bot = await serviceAccountConfig('x', 'bot');
    expect(await ok(bot, ['auth', 'can-i', 'update', 'deployments.apps/web', '--subresource=scale', '-n', 'x'])).to.equal('yes\n');
    expect((await kubectl(bot, ['auth', 'can-i', 'update', 'deployments.apps/other', '--subresource=scale', '-n', 'x'])).stdout).to.equal('no\n');
    expect((await kubectl(bot, ['auth', 'can-i', 'update', 'deployments.apps/web', '-n', 'x'])).stdout).to.equal('no\n');
  });

  it('answers auth can-i for whom the admin impersonates with --as and --as-group', async () => {
    await admin(['create', 'clusterrole', 'ns-reader', '--verb=get,list,watch', '--resource=namespaces']);
    await admin(['create', 'clusterrolebinding', 'ops-ns', '--clusterrole=ns-reader', '--group=ops']);
    expect(await admin(['auth', 'can-i', 'list', 'namespaces', '--as=alice', '--as-group=ops'])).to.equal('yes\n');
    expect((await kubectl(adminConfig, ['auth', 'can-i', 'list', 'namespaces', '--as=alice'])).stdout).to.equal('no\n');
    expect(await admin(['auth', 'can-i', 'list', 'pods', '-n', 'x', '--as=system:serviceaccount:x:bot'])).to.equal('yes\n');
    const bot = await serviceAccountConfig('x', 'bot');
    const refused = await kubectl(bot, ['get', 'pods', '-n', 'x', '--as=alice']);
    expect(refused.stderr).to.contain('users "alice" is forbidden: User "system:serviceaccount:x:bot" cannot impersonate resource "users" in API group "" at the cluster scope');
  });

  it('lists what a ServiceAccount may do with auth can-i --list', async () => {
    const bot = await serviceAccountConfig('x', 'bot');
    const out = await ok(bot, ['auth', 'can-i', '--list', '-n', 'x']);
    expect(out).to.match(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs\n/);
    expect(out).to.match(/\ndeployments\.apps\/scale\s+\[\]\s+\[web\]\s+\[get update\]\n/);
    expect(out).to.match(/\npods\s+\[\]\s+\[\]\s+\[get list watch\]\n/);
    expect(out).to.match(/\n\s+\[\/healthz\]\s+\[\]\s+\[get\]\n/);
  });

  it('says who is asking with auth whoami', async () => {
    const bot = await serviceAccountConfig('x', 'bot');
    expect(await ok(bot, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username} {.status.userInfo.groups}'])).to.equal(
      'system:serviceaccount:x:bot ["system:serviceaccounts","system:serviceaccounts:x","system:authenticated"]',
    );
    expect(await admin(['auth', 'whoami', '--as=alice', '--as-group=ops', '-o', 'jsonpath={.status.userInfo.username} {.status.userInfo.groups}'])).to.equal('alice ["ops","system:authenticated"]');
  });

  it('issues a token with kubectl create token that kubectl can use', async () => {
    const token = (await admin(['create', 'token', 'bot', '-n', 'x', '--duration=20m'])).trim();
    expect(token.split('.')).to.have.length(3);
    expect(await ok(adminConfig, ['--token', token, 'auth', 'can-i', 'list', 'pods', '-n', 'x'])).to.equal('yes\n');
    expect((await kubectl(adminConfig, ['--token', token, 'auth', 'can-i', 'list', 'secrets', '-n', 'x'])).stdout).to.equal('no\n');
    const bad = await kubectl(adminConfig, ['--token', 'made-up', 'get', 'pods']);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.contain('error: You must be logged in to the server (Unauthorized)');
  });

  it('refuses kubectl create rolebinding and create role by a user who may create them but lacks what they grant, in kube words', async () => {
    await admin(['create', 'role', 'rbac-writer', '-n', 'x', '--verb=create', '--resource=rolebindings.rbac.authorization.k8s.io,roles.rbac.authorization.k8s.io']);
    await admin(['create', 'rolebinding', 'rbac-writer', '--role=rbac-writer', '--user=mallory', '-n', 'x']);
    const mallory = join(dir, 'mallory.kubeconfig');
    await writeFile(mallory, server.kubeconfigYamlFor({ user: 'mallory' }));
    const bind = await kubectl(mallory, ['create', 'rolebinding', 'mine', '--clusterrole=cluster-admin', '--user=mallory', '-n', 'x']);
    expect(bind.code).to.equal(1);
    expect(bind.stderr).to.equal(
      'error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "mine" is forbidden: user "mallory" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n{NonResourceURLs:["*"], Verbs:["*"]}\n',
    );
    const all = await kubectl(mallory, ['create', 'role', 'all', '-n', 'x', '--verb=*', '--resource=secrets']);
    expect(all.code).to.equal(1);
    expect(all.stderr).to.contain('roles.rbac.authorization.k8s.io "all" is forbidden: user "mallory" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}');
    expect((await kubectl(mallory, ['get', 'secrets', '-n', 'x'])).code).to.equal(1);
  });

  it('refuses kubectl apply that changes a binding\'s roleRef, as kube does', async () => {
    const binding = (role: string): string =>
      stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'fixed', namespace: 'x' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: 'x' }] });
    expect(await admin(['apply', '-f', '-'], binding('view'))).to.equal('rolebinding.rbac.authorization.k8s.io/fixed created\n');
    const changed = await kubectl(adminConfig, ['apply', '-f', '-'], binding('edit'));
    expect(changed.code).to.equal(1);
    expect(changed.stderr).to.equal(
      'The RoleBinding "fixed" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef\n',
    );
  });

  it('applies RBAC objects from YAML and aggregates a ClusterRole kubectl applied', async () => {
    const docs = [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'widgets-all' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/widgets': 'true' } }] } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'widgets-read', labels: { 'example.com/widgets': 'true' } },
        rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list'] }],
      },
    ];
    expect(await admin(['apply', '-f', '-'], docs.map((d) => stringify(d)).join('---\n'))).to.equal(
      'clusterrole.rbac.authorization.k8s.io/widgets-all created\nclusterrole.rbac.authorization.k8s.io/widgets-read created\n',
    );
    expect(await admin(['get', 'clusterrole', 'widgets-all', '-o', 'jsonpath={.rules[0].resources[0]} {.rules[0].verbs}'])).to.equal('widgets ["get","list"]');
  });
});

describeKubectl('kubectl auth can-i against the embedded API server without RBAC', function () {
  this.timeout(60_000);
  let server: ApiServer;
  let dir: string;
  const children: ChildProcess[] = [];

  before(async () => {
    server = await start();
    dir = await mkdtemp(join(tmpdir(), 'rxkube-kubectl-norbac-'));
    await server.writeKubeconfig(join(dir, 'kubeconfig'));
  });
  after(async () => {
    for (const child of children) child.kill();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('says yes to everything, as kube with AlwaysAllow does', async () => {
    const run = await new Promise<Run>((resolve, reject) => {
      const child = spawn(kubectlPath, ['--kubeconfig', join(dir, 'kubeconfig'), '--cache-dir', join(dir, 'cache'), 'auth', 'can-i', 'delete', 'secrets', '-A'], { env: { PATH: process.env.PATH ?? '', HOME: dir } });
      children.push(child);
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr: '' }));
    });
    expect(run).to.deep.include({ code: 0, stdout: 'yes\n' });
  });
});
