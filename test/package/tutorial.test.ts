import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { findCondition, installCrd, kubeClient, silentLogger, type KubeObject } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { waitFor } from '../support/waitFor.js';
import { buildWithoutDocker, dockerignore, instructions, type Prebuilt } from './dockerfile.js';
import { exec } from './packaging.js';
import { tutorialProject, wantTutorialProject, type UserProject } from './userProject.js';

/**
 * docs/tutorial.md as a newcomer follows it: a new project made by its
 * install commands with the packed tarball as rxkube, the README's
 * tsconfig.json (strict, library types checked), its files, then each of
 * its commands as the page gives it. test/tutorial.test.ts runs the same
 * files against this checkout's sources; this one runs them against what
 * npm installs.
 */

// Made in the background once the README's project is, if another test makes that one first.
wantTutorialProject();

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };

/** The tutorial's sh block that holds `command`, as one line: its comment dropped, and a pipe into kubectl (there is no cluster here). */
function commandOf(project: UserProject, command: string): string {
  const lines = project.blocks.filter((b) => b.language === 'sh').flatMap((b) => b.code.split('\n'));
  const line = lines.find((l) => l.startsWith(command));
  if (line === undefined) throw new Error(`docs/tutorial.md has no command that starts with \`${command}\``);
  return line.replace(/\s+#.*$/, '').replace(/\s*\|\s*kubectl apply -f -$/, '');
}

/** The project's files that a docker build of it sees: those its .dockerignore keeps, relative to it. */
async function buildContext(dir: string): Promise<string[]> {
  const keep = dockerignore(await readFile(join(dir, '.dockerignore'), 'utf8'));
  const files: string[] = [];
  const walk = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (!keep(relative(dir, path))) continue;
      if (entry.isDirectory()) await walk(path);
      else files.push(relative(dir, path));
    }
  };
  await walk(dir);
  return files;
}

/**
 * Where each stage's `npm ci` looks for rxkube: the project installed the
 * tarball as a `file:` dependency (a user's comes from the registry), so a
 * copy goes where that path points from each stage's WORKDIR.
 */
async function placeTarball(project: UserProject, dockerfile: string, stages: string): Promise<void> {
  const spec = (JSON.parse(await readFile(join(project.dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies.rxkube ?? '';
  if (!spec.startsWith('file:')) throw new Error(`the project's rxkube is not the tarball: ${spec}`);
  let stage = '';
  for (const { keyword, args } of instructions(dockerfile)) {
    if (keyword === 'FROM') stage = /\sAS\s+(\S+)$/i.exec(args)?.[1] ?? '';
    if (keyword !== 'WORKDIR') continue;
    const target = join(stages, stage, args, spec.slice('file:'.length));
    await mkdir(dirname(target), { recursive: true });
    await copyFile(project.tarball, target);
  }
}

describe('docs/tutorial.md in a new project, from the packed tarball', function () {
  this.timeout(600_000);
  let project: UserProject;
  before(async () => {
    project = await tutorialProject();
  });

  it('compiles under the README\'s strict tsconfig (library types checked), converges with npm start and passes its tests with npm test', async () => {
    const tsconfig = JSON.parse(await readFile(join(project.dir, 'tsconfig.json'), 'utf8')) as { compilerOptions: { strict: boolean; skipLibCheck: boolean } };
    expect(tsconfig.compilerOptions).to.include({ strict: true, skipLibCheck: false });
    const started = await project.sh(commandOf(project, 'npm run build && npm start'), 120_000);
    expect(started).to.contain('0 of 2 replicas available');
    expect(started).to.contain('converged: default/shop is Ready, 2 of 2 replicas available');
    // The page's next command builds again first: the same sources, just built, so its tests run on that build (tsc takes 20 s here).
    const test = commandOf(project, 'npm run build && npm test');
    expect(test.startsWith('npm run build && ')).to.equal(true);
    const tested = await project.sh(test.slice('npm run build && '.length), 120_000);
    expect(tested).to.match(/^# pass 4$/m);
    expect(tested).to.match(/^# fail 0$/m);
  });

  it('prints its manifests with npx rxkube manifests src/controller.ts: the CRD, and a Role for exactly its wiring', async () => {
    const printed = await project.run(commandOf(project, 'npx rxkube manifests'));
    expect(printed.code, printed.stderr).to.equal(0);
    const objects = parseAllDocuments(printed.stdout).map((d) => d.toJS() as KubeObject & { rules?: Rule[]; spec?: { template?: { spec?: { containers?: { image: string }[] } } } });
    expect(objects.map((o) => `${o.kind} ${o.metadata.name}`)).to.include.members(['CustomResourceDefinition webapps.apps.example.com', 'ServiceAccount webapp', 'Role webapp', 'Deployment webapp']);
    for (const o of objects.filter((o) => o.kind !== 'CustomResourceDefinition' && o.kind !== 'ClusterRole' && o.kind !== 'ClusterRoleBinding')) {
      expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).to.equal('webapps');
    }
    const role = objects.find((o) => o.kind === 'Role');
    const grants = (role?.rules ?? []).flatMap((r) => r.resources.flatMap((res) => r.verbs.map((v) => `${r.apiGroups.join(',')}/${res} ${v}${r.resourceNames ? ` ${r.resourceNames.join(',')}` : ''}`)));
    // What the controller watches (list, watch), what `permissions` declares, and its Events: nothing else.
    expect(grants).to.include.members([
      'apps.example.com/webapps list',
      'apps.example.com/webapps watch',
      'apps.example.com/webapps patch',
      'apps.example.com/webapps/status patch',
      'apps/deployments watch',
      'apps/deployments patch',
      '/services patch',
      '/configmaps create',
      '/configmaps get webapp-directory',
      '/configmaps update webapp-directory',
    ]);
    expect(grants.filter((g) => / (delete|deletecollection|\*)/.test(g))).to.deep.equal([]);
    const deployment = objects.find((o) => o.kind === 'Deployment');
    expect(deployment?.spec?.template?.spec?.containers?.[0]?.image).to.equal('registry.example.com/webapp:1');
  });

  describe('its image, built by its Dockerfile without Docker', () => {
    let server: ApiServer | undefined;
    let stop: (() => void) | undefined;
    let folder: string | undefined;
    after(async () => {
      stop?.();
      await server?.close();
      if (folder !== undefined) await rm(folder, { recursive: true, force: true });
    });

    it('holds production dependencies only, prints the manifests of dist/controller.js, serves a WebApp and exits 0 on SIGTERM', async () => {
      folder = join(dirname(project.dir), 'webapp-image');
      const context = join(folder, 'context');
      const stages = join(folder, 'stages');
      for (const file of await buildContext(project.dir)) {
        await mkdir(dirname(join(context, file)), { recursive: true });
        await copyFile(join(project.dir, file), join(context, file));
      }
      await placeTarball(project, await readFile(join(context, 'Dockerfile'), 'utf8'), stages);
      // The build stage's `npm ci` is the project's own install, from the same package.json and lock file: taken, not done again.
      const prebuilt: Prebuilt = new Map([['npm ci --no-audit --no-fund', (cwd: string) => symlink(join(project.dir, 'node_modules'), join(cwd, 'node_modules'))]]);
      const image = await buildWithoutDocker(join(context, 'Dockerfile'), context, stages, { ...project.env, npm_config_prefer_offline: 'true' }, prebuilt);
      expect([...image.entrypoint, ...image.cmd]).to.deep.equal(['node', 'node_modules/rxkube/bin/rxkube.js', 'run', 'dist/controller.js']);
      const installed = await readdir(join(image.workdir, 'node_modules'));
      expect(installed).to.include.members(['rxkube', 'rxjs', '@kubernetes']);
      for (const dev of ['typescript', 'tsx']) expect(installed, dev).not.to.include(dev); // (client-node's own dependencies bring some @types)

      server = await startApiServer({ logger: silentLogger });
      const kubeconfig = join(folder, 'kubeconfig');
      await server.writeKubeconfig(kubeconfig);
      const env = { PATH: process.env.PATH ?? '', HOME: folder, ...image.env, KUBECONFIG: kubeconfig, POD_NAMESPACE: 'default' };
      // The image's own rxkube prints the compiled module's manifests; the CRD among them goes to the server, as kubectl apply would.
      const { stdout } = await exec('node', ['node_modules/rxkube/bin/rxkube.js', 'manifests', 'dist/controller.js'], { cwd: image.workdir, env });
      const crd = parseAllDocuments(stdout).map((d) => d.toJS() as KubeObject).find((o) => o.kind === 'CustomResourceDefinition');
      expect(crd?.metadata.name).to.equal('webapps.apps.example.com');
      const admin = kubeClient(server.kubeConfig(), { fieldManager: 'admin' });
      await installCrd(admin, crd as KubeObject);

      const [command, ...args] = [...image.entrypoint, ...image.cmd, '--health-port', '0'];
      const child = spawn(command as string, args, { cwd: image.workdir, env });
      stop = () => child.kill('SIGKILL');
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdout.resume();
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
      await admin.create({ apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: 'shop', namespace: 'default' }, spec: { image: 'nginx:1.27', replicas: 2, port: 8080 } });
      const live = server;
      const progressing = (): boolean => {
        const [app] = live.snapshot({ group: 'apps.example.com', version: 'v1', resource: 'webapps', namespace: 'default' }) as (KubeObject & { status?: { conditions?: [] } })[];
        return findCondition(app?.status?.conditions, 'Ready')?.message === '0 of 2 replicas available';
      };
      await waitFor(() => progressing() || child.exitCode !== null, "the image's operator to serve default/shop", 60_000);
      expect(child.exitCode, stderr).to.equal(null);
      expect(live.snapshot({ group: 'apps', version: 'v1', resource: 'deployments', namespace: 'default' }).map((d) => d.metadata.name)).to.deep.equal(['shop']);
      child.kill('SIGTERM');
      expect(await exited, stderr).to.deep.equal({ code: 0, signal: null });
      stop = undefined;
    });
  });
});
