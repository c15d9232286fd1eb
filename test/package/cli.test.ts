import { expect } from 'chai';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { kubeClient, type KubeObject } from 'rxkube';
import { waitFor } from '../support/waitFor.js';
import { root } from './packaging.js';
import { npmInstall, userProject, type Started, type UserProject } from './userProject.js';

/**
 * The `rxkube` command as a user runs it: `npx rxkube …` in a project that
 * installed the packed tarball (so plain node runs dist/cli.js, no tsx of
 * rxkube's own), on the README's greeter made a controller definition.
 */

/** The greeter as `rxkube manifests` and `rxkube run` take it; GREETER_RECORDING names a file to record its run to. */
const controllerModule = `import type { KubeConfig } from '@kubernetes/client-node';
import { configMaps } from 'rxkube/kinds';
import { greet } from './greeter.js';

export function definition(kubeConfig: KubeConfig, where: { namespace: string }) {
  return {
    name: 'greeter',
    kubeConfig,
    for: { ...configMaps, namespace: where.namespace },
    reconcile: greet,
    permissions: [{ group: '', resource: 'configmaps', verbs: ['patch'] }],
    record: process.env.GREETER_RECORDING,
  };
}
`;

/** The subcommands \`src/cli.ts\` dispatches to. */
async function commands(): Promise<string[]> {
  const cli = await readFile(join(root, 'src/cli.ts'), 'utf8');
  return [...cli.matchAll(/case '([a-z]+)':\s*return await \w+Command\(/g)].map((m) => m[1] as string);
}

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

describe('the rxkube command in a user\'s project (npx rxkube, from the packed tarball)', function () {
  this.timeout(600_000);
  let project: UserProject;
  const running: Started[] = [];
  before(async () => {
    project = await userProject();
    await writeFile(join(project.dir, 'src/controller.ts'), controllerModule);
  });
  after(async () => {
    for (const command of running) {
      command.kill('SIGKILL');
      await command.exited;
    }
  });

  it('runs every command of src/cli.ts: --help of each exits 0 with its usage; a misspelt command exits 2 with a suggestion', async () => {
    const names = await commands();
    expect(names).to.include.members(['apiserver', 'manifests', 'run', 'replay']);
    const all = await project.run('npx rxkube --help');
    expect(all.code, all.stderr).to.equal(0);
    for (const name of names) {
      expect(all.stdout, name).to.match(new RegExp(`^  ${name}\\b`, 'm'));
      const help = await project.run(`npx rxkube ${name} --help`);
      expect(help.code, help.stderr).to.equal(0);
      expect(help.stdout).to.match(new RegExp(`^usage: rxkube ${name}\\b`));
    }
    const misspelt = await project.run('npx rxkube manifest src/controller.ts');
    expect(misspelt.code).to.equal(2);
    expect(misspelt.stderr).to.contain('rxkube: unknown command "manifest" (did you mean manifests?)');
  });

  describe('without tsx in the project', () => {
    it('compiles the controller with the project\'s strict tsc; manifests of the .ts module exits 2 naming what to install, of the compiled .js prints them', async () => {
      const resolved = await project.run('node -e "require.resolve(\'tsx\')"');
      expect(resolved.code, 'tsx is not installed in the project yet').not.to.equal(0);
      await project.sh('npm run build');
      const ts = await project.run('npx rxkube manifests src/controller.ts');
      expect({ code: ts.code, stdout: ts.stdout }).to.deep.equal({ code: 2, stdout: '' });
      expect(ts.stderr.split('\n')[0]).to.equal(
        `rxkube manifests: cannot load ${join(project.dir, 'src/controller.ts')}: a TypeScript module needs tsx, which is not installed in its project (npm install --save-dev tsx), or pass the compiled .js module`,
      );
      const js = await project.run('npx rxkube manifests dist/controller.js');
      expect(js.code, js.stderr).to.equal(0);
      expect(parseAllDocuments(js.stdout).map((d) => (d.toJS() as KubeObject).kind)).to.include.members(['ServiceAccount', 'Role', 'RoleBinding', 'Deployment']);
    });
  });

  describe('with tsx installed in the project (npm install --save-dev tsx)', () => {
    before(async () => {
      await project.sh(npmInstall.replace('npm install', 'npm install --save-dev tsx'));
    });

    it('manifests src/controller.ts: the greeter\'s ServiceAccount, a Role for exactly its wiring, and its Deployment', async () => {
      const printed = await project.run('npx rxkube manifests src/controller.ts --image greeter:1');
      expect(printed.code, printed.stderr).to.equal(0);
      const objects = parseAllDocuments(printed.stdout).map((d) => d.toJS() as KubeObject & { rules?: Rule[]; spec?: { template?: { spec?: { containers?: { image: string }[] } } } });
      expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).to.include.members(['ServiceAccount/greeter', 'Role/greeter', 'Deployment/greeter']);
      const role = objects.find((o) => o.kind === 'Role');
      expect(role?.rules?.find((r) => r.resources.includes('configmaps'))?.verbs).to.have.members(['list', 'watch', 'patch']);
      expect(objects.find((o) => o.kind === 'Deployment')?.spec?.template?.spec?.containers?.[0]?.image).to.equal('greeter:1');
    });

    it('apiserver, run src/controller.ts until it converges, stopped by SIGTERM; replay of its recording with --reconcile src/greeter.ts: every run the same', async () => {
      const kubeconfig = join(project.dir, 'kubeconfig');
      const apiserver = project.start(`npx rxkube apiserver --port 0 --kubeconfig ${kubeconfig}`);
      running.push(apiserver);
      await waitFor(() => apiserver.stdout().includes('press Ctrl-C to stop') || apiserver.child.exitCode !== null, 'the API server to start', 60_000);
      expect(apiserver.stdout()).to.contain(`kubeconfig written to ${kubeconfig}`);

      const recording = join(project.dir, 'rec.jsonl');
      const run = project.start('npx rxkube run src/controller.ts --health-port 0', { KUBECONFIG: kubeconfig, GREETER_RECORDING: recording });
      running.push(run);
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromFile(kubeconfig);
      const client = kubeClient(kubeConfig);
      await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'default' } });
      let greeting: string | undefined;
      for (let tries = 0; tries < 600 && greeting === undefined && run.child.exitCode === null; tries++) {
        greeting = (await client.get<KubeObject & { data?: Record<string, string> }>({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'web' })).data?.greeting;
        if (greeting === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(greeting, run.stderr()).to.equal('hello, web');

      run.kill('SIGTERM');
      const stopped = await run.exited;
      expect(stopped.stderr).to.contain('controller stopped');
      expect(stopped.stderr).not.to.match(/"level":(50|60)/);
      expect((await stat(recording)).size).to.be.greaterThan(0);

      const replayed = await project.run(`npx rxkube replay ${recording} --reconcile src/greeter.ts --export greet`);
      expect(replayed.code, replayed.stdout + replayed.stderr).to.equal(0);
      expect(replayed.stdout.split('\n')[0]).to.match(/^[1-9]\d* runs? replayed, 0 differ$/);

      apiserver.kill('SIGINT');
      const ended = await apiserver.exited;
      expect(ended.stderr).to.contain('interrupted');
    });
  });
});
