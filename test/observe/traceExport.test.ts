import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeClient, silentLogger, TRACEPARENT_ANNOTATION, type KubeObject } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { tracesWanted } from '../../src/observe/tracing/exportFromEnv.js';
import { otlpEnv, otlpReceiver, type ReceivedSpan } from '../support/otlpReceiver.js';
import { waitFor } from '../support/waitFor.js';

const root = new URL('../..', import.meta.url).pathname;

/** Runs `args` under node in a process of its own; its output and exit code once it ends. Killed by `kill` at the latest. */
function run(args: string[], env: NodeJS.ProcessEnv, children: Set<ChildProcess>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Every reconcile span, each with the request spans below it. */
function reconciles(spans: ReceivedSpan[], controller: string) {
  return spans.filter((s) => s.name === `reconcile ${controller}`).map((run) => ({ run, requests: spans.filter((s) => s.parentSpanId === run.spanId) }));
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name];
  delete env.KUBECONFIG;
  return env;
}

describe('exporting traces from the OpenTelemetry environment (OTLP/HTTP JSON to a loopback receiver)', function () {
  this.timeout(90_000);
  const children = new Set<ChildProcess>();
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
  beforeEach(async () => {
    receiver = await otlpReceiver();
  });
  afterEach(async () => {
    for (const child of children) child.kill('SIGKILL');
    children.clear();
    await receiver.close();
  });

  it('asks for traces only when the standard variables do', () => {
    expect(tracesWanted({})).to.equal(false);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).to.equal(true);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).to.equal(true);
    expect(tracesWanted({ OTEL_TRACES_EXPORTER: 'console' })).to.equal(true);
    expect(tracesWanted({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).to.equal(false);
    expect(tracesWanted({ OTEL_TRACES_EXPORTER: 'none,otlp' })).to.equal(true);
    expect(tracesWanted({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).to.equal(false);
  });

  it('npm start (the main job) delivers reconcile spans with their request spans and links to their causes, flushed before it exits', async () => {
    const main = run(['--import', 'tsx', 'examples/main.ts', '--pace', '0'], { ...cleanEnv(), ...otlpEnv(receiver.endpoint) }, children);
    expect(await main.exited, main.output()).to.equal(0);
    expect(receiver.requests.every((r) => r.startsWith('POST /v1/traces application/json')), receiver.requests.join('\n')).to.equal(true);
    const runs = reconciles(receiver.spans, 'podautoscaler');
    expect(runs.length, receiver.spans.map((s) => s.name).join(', ')).to.be.greaterThan(5);
    expect(runs.every(({ run }) => run.service === 'rxkube-main-job' && run.attributes['rxkube.reconcile.key'] !== undefined)).to.equal(true);
    const writing = runs.find(({ requests }) => requests.some((r) => r.attributes['http.request.method'] !== 'GET'));
    expect(writing, 'a run that wrote').to.not.equal(undefined);
    for (const request of writing?.requests ?? []) {
      expect(request.traceId).to.equal(writing?.run.traceId);
      expect(request.kind).to.equal(3); // SPAN_KIND_CLIENT
      expect(request.attributes['url.template']).to.match(/^\/apis?\//);
      expect(request.attributes['http.response.status_code']).to.be.a('number');
    }
    const vias = new Set(runs.flatMap(({ run }) => run.links.map((l) => l.attributes['rxkube.trigger.via'])));
    expect([...vias]).to.include.members(['for', 'watches']);
    expect(runs.some(({ run }) => run.links.some((l) => typeof l.attributes['rxkube.trigger.resource_version'] === 'string'))).to.equal(true);
  });

  describe('rxkube run', () => {
    let server: ApiServer;
    let dir: string;
    before(async () => {
      server = await startApiServer({ logger: silentLogger });
      dir = await mkdtemp(join(tmpdir(), 'rxkube-traces-'));
    });
    after(async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('exports a span per run with its request spans, stamps the trace context on what it creates, and flushes on SIGTERM', async () => {
      const kubeconfig = join(dir, 'kubeconfig');
      await writeFile(kubeconfig, server.kubeConfig().exportConfig(), { mode: 0o600 });
      const module = join(dir, 'parent.mjs');
      await writeFile(
        module,
        `const configMaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', labelSelector: 'tier=parent' };
export function definition(kubeConfig) {
  return {
    name: 'parent', kubeConfig, for: configMaps, tracing: { annotate: true },
    permissions: [{ resource: 'configmaps', verbs: ['get', 'create', 'update'] }],
    reconcile: async (key, ctx) => {
      if (ctx.object === undefined) return;
      await ctx.client.createOrUpdate({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ctx.name + '-child', namespace: ctx.namespace } },
        (child) => { child.data = { from: ctx.name }; }, { signal: ctx.signal });
    },
  };
}
`,
      );
      const client = kubeClient(server.kubeConfig(), { logger: silentLogger });
      await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default', labels: { tier: 'parent' } } } as KubeObject);
      const env = { ...cleanEnv(), ...otlpEnv(receiver.endpoint), OTEL_SERVICE_NAME: 'parent-under-test', KUBECONFIG: kubeconfig, POD_NAMESPACE: 'default', RXKUBE_LOG_LEVEL: 'warn' };
      const cli = run([join(root, 'bin/rxkube.js'), 'run', module, '--health-port', '0'], env, children);
      const childCm = () => server.snapshot({ version: 'v1', resource: 'configmaps', namespace: 'default' }).find((o) => o.metadata.name === 'a-child');
      await waitFor(() => childCm() !== undefined, `the child ConfigMap (output: ${cli.output()})`, 30_000);
      cli.child.kill('SIGTERM');
      expect(await cli.exited, cli.output()).to.equal(0);
      const [first] = reconciles(receiver.spans, 'parent');
      expect(first?.run.service).to.equal('parent-under-test');
      expect(first?.run.attributes).to.include({ 'rxkube.controller': 'parent', 'rxkube.reconcile.key': 'default/a', 'rxkube.reconcile.result': 'success' });
      expect(first?.run.links.map((l) => l.attributes)).to.deep.include({
        'rxkube.trigger.via': 'for',
        'rxkube.trigger.resource': 'configmaps',
        'rxkube.trigger.delta': 'Added',
        'rxkube.trigger.object': 'default/a',
        'rxkube.trigger.initial': true,
        'rxkube.trigger.resource_version': (await client.get<KubeObject>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' } })).metadata.resourceVersion,
      });
      const [create] = first?.requests ?? [];
      expect(create?.name).to.equal('POST /api/v1/namespaces/{namespace}/configmaps');
      expect(create?.attributes).to.include({ 'http.request.method': 'POST', 'http.response.status_code': 201, 'rxkube.object.kind': 'ConfigMap', 'rxkube.object.key': 'default/a-child' });
      expect(childCm()?.metadata.annotations?.[TRACEPARENT_ANNOTATION]).to.equal(`00-${create?.traceId}-${create?.spanId}-01`);
    });
  });
});
