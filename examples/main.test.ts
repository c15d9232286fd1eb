import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';

const root = new URL('..', import.meta.url).pathname;
const main = new URL('./main.ts', import.meta.url).pathname;

const running = new Set<ChildProcess>();

/**
 * Runs the main job as `npm start` does, in its own process; resolves with
 * its output and exit code. `whenOutput` is called with the output so far
 * on every chunk, and may signal the process.
 */
function runMain(args: string[], env: NodeJS.ProcessEnv, whenOutput?: (out: string, proc: ChildProcess) => void): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', main, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(proc);
    let out = '';
    let err = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      whenOutput?.(out, proc);
    });
    proc.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => {
      running.delete(proc);
      resolve({ code, out, err });
    });
  });
}

describe('the main job\'s command line', function () {
  this.timeout(120_000);
  afterEach(() => {
    for (const proc of running) proc.kill('SIGKILL');
  });
  const env = (): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = { ...process.env };
    delete e.KUBECONFIG;
    return e;
  };

  it('--help prints the usage with every option and exits 0 without running', async () => {
    const { code, out, err } = await runMain(['--help'], env());
    expect(code).to.equal(0);
    expect(err).to.equal('');
    expect(out).to.match(/^usage: npm start -- \[options\]/);
    for (const option of ['--kubeconfig <path>', '--pace <ms>', '--step-timeout <ms>', '--metrics-port <n>', '--log-format <json|pretty>', '--log-level <level>', '-h, --help']) {
      expect(out).to.contain(option);
    }
    expect(out).not.to.contain('rxkube main job');
  });

  it('exits 2 naming an unknown option, a bad value, or a missing value, without running', async () => {
    // Two processes for the exit code; parseCommandLine's own test (test/examples/cli.test.ts) has every case.
    const cases: [string[], string][] = [
      [['--bogus'], "npm start: Unknown option '--bogus'"],
      [['--pace', 'abc'], 'npm start: --pace must be an integer >= 0, got "abc"'],
    ];
    const results = await Promise.all(cases.map(([args]) => runMain(args, env())));
    results.forEach(({ code, out, err }, i) => {
      const [args, message] = cases[i] as [string[], string];
      expect(code, args.join(' ')).to.equal(2);
      expect(err.split('\n')[0], args.join(' ')).to.contain(message);
      expect(out, args.join(' ')).to.equal('');
    });
  });

  it('says in one line that a kubeconfig does not exist, and exits 2', async () => {
    const { code, out, err } = await runMain(['--kubeconfig', '/nonexistent/kubeconfig'], env());
    expect(code).to.equal(2);
    expect(out).to.equal('');
    expect(err).to.equal('npm start: the kubeconfig /nonexistent/kubeconfig does not exist\n');
    const fromEnv = await runMain([], { ...env(), KUBECONFIG: '/nonexistent/from-env' });
    expect(fromEnv.err).to.equal('npm start: the kubeconfig /nonexistent/from-env does not exist\n');
  });

  it('on Ctrl-C stops, cleans up, prints "interrupted" and exits 130', async () => {
    let sent = false;
    const { code, out, err } = await runMain(['--pace', '60000'], env(), (sofar, proc) => {
      // Once the first step has converged the job waits out its pace: interrupt it there.
      if (!sent && /\[ 1\/11\]/.test(sofar)) {
        sent = true;
        proc.kill('SIGINT');
      }
    });
    expect(sent).to.equal(true);
    expect(err).to.equal('interrupted\n');
    expect(out).not.to.match(/not converged|failed|aborted/i);
    expect(code).to.equal(130);
  });

  it('with --log-format pretty writes the controller\'s logs to stderr as readable lines, saying what start-up waits for', async () => {
    const { code, err } = await runMain(['--pace', '0', '--log-format', 'pretty'], env());
    expect(code).to.equal(0);
    const lines = err.trimEnd().split('\n');
    expect(lines.every((line) => /^\[\d\d:\d\d:\d\d\.\d{3}\] (DEBUG|INFO|WARN|ERROR): /.test(line)), err).to.equal(true);
    expect(err).to.match(/INFO: waiting for the caches of podautoscalers\.autoscaling\.rxkube\.dev, deployments\.apps to sync before reconciling/);
    expect(err).to.contain('INFO: caches synced: reconciling');
    const json = await runMain(['--pace', '0', '--log-format', 'json', '--log-level', 'warn'], env());
    expect(json.code).to.equal(0);
    for (const line of json.err.trimEnd().split('\n').filter(Boolean)) expect((JSON.parse(line) as { level: number }).level).to.be.at.least(40);
  });
});

describe('the main job (examples/main.ts) in its own process', () => {
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
