import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import type { ApiServer } from 'rxkube/testing';
import { start } from './apiserver.helpers.js';
import { describeKubectl, kubectlIn, type Kubectl, type KubectlRun } from './kubectl.helpers.js';

/**
 * `npx rxkube manifests <module>` as a user runs it (a child process through
 * bin/rxkube.js), piped into the real `kubectl apply --dry-run=server`
 * against the embedded server with RBAC on.
 */

const root = new URL('../..', import.meta.url).pathname;

/** `rxkube <args>` in a child process, from the repository's root. */
export function rxkube(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<KubectlRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin/rxkube.js'), ...args], { cwd: root, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describeKubectl('rxkube manifests | kubectl apply --dry-run=server', function () {
  this.timeout(180_000);
  let server: ApiServer;
  let dir: string;
  let kubectl: Kubectl;

  before(async () => {
    server = await start({ rbac: true });
    dir = await mkdtemp(join(tmpdir(), 'rxkube-manifests-'));
    const config = join(dir, 'admin.kubeconfig');
    await server.writeKubeconfig(config);
    kubectl = kubectlIn(dir, config);
  });
  after(async () => {
    kubectl?.stop();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the podautoscaler\'s manifests, which the server accepts as they are, with a Role that names every verb and resource', async () => {
    const printed = await rxkube(['manifests', 'examples/podautoscaler/controller.ts', '--namespace', 'default', '--image', 'example.com/podautoscaler:1']);
    expect(printed.code, printed.stderr).to.equal(0);
    const applied = await kubectl.ok(['apply', '--dry-run=server', '-f', '-'], printed.stdout);
    for (const line of [
      'customresourcedefinition.apiextensions.k8s.io/podautoscalers.autoscaling.rxkube.dev created (server dry run)',
      'serviceaccount/podautoscaler created (server dry run)',
      'role.rbac.authorization.k8s.io/podautoscaler created (server dry run)',
      'rolebinding.rbac.authorization.k8s.io/podautoscaler created (server dry run)',
      'secret/podautoscaler-webhook-tls created (server dry run)',
      'service/podautoscaler created (server dry run)',
      'deployment.apps/podautoscaler created (server dry run)',
      'mutatingwebhookconfiguration.admissionregistration.k8s.io/default-podautoscaler created (server dry run)',
      'validatingwebhookconfiguration.admissionregistration.k8s.io/default-podautoscaler created (server dry run)',
    ]) {
      expect(applied).to.contain(line);
    }
    // A dry run stores nothing.
    expect((await kubectl.run(['get', 'deployment', 'podautoscaler'])).code).to.equal(1);

    const objects = parseAllDocuments(printed.stdout).map((d) => d.toJS() as { kind: string; rules?: { verbs: string[]; resources: string[]; apiGroups: string[] }[] });
    expect(objects.filter((o) => o.kind === 'ClusterRole')).to.deep.equal([]);
    const role = objects.find((o) => o.kind === 'Role');
    expect(role?.rules?.length).to.be.greaterThan(0);
    for (const rule of role?.rules ?? []) {
      for (const field of [rule.verbs, rule.resources, rule.apiGroups]) expect(field.filter((v) => v.includes('*')), JSON.stringify(rule)).to.deep.equal([]);
    }
  });

  it('exits 2, naming the problem, for an unknown option and for a module without a definition', async () => {
    const unknown = await rxkube(['manifests', 'examples/podautoscaler/controller.ts', '--bogus']);
    expect(unknown.code, unknown.stderr).to.equal(2);
    expect(unknown.stderr).to.contain('rxkube manifests: unknown option --bogus\n');
    const module = join(dir, 'nothing.mjs');
    await writeFile(module, 'export const options = {};\n');
    const missing = await rxkube(['manifests', module]);
    expect(missing.code, missing.stderr).to.equal(2);
    expect(missing.stderr).to.contain(`${module} exports no definition function`).and.to.contain('it exports options');
    expect(missing.stdout).to.equal('');
  });
});
