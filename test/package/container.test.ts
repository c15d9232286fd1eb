import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { findCondition, kubeClient, silentLogger, type KubeObject } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { selfSignedCertificates } from 'rxkube/webhooks';
import { installPodAutoscalerCrd } from '../../examples/podautoscaler/crd.js';
import { autoscalerManifest, deploymentManifest } from '../../examples/podautoscaler/manifests.js';
import { waitFor } from '../support/waitFor.js';
import { buildWithoutDocker, dockerignore, type Prebuilt } from './dockerfile.js';
import { copyFiles, exec, root, trackedFiles, userEnv } from './packaging.js';
import { packedOnce } from './userProject.js';

/**
 * The Dockerfile's recipe without Docker: its steps run in folders standing
 * for the stages (the controllers compiled against the packed rxkube, the
 * runtime's lock file and `npm ci --omit=dev`), then its ENTRYPOINT and CMD
 * start the podautoscaler with production dependencies only, against an
 * embedded API server; SIGTERM ends it cleanly. The build stage's `npm ci`
 * and `npm pack` are the run's shared pack (userProject.ts), made once from
 * the same files.
 */
/** Runs a command to its end: its exit code and what it wrote on stderr. */
function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const started = spawn(command, args, { cwd, env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    started.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    started.on('error', reject);
    started.on('exit', (code) => resolve({ code, stderr }));
  });
}

describe('the container recipe (Dockerfile), followed without Docker', function () {
  this.timeout(900_000);
  let dir: string;
  let server: ApiServer | undefined;
  let child: ChildProcess | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-image-'));
  });
  after(async () => {
    child?.kill('SIGKILL');
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('builds, runs the podautoscaler from the runtime stage with production dependencies only, and exits 0 on SIGTERM', async () => {
    const context = join(dir, 'context');
    const keep = dockerignore(await readFile(join(root, '.dockerignore'), 'utf8'));
    await copyFiles((await trackedFiles()).filter(keep), context);
    // Two steps of the build stage are what the run's shared pack already did from the same files: take their results.
    const { tarball } = await packedOnce();
    const prebuilt: Prebuilt = new Map([
      // The repository's dependencies, as the shared pack's clean clone has them: this checkout's node_modules, installed from the same lock file.
      ['npm ci --no-audit --no-fund', (cwd: string) => symlink(join(root, 'node_modules'), join(cwd, 'node_modules'))],
      // `npm pack`: the run's tarball, and the dist/ its prepack built, which the tarball holds and the controllers compile against.
      [
        'mkdir -p .image/app && npm pack --pack-destination .image/app && mv .image/app/rxkube-*.tgz .image/app/rxkube.tgz',
        async (cwd: string) => {
          await mkdir(join(cwd, '.image/app'), { recursive: true });
          await copyFile(tarball, join(cwd, '.image/app/rxkube.tgz'));
          await exec('tar', ['xzf', tarball, '--strip-components=1', '-C', cwd, 'package/dist']);
        },
      ],
    ]);
    const image = await buildWithoutDocker(join(root, 'Dockerfile'), context, join(dir, 'stages'), { ...userEnv(), npm_config_prefer_offline: 'true' }, prebuilt);
    expect(image.entrypoint).to.deep.equal(['node', 'node_modules/rxkube/bin/rxkube.js', 'run']);

    // Production dependencies only: rxkube, its dependencies and its peers; none of the project's dev tools.
    const installed = await readdir(join(image.workdir, 'node_modules'));
    expect(installed).to.include.members(['rxkube', 'rxjs', '@kubernetes', 'yaml', 'prom-client']);
    for (const dev of ['typescript', 'tsx', 'mocha', 'chai', 'eslint', 'pino-pretty', 'log-update']) expect(installed, dev).not.to.include(dev);

    server = await startApiServer({ logger: silentLogger });
    const kubeconfig = join(dir, 'kubeconfig');
    await server.writeKubeconfig(kubeconfig);
    const admin = kubeClient(server.kubeConfig(), { fieldManager: 'admin' });
    await installPodAutoscalerCrd(admin);
    const certDir = join(dir, 'certs');
    await mkdir(certDir);
    const certs = await selfSignedCertificates();
    await writeFile(join(certDir, 'tls.crt'), certs.cert);
    await writeFile(join(certDir, 'tls.key'), certs.key);

    const [command, ...args] = [...image.entrypoint, ...image.cmd, '--health-port', '0', '--webhook-port', '0', '--webhook-cert-dir', certDir];
    let stderr = '';
    const started = spawn(command as string, args, { cwd: image.workdir, env: { PATH: process.env.PATH ?? '', HOME: dir, ...image.env, KUBECONFIG: kubeconfig, POD_NAMESPACE: 'default' } });
    child = started;
    started.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    started.stdout.resume();
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => started.on('exit', (code, signal) => resolve({ code, signal })));

    await waitFor(() => /"health":"http:\/\/[^"]+"/.test(stderr) || started.exitCode !== null, 'the controller to start', 120_000);
    const health = /"health":"(http:\/\/[^"]+)"/.exec(stderr)?.[1];
    expect(health, stderr).to.be.a('string');

    await admin.create(deploymentManifest('default', 'web', 1));
    await admin.create(autoscalerManifest('default', 'web', 'web', 2));
    const scaled = (): boolean => {
      const pa = server?.snapshot({ group: 'autoscaling.rxkube.dev', version: 'v1', resource: 'podautoscalers', namespace: 'default' })[0] as (KubeObject & { status?: { conditions?: [] } }) | undefined;
      return findCondition(pa?.status?.conditions, 'Ready')?.reason === 'Scaled';
    };
    await waitFor(scaled, 'the podautoscaler to scale web', 60_000);
    // Ready once synced and the webhooks' certificate is loaded: asked until then (a bound, not a timing).
    let ready = 0;
    for (let i = 0; i < 600 && ready !== 200; i++) {
      ready = (await fetch(`${health as string}/readyz`)).status;
      if (ready !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(ready, stderr).to.equal(200);

    started.kill('SIGTERM');
    expect(await exited, stderr).to.deep.equal({ code: 0, signal: null });
    expect(stderr).to.contain('controller stopped');
    child = undefined;

    // Every other controller of the image loads there too, with what the runtime stage installed (gitsync needs isomorphic-git).
    for (const module of ['controller/configmap-rollout/controller.js', 'controller/leader-elected/replica.js', 'controller/gitsync/controller.js']) {
      const loaded = await run(process.execPath, ['--input-type=module', '-e', "const m = await import(process.argv[1]); if (typeof m.definition !== 'function') throw new Error('no definition');", `./${module}`], image.workdir);
      expect(loaded, module).to.deep.equal({ code: 0, stderr: '' });
    }
  });
});
