import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { cp, mkdir, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { installCrd, kubeClient, silentLogger, type KubeObject } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/apiserver';
import { waitFor } from '../support/waitFor.js';
import { buildWithoutDocker, dockerignore, type Prebuilt } from './dockerfile.js';
import { sh } from './packaging.js';
import { npmInstall, userProject, type Started, type UserProject } from './userProject.js';

/**
 * `npx rxkube init demo` as a newcomer runs it, from the packed tarball:
 * in an empty folder, then `npm install` (offline, from the tarball and
 * npm's cache), `npm test` and `npm start` with no edit; then `npx rxkube
 * create api` and `npm test` again. One install, in a folder beside the
 * harness's shared user project, whose rxkube runs the `npx rxkube init`.
 */

describe('npx rxkube init in an empty folder, from the packed tarball: npm install, npm test, npm start, create api, npm test', function () {
  this.timeout(900_000);
  let project: UserProject;
  let demo: string;
  const running: Started[] = [];
  let server: ApiServer | undefined;
  const inDemo = (command: string, timeout = 600_000): Promise<string> => sh(command, demo, project.env, timeout);
  before(async () => {
    project = await userProject();
    demo = join(dirname(project.dir), 'demo');
    await mkdir(demo);
  });
  after(async () => {
    for (const command of running) {
      command.kill('SIGKILL');
      await command.exited;
    }
    await server?.close();
  });

  it('init writes the project and says what to run; npm install and npm test pass: the marble, integration and RBAC tests', async () => {
    const written = await project.sh(`npx rxkube init ${JSON.stringify(demo)} --rxkube ${JSON.stringify(`file:${project.tarball}`)}`);
    expect(written).to.contain('  npm install\n  npm test').and.to.contain('npm start');
    await inDemo(npmInstall);
    const tested = await inDemo('npm test');
    expect(tested).to.match(/^# pass 5$/m);
    expect(tested).to.match(/^# fail 0$/m);
  });

  it('npm start runs the controller on an embedded API server until the sample WebApp is Ready, and stops cleanly on Ctrl-C', async () => {
    const start = project.start(`cd ${JSON.stringify(demo)} && npm start`, { RXKUBE_LOG_LEVEL: 'info' });
    running.push(start);
    await waitFor(() => start.stdout().includes('Ctrl-C stops it.') || start.child.exitCode !== null, 'npm start to converge', 120_000).catch(() => undefined);
    expect(start.stdout(), start.stderr()).to.contain('converged: WebApp default/webapp-sample is Ready: 2 of 2 replicas available');
    expect(start.stdout()).to.contain('kubectl --kubeconfig kubeconfig get all,configmaps,webapp');
    start.kill('SIGINT');
    const ended = await start.exited;
    expect(ended.stderr).to.contain('controller stopped');
    expect(ended.stderr).not.to.match(/"level":(50|60)/);
  });

  it('its Dockerfile, followed without Docker, builds an image whose command runs the controller on a cluster; rxkube manifests of the built module gives the CRD', async () => {
    const context = join(dirname(demo), 'demo-context');
    const keep = dockerignore(await readFile(join(demo, '.dockerignore'), 'utf8'));
    for (const entry of await readdir(demo, { recursive: true, withFileTypes: true })) {
      const path = relative(demo, join(entry.parentPath, entry.name));
      if (entry.isFile() && keep(path)) await cp(join(demo, path), join(context, path));
    }
    const stages = join(dirname(demo), 'demo-stages');
    // The build stage's `npm ci` is the project's own install, from the same package.json and lock file: taken, not done again.
    const prebuilt: Prebuilt = new Map([['npm ci --no-audit --no-fund', (cwd: string) => symlink(join(demo, 'node_modules'), join(cwd, 'node_modules'))]]);
    const image = await buildWithoutDocker(join(context, 'Dockerfile'), context, stages, { ...project.env, npm_config_prefer_offline: 'true' }, prebuilt);
    expect([...image.entrypoint, ...image.cmd]).to.deep.equal(['node', 'node_modules/rxkube/bin/rxkube.js', 'run', 'dist/webapp/controller.js']);
    const installed = await readdir(join(image.workdir, 'node_modules'));
    expect(installed).to.include.members(['rxkube', 'rxjs', '@kubernetes', 'typebox']);
    expect(installed).not.to.include.members(['typescript', 'tsx']);

    server = await startApiServer({ logger: silentLogger });
    const kubeconfig = join(stages, 'kubeconfig');
    await server.writeKubeconfig(kubeconfig);
    const admin = kubeClient(server.kubeConfig());
    const printed = await inDemo('npx rxkube manifests dist/webapp/controller.js --namespace default --image demo:1');
    const crds = parseAllDocuments(printed).map((d) => d.toJS() as KubeObject).filter((o) => o.kind === 'CustomResourceDefinition');
    expect(crds.map((crd) => crd.metadata.name)).to.deep.equal(['webapps.example.com']);
    for (const crd of crds) await installCrd(admin, crd);

    const [command, ...args] = [...image.entrypoint, ...image.cmd, '--health-port', '0'];
    const started = spawn(command as string, args, { cwd: image.workdir, env: { PATH: process.env.PATH ?? '', HOME: stages, ...image.env, KUBECONFIG: kubeconfig, POD_NAMESPACE: 'default' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    started.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => started.on('exit', (code) => resolve(code)));
    try {
      await admin.create({ apiVersion: 'example.com/v1', kind: 'WebApp', metadata: { name: 'shop', namespace: 'default' }, spec: { image: 'nginx:1.27' } } as KubeObject);
      const owned = () => server?.snapshot({ group: 'apps', version: 'v1', resource: 'deployments', namespace: 'default' }).find((d) => d.metadata.name === 'shop')?.metadata.ownerReferences?.[0]?.kind;
      await waitFor(() => owned() === 'WebApp' || started.exitCode !== null, 'the image\'s controller to apply the WebApp\'s Deployment', 120_000);
      expect(owned(), stderr).to.equal('WebApp');
    } finally {
      started.kill('SIGTERM');
    }
    expect(await exited, stderr).to.equal(0);
    await rm(stages, { recursive: true, force: true });
  });

  it('create api Database adds a second kind and controller; npm test passes with their tests and RBAC test too', async () => {
    const created = await inDemo('npx rxkube create api Database');
    expect(created).to.contain('Created src/database/');
    const tested = await inDemo('npm test');
    expect(tested).to.match(/^# pass 10$/m);
    expect(tested).to.match(/^# fail 0$/m);
    expect(tested).to.contain('Database: converges as its ServiceAccount');
  });
});
