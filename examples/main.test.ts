import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { samples, type Sample } from '../test/sinks/prometheus.js';
import { dashboardOrigins, dashboardPanels, type DashboardPanel } from './support/dashboardPanels.js';

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

/** Why a panel would show no data on this scrape, or undefined when every query it makes has some. */
function missing(panel: DashboardPanel, scraped: Sample[]): string | undefined {
  for (const read of panel.reads) {
    const name = read.needs === 'observed' ? `${read.sample}_count` : read.sample;
    const series = scraped.filter((s) => s.name === name && (read.labels ?? []).every((l) => l in s.labels));
    if (series.length === 0) return `no ${name} with labels ${JSON.stringify(read.labels ?? [])}`;
    if (read.needs !== 'series' && !series.some((s) => s.value > 0)) return `${name} is never above 0`;
  }
  return undefined;
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
    for (const example of ['podautoscaler', 'configmap-rollout', 'leader-elected', 'gitsync']) expect(out).to.contain(`npx tsx examples/${example}/main.ts`);
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
    const { code, out, err } = await runMain(['--pace', '0', '--log-format', 'pretty'], env());
    expect(code, out).to.equal(0);
    const lines = err.trimEnd().split('\n');
    expect(lines.every((line) => /^\[\d\d:\d\d:\d\d\.\d{3}\] (DEBUG|INFO|WARN|ERROR): /.test(line)), err).to.equal(true);
    expect(err).to.match(/INFO: waiting for the caches of podautoscalers\.autoscaling\.rxkube\.dev, deployments\.apps to sync before reconciling/);
    expect(err).to.contain('INFO: caches synced: reconciling');
    const json = await runMain(['--pace', '0', '--log-format', 'json', '--log-level', 'warn'], env());
    expect(json.code, `${json.out}${json.err}`).to.equal(0);
    for (const line of json.err.trimEnd().split('\n').filter(Boolean)) expect((JSON.parse(line) as { level: number }).level).to.be.at.least(40);
  });
});

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
    for (const proc of running) proc.kill('SIGKILL');
    await bystander.close();
    await rm(home, { recursive: true, force: true });
  });

  it('with no cluster asked for, runs on the embedded API server to a converged summary and exit code 0, touching no other cluster', async () => {
    const { code, out, err } = await runMain(['--pace', '0'], baseEnv());
    expect(err).to.equal('');
    expect(out).to.match(/^rxkube main job: the podautoscaler controller on the embedded API server at http:\/\/127\.0\.0\.1:\d+/);
    expect(out).to.match(/metrics: http:\/\/127\.0\.0\.1:\d+\/metrics/);
    expect(out).to.contain('other examples: configmap-rollout, leader-elected, gitsync (npm start -- --help says how to run them)\n');
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

  it("has data, scraped while it runs, for every panel of kubebuilder's two dashboards and of cluster-api's controller-runtime, workqueue, REST client and process panels", async () => {
    const proc = spawn(process.execPath, ['--import', 'tsx', main, '--pace', '300'], { cwd: root, env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    try {
      let out = '';
      proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      proc.stderr.resume();
      let running = true;
      void exited.then(() => (running = false));
      const supported = dashboardPanels.filter((p) => p.unsupported === undefined);
      let last: Sample[] = [];
      let scrapes = 0;
      // Scrapes as Prometheus would, until every panel has data or the job ends.
      while (running) {
        const url = /metrics: (http:\/\/\S+\/metrics)/.exec(out)?.[1];
        if (url !== undefined) {
          const text = await fetch(url).then((r) => r.text(), () => undefined);
          if (text !== undefined) {
            last = samples(text);
            scrapes++;
            if (supported.every((p) => missing(p, last) === undefined)) break;
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(scrapes, 'scrapes of /metrics while the job ran').to.be.greaterThan(0);
      const empty = supported.map((p) => [`${p.dashboard}: ${p.title}`, missing(p, last)]).filter(([, why]) => why !== undefined);
      expect(empty, 'panels without data').to.deep.equal([]);
      // The dashboards whole: kubebuilder's 9 and 2 panels, and cluster-api's 35 on these metrics (6 of them the webhooks').
      const count = (d: keyof typeof dashboardOrigins) => dashboardPanels.filter((p) => p.dashboard === d).length;
      expect([count('Controller-Runtime-Metrics'), count('Controller-Resources-Metrics'), count('cluster-api controller-runtime')]).to.deep.equal([9, 2, 35]);
      expect(dashboardPanels.filter((p) => p.dashboard !== 'cluster-api controller-runtime' && p.unsupported !== undefined)).to.deep.equal([]);
      // The families behind them carry what the job did: reconciles, REST requests, retries of the failures the script provokes.
      const total = (name: string) => last.filter((s) => s.name === name).reduce((n, s) => n + s.value, 0);
      expect(total('controller_runtime_reconcile_total')).to.be.greaterThan(0);
      expect(total('rest_client_requests_total')).to.be.greaterThan(0);
    } finally {
      proc.kill('SIGTERM');
      await exited;
    }
  });

  it('reports a controller that failed (its CRD deleted while it runs) in the summary, cleans up and exits 1, with no unhandled rejection', async () => {
    const target = await startApiServer({ logger: silentLogger });
    let kubectl: ChildProcess | undefined;
    try {
      const path = join(home, 'target.yaml');
      await target.writeKubeconfig(path);
      const { code, out, err } = await runMain(['--kubeconfig', path, '--pace', '60000'], baseEnv(), (sofar) => {
        // Once the first step has converged the job waits out its pace: the CRD goes then, and with it the resource the controller watches.
        if (kubectl === undefined && /\[ 1\/11\]/.test(sofar)) {
          kubectl = spawn('kubectl', ['--kubeconfig', path, 'delete', 'customresourcedefinition', 'podautoscalers.autoscaling.rxkube.dev', '--wait=false'], { stdio: 'ignore' });
          running.add(kubectl);
          kubectl.on('exit', () => running.delete(kubectl as ChildProcess));
        }
      });
      expect(kubectl, 'the CRD was deleted').not.to.equal(undefined);
      expect(out, err).to.match(/not converged: the controller failed: .*podautoscalers/);
      expect(out.trimEnd().split('\n').at(-1)).to.match(/result: +NOT CONVERGED/);
      expect(err).not.to.match(/Unhandled|node:internal|^\s+at /m);
      expect(code).to.equal(1);
      const namespaces = target.snapshot({ group: '', version: 'v1', resource: 'namespaces' }).map((n) => n.metadata.name);
      expect(namespaces.filter((n) => n?.startsWith('rxkube-demo-'))).to.deep.equal([]);
    } finally {
      kubectl?.kill('SIGKILL');
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
