import { expect } from 'chai';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { waitFor } from '../support/waitFor.js';
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

  it('create api Database adds a second kind and controller; npm test passes with their tests and RBAC test too', async () => {
    const created = await inDemo('npx rxkube create api Database');
    expect(created).to.contain('Created src/database/');
    const tested = await inDemo('npm test');
    expect(tested).to.match(/^# pass 10$/m);
    expect(tested).to.match(/^# fail 0$/m);
    expect(tested).to.contain('Database: converges as its ServiceAccount');
  });
});
