import { expect } from 'chai';
import { kubeClient, runController, silentLogger, TerminalError, type KubeObject, type ReconcileOutcome, type RunningController } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { metricTypes, samples, type Sample } from '../sinks/prometheus.js';
import { waitFor } from '../support/waitFor.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default' };

/** Every family the controller's /metrics must have: its type and its labels (besides `le` of a histogram's buckets). */
const families: Record<string, { type: string; labels: string[] }> = {
  controller_runtime_reconcile_total: { type: 'counter', labels: ['controller', 'result'] },
  controller_runtime_reconcile_errors_total: { type: 'counter', labels: ['controller'] },
  controller_runtime_terminal_reconcile_errors_total: { type: 'counter', labels: ['controller'] },
  controller_runtime_reconcile_panics_total: { type: 'counter', labels: ['controller'] },
  controller_runtime_reconcile_timeouts_total: { type: 'counter', labels: ['controller'] },
  controller_runtime_reconcile_time_seconds: { type: 'histogram', labels: ['controller'] },
  controller_runtime_max_concurrent_reconciles: { type: 'gauge', labels: ['controller'] },
  controller_runtime_active_workers: { type: 'gauge', labels: ['controller'] },
  workqueue_depth: { type: 'gauge', labels: ['name', 'controller', 'priority'] },
  workqueue_adds_total: { type: 'counter', labels: ['name', 'controller'] },
  workqueue_queue_duration_seconds: { type: 'histogram', labels: ['name', 'controller'] },
  workqueue_work_duration_seconds: { type: 'histogram', labels: ['name', 'controller'] },
  workqueue_retries_total: { type: 'counter', labels: ['name', 'controller'] },
  workqueue_unfinished_work_seconds: { type: 'gauge', labels: ['name', 'controller'] },
  workqueue_longest_running_processor_seconds: { type: 'gauge', labels: ['name', 'controller'] },
  leader_election_master_status: { type: 'gauge', labels: ['name'] },
  rest_client_requests_total: { type: 'counter', labels: ['code', 'method', 'host'] },
  rest_client_request_duration_seconds: { type: 'histogram', labels: ['verb', 'host'] },
  process_cpu_seconds_total: { type: 'counter', labels: [] },
  process_resident_memory_bytes: { type: 'gauge', labels: [] },
  process_open_fds: { type: 'gauge', labels: [] },
  process_start_time_seconds: { type: 'gauge', labels: [] },
  nodejs_eventloop_lag_seconds: { type: 'gauge', labels: [] },
  nodejs_heap_size_used_bytes: { type: 'gauge', labels: [] },
};

const sum = (all: Sample[], name: string, labels: Record<string, string> = {}): number =>
  all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);

describe('metrics of a running controller, scraped over HTTP', () => {
  let server: ApiServer;
  let running: RunningController<KubeObject> | undefined;

  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
  });
  afterEach(async () => {
    running?.stop();
    running?.stop();
    await running?.done.catch(() => {});
    running = undefined;
    await server.close();
  });

  it('has every family with its type and labels, counts panics, timeouts, terminal errors and retries, and every request it sent', async () => {
    const setup = kubeClient(server.kubeConfig(), { logger: silentLogger });
    for (const name of ['plain', 'panic', 'terminal', 'slow', 'later']) {
      await setup.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { v: '1' } });
    }
    server.clearRequestLog();
    const outcomes: ReconcileOutcome[] = [];
    // Runs per key: its own patch triggers a key again, and a requeueAfter forgets the attempt count, so ctx.attempt cannot tell.
    const runs = new Map<string, number>();
    running = await runController<KubeObject>({
      name: 'scraped',
      kubeConfig: server.kubeConfig(),
      logger: silentLogger,
      handleSignals: false,
      health: { port: 0, host: '127.0.0.1' },
      for: configmaps,
      concurrency: 5,
      // Long enough that no run but the one that waits for its signal comes near it on a busy machine.
      timeout: 1000,
      leaderElection: { lease: 'default/scraped', identity: 'me' },
      onOutcome: (o) => outcomes.push(o),
      reconcile: async (key, ctx) => {
        const first = (runs.set(key, (runs.get(key) ?? 0) + 1).get(key) ?? 0) === 1;
        if (key === 'default/panic' && first) throw 'a string is no Error';
        if (key === 'default/terminal') throw new TerminalError('never fixable');
        if (key === 'default/slow' && first) return new Promise<void>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
        // A read, a write and an Event: every kind of request goes through the same counted transport.
        const object = await ctx.client.get<KubeObject>({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ctx.namespace, name: ctx.name }, ctx);
        await ctx.client.patchMerge({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ctx.namespace, name: ctx.name }, { data: { seen: 'yes' } }, ctx);
        ctx.recorder.record(object, { type: 'Normal', reason: 'Seen', action: 'Reconcile' });
        return key === 'default/later' && first ? { requeueAfter: 5 } : undefined;
      },
    });
    await waitFor(
      () => ['plain', 'panic', 'slow', 'later'].every((n) => outcomes.some((o) => o.key === `default/${n}` && o.result === 'success')) && outcomes.some((o) => o.key === 'default/terminal'),
      'every key to end its story',
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}: ${JSON.stringify(outcomes.map((o) => [o.key, o.result, String(o.error)]))}`);
    });
    const response = await fetch(`${running.health?.url}/metrics`);
    const text = await response.text();
    const types = metricTypes(text);
    const all = samples(text);
    for (const [name, { type, labels }] of Object.entries(families)) {
      expect(types[name], `# TYPE of ${name}`).to.equal(type);
      const sampleName = type === 'histogram' ? `${name}_bucket` : name;
      const series = all.filter((s) => s.name === sampleName);
      expect(series.length, `samples of ${name}`).to.be.greaterThan(0);
      for (const s of series) expect(Object.keys(s.labels).filter((l) => l !== 'le'), `labels of ${name}`).to.have.members(labels);
    }
    const controller = { controller: 'scraped' };
    expect(sum(all, 'controller_runtime_reconcile_panics_total', controller)).to.equal(1);
    expect(sum(all, 'controller_runtime_reconcile_timeouts_total', controller)).to.equal(1);
    expect(sum(all, 'controller_runtime_terminal_reconcile_errors_total', controller)).to.equal(1);
    expect(sum(all, 'controller_runtime_reconcile_errors_total', controller)).to.equal(3);
    // The panic's and the timeout's rate-limited retries, and the requeueAfter.
    expect(sum(all, 'workqueue_retries_total', { name: 'scraped' })).to.equal(3);
    expect(sum(all, 'leader_election_master_status', { name: 'scraped' })).to.equal(1);
    const host = new URL(server.url).host;
    expect(sum(all, 'rest_client_requests_total', { code: '201', method: 'POST', host }), 'the Lease created').to.be.at.least(1);
    expect(sum(all, 'rest_client_requests_total', { code: '200', method: 'PATCH', host })).to.be.at.least(4);
    // Watches are counted but, as in client-go, not timed: more GETs counted than timed.
    const gets = sum(all, 'rest_client_requests_total', { method: 'GET', host });
    expect(gets).to.be.greaterThan(sum(all, 'rest_client_request_duration_seconds_count', { verb: 'GET', host }));
    // Durations measured on the high-resolution clock: none reads as 0 (the 10 ns bucket), as whole milliseconds made them.
    expect(sum(all, 'workqueue_work_duration_seconds_bucket', { name: 'scraped', le: '1e-8' })).to.equal(0);
    expect(outcomes.some((o) => !Number.isInteger(o.duration)), 'durations with a fraction of a millisecond').to.equal(true);

    // Once stopped, what it counted is what the server answered, request for request.
    const registry = running.controller.registry;
    running.stop();
    await running.done;
    running = undefined;
    expect(server.requestLog.filter((r) => r.method === 'POST' && r.path.includes('/events')).length, 'the Events sent').to.be.greaterThan(0);
    expect(server.requestLog.filter((r) => r.method === 'PUT' && r.path.includes('/leases/')).length, 'the Lease released').to.be.greaterThan(0);
    const counted = samples(await registry.metrics()).filter((s) => s.name === 'rest_client_requests_total' && s.value > 0);
    const answered = new Map<string, number>();
    for (const r of server.requestLog) answered.set(`${r.method} ${r.status}`, (answered.get(`${r.method} ${r.status}`) ?? 0) + 1);
    expect(Object.fromEntries(counted.map((s) => [`${s.labels.method} ${s.labels.code}`, s.value]))).to.deep.equal(Object.fromEntries(answered));
  });
});
