import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject, type Observable } from 'rxjs';
import { kubeClient, manifests, runPipeline, silentLogger, type KubeObject, type ReconcileOutcome } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/apiserver';
import { definition } from '../../examples/mirror/controller.js';
import { waitFor } from '../support/waitFor.js';

const root = new URL('../..', import.meta.url).pathname;

describe('a hand-composed pipeline as a deployable controller (a definition with a pipeline)', function () {
  this.timeout(60_000);

  it('gets manifests, through the API the CLI calls, with the RBAC its definition declares and nothing more', () => {
    const objects = manifests(definition, { namespace: 'mirrored', image: 'mirror:1' });
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).to.deep.equal(['ServiceAccount/mirror', 'Role/mirror', 'RoleBinding/mirror', 'Service/mirror', 'Deployment/mirror']);
    const role = objects.find((o) => o.kind === 'Role') as KubeObject & { rules: unknown[] };
    expect(role.metadata.namespace).to.equal('mirrored');
    expect(role.rules).to.deep.equal([
      // The originals and the copies, listed and watched; the copies written by server-side apply.
      { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch', 'patch'] },
      // The Events its recorder writes, where `for` is.
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    ]);
  });

  it('runs with a health server whose /readyz follows the pipeline\'s check, and stops gracefully: the signal, then completion', async () => {
    const outcomes = new Subject<ReconcileOutcome>();
    let ready = false;
    let stopped = false;
    const running = await runPipeline({
      name: 'probe',
      kubeConfig: new KubeConfig(), // the pipeline above reaches no cluster
      health: { port: 0, host: '127.0.0.1' },
      handleSignals: false,
      logger: silentLogger,
      pipeline: (ctx): Observable<ReconcileOutcome> => {
        ctx.ready(() => ready);
        ctx.signal.addEventListener('abort', () => {
          stopped = true;
          outcomes.complete(); // what a reconcileByKey given the signal as its stop does once its runs end
        });
        return outcomes;
      },
    });
    const url = running.health?.url as string;
    expect((await fetch(`${url}/readyz`)).status).to.equal(503);
    ready = true;
    expect((await fetch(`${url}/readyz`)).status).to.equal(200);
    expect(await (await fetch(`${url}/metrics`)).text()).to.contain('process_cpu_seconds_total');
    running.stop();
    await running.done;
    expect(stopped).to.equal(true);
  });

  describe('rxkube run examples/mirror/controller.ts, as the image runs it', () => {
    let server: ApiServer;
    let dir: string;
    before(async () => {
      server = await startApiServer();
      dir = await mkdtemp(join(tmpdir(), 'rxkube-run-pipeline-'));
    });
    after(async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('mirrors a ConfigMap, then exits 0 on SIGTERM', async () => {
      const kubeconfig = join(dir, 'kubeconfig');
      await writeFile(kubeconfig, server.kubeConfig().exportConfig(), { mode: 0o600 });
      const client = kubeClient(server.kubeConfig());
      await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default', labels: { mirror: 'true' } }, data: { level: 'info' } } as KubeObject);
      const env = { ...process.env, KUBECONFIG: kubeconfig, POD_NAMESPACE: 'default', RXKUBE_LOG_LEVEL: 'warn' };
      const child = spawn(process.execPath, [join(root, 'bin/rxkube.js'), 'run', 'examples/mirror/controller.ts', '--health-port', '0'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        await waitFor(() => server.snapshot({ version: 'v1', resource: 'configmaps', namespace: 'default' }).some((o) => o.metadata.name === 'settings-mirror'), `the mirror (output: ${output})`, 30_000);
        child.kill('SIGTERM');
        expect(await exited, output).to.equal(0);
      } finally {
        child.kill('SIGKILL');
      }
    });
  });
});
