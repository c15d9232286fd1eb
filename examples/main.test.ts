import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';

const root = new URL('..', import.meta.url).pathname;
const main = new URL('./main.ts', import.meta.url).pathname;

/** Runs the main job as `npm start` does, in its own process; resolves with its output and exit code. */
function runMain(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', main, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => resolve({ code, out, err }));
  });
}

describe('the main job (examples/main.ts) in its own process', function () {
  // The job runs its eleven steps, then its webhook checks, in a process of its own: on a busy machine that takes a while.
  this.timeout(90_000);
  let home: string;
  // A cluster nobody asked for: the default kubeconfig of the user running the job points at it.
  let bystander: ApiServer;
  const baseEnv = (): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
    delete env.KUBECONFIG;
    return env;
  };

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'rxkube-main-'));
    bystander = await startApiServer({ logger: silentLogger });
    await mkdir(join(home, '.kube'));
    await bystander.writeKubeconfig(join(home, '.kube', 'config'));
    bystander.clearRequestLog();
  });

  afterEach(async () => {
    await bystander.close();
    await rm(home, { recursive: true, force: true });
  });

  it('with no cluster asked for, runs on the embedded API server to a converged summary and exit code 0, touching no other cluster', async () => {
    const { code, out, err } = await runMain(['--pace', '0'], baseEnv());
    expect(err).to.equal('');
    expect(out).to.match(/^rxkube main job: the podautoscaler controller on the embedded API server at http:\/\/127\.0\.0\.1:\d+/);
    expect(out).to.match(/metrics: http:\/\/127\.0\.0\.1:\d+\/metrics/);
    expect(out).to.contain('[11/11] delete every third burst autoscaler, scale the others up by one: converged in');
    expect(out).to.match(/steps: +11\/11 converged/);
    expect(out).to.contain('  webhooks:    denied "invalid": admission webhook "validate.autoscaling.rxkube.dev" denied the request: spec.minReplicas (5) must be at most spec.maxReplicas (2)\n');
    expect(out).to.contain('  webhooks:    "legacy" written at v1 {targetDeployment: legacy-target}, read at v2 {scaleTargetRef.name: legacy-target}\n');
    expect(out).to.match(/reconciles: +\d+ \(\d+ ok, \d+ failed and retried\); \/metrics said \d+ successful/);
    expect(out.trimEnd().split('\n').at(-1)).to.equal('  result:      CONVERGED: every object reached the state the controller should give it');
    expect(code).to.equal(0);
    expect(bystander.requestLog).to.deep.equal([]);
  });

  it('with --kubeconfig, runs against that cluster in a namespace of its own and removes it, even when KUBECONFIG names another', async () => {
    const target = await startApiServer({ logger: silentLogger });
    try {
      const path = join(home, 'target.yaml');
      await target.writeKubeconfig(path);
      const { code, out } = await runMain(['--kubeconfig', path, '--pace', '0'], { ...baseEnv(), KUBECONFIG: join(home, '.kube', 'config') });
      expect(out).to.match(new RegExp(`^rxkube main job: the podautoscaler controller on context "[^"]+" \\(${target.url}\\) from ${path}, namespace "rxkube-demo-`));
      expect(out).to.contain('result:      CONVERGED');
      expect(code).to.equal(0);
      const namespaces = target.snapshot({ group: '', version: 'v1', resource: 'namespaces' }).map((n) => n.metadata.name);
      expect(namespaces.filter((n) => n?.startsWith('rxkube-demo-'))).to.deep.equal([]);
      expect(target.requestLog.some((r) => r.verb === 'create' && r.resource === 'namespaces')).to.equal(true);
      expect(target.snapshot({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' }).map((c) => c.metadata.name)).to.deep.equal([
        'podautoscalers.autoscaling.rxkube.dev',
      ]);
      expect(bystander.requestLog).to.deep.equal([]);
    } finally {
      await target.close();
    }
  });

  it('ends with NOT CONVERGED and exit code 1 when a step cannot converge in time', async () => {
    const { code, out } = await runMain(['--pace', '0', '--step-timeout', '1'], baseEnv());
    expect(out).to.match(/\[ 1\/11\] .*: NOT converged after \d+ ms/);
    expect(out).to.match(/result: +NOT CONVERGED/);
    expect(code).to.equal(1);
  });
});
