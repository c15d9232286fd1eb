import { expect } from 'chai';
import { Registry } from 'prom-client';
import { Subject, firstValueFrom, take, toArray } from 'rxjs';
import { silentLogger, exponentialFailureRateLimiter, reconcileByKey, kubeClient, startHealthServer, leaderMetrics, controllerMetrics, setControllerReference, splitKey, type KubeObject, listWatch, sourceMetrics } from 'rxkube';
import { type HealthServer } from '../../src/sinks/metrics/healthServer.js';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { type WatchRestartReason } from '../../src/sources/listWatch.js';
import { controllerMetricTypes, metricTypes, sampleValue } from '../sinks/prometheus.js';

describe('metrics of a controller, scraped over HTTP', () => {
  let server: ApiServer;
  let health: HealthServer | undefined;

  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
  });
  afterEach(async () => {
    await health?.close();
    health = undefined;
    await server.close();
  });

  it('serves every name of DESIGN invariant 18 with the controller label and its type after reconciles against the API server', async () => {
    const client = kubeClient(server.kubeConfig(), { logger: silentLogger });
    const registry = new Registry();
    const metrics = controllerMetrics({ controller: 'app-controller', registry, maxConcurrentReconciles: 2 });
    const leader = leaderMetrics(registry);
    leader.setLeader('app-controller-lock', true);
    for (const name of ['a', 'b']) {
      await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { size: '1' } });
    }
    let failures = 0;
    // Makes a child for each parent; the first attempt at "b" fails, to exercise retries and error counts.
    const reconcile = async (key: string, ctx: { signal: AbortSignal }): Promise<void> => {
      const { namespace, name } = splitKey(key);
      const parent = await client.get<KubeObject>({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace }, ctx);
      if (name === 'b' && failures++ === 0) throw new Error('first attempt fails');
      const child: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-child`, namespace } };
      await client.createOrUpdate(child, (c) => setControllerReference(parent, c), ctx);
    };
    const keys = new Subject<string>();
    const outcomes = firstValueFrom(
      keys.pipe(
        reconcileByKey(reconcile, {
          concurrency: 2,
          rateLimiter: exponentialFailureRateLimiter(1, 10),
          observer: metrics.observer,
          logger: silentLogger,
        }),
        metrics.recordOutcomes(),
        take(3),
        toArray(),
      ),
    );
    keys.next('default/a');
    keys.next('default/b');
    expect((await outcomes).map((o) => `${o.key}:${o.result}`).sort()).to.deep.equal([
      'default/a:success',
      'default/b:error',
      'default/b:success',
    ]);

    const children = server.snapshot({ group: '', version: 'v1', resource: 'configmaps', namespace: 'default' }).filter((o) =>
      o.metadata.name?.endsWith('-child'),
    );
    expect(children.map((c) => `${c.metadata.name}<-${c.metadata.ownerReferences?.[0]?.name}`).sort()).to.deep.equal(['a-child<-a', 'b-child<-b']);

    health = await startHealthServer({ port: 0, host: '127.0.0.1', registry, logger: silentLogger });
    const response = await fetch(`${health.url}/metrics`);
    expect(response.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    const types = metricTypes(text);
    for (const [name, type] of Object.entries(controllerMetricTypes)) {
      expect(types[name], `# TYPE of ${name}`).to.equal(type);
      const sample = type === 'histogram' ? `${name}_count` : name;
      expect(text, name).to.match(new RegExp(`^${sample}\\{[^}]*controller="app-controller"[^}]*\\} [0-9.e+-]+$`, 'm'));
    }
    expect(types.leader_election_master_status).to.equal('gauge');
    expect(text).to.include('leader_election_master_status{name="app-controller-lock"} 1');
    expect(text).to.include('controller_runtime_reconcile_total{controller="app-controller",result="success"} 2');
    expect(text).to.include('controller_runtime_reconcile_total{controller="app-controller",result="error"} 1');
    expect(text).to.include('controller_runtime_reconcile_errors_total{controller="app-controller"} 1');
    expect(text).to.include('controller_runtime_max_concurrent_reconciles{controller="app-controller"} 2');
    expect(text).to.include('controller_runtime_active_workers{controller="app-controller"} 0');
    expect(text).to.include('workqueue_adds_total{name="app-controller",controller="app-controller"} 3');
    expect(text).to.include('workqueue_retries_total{name="app-controller",controller="app-controller"} 1');
    expect(text).to.include('workqueue_depth{name="app-controller",controller="app-controller",priority="0"} 0');
    expect(text).to.include('controller_runtime_reconcile_time_seconds_count{controller="app-controller"} 3');
    expect(text).to.include('workqueue_work_duration_seconds_count{name="app-controller",controller="app-controller"} 3');
    keys.complete();
  });
});

describe('source metrics fed by a real listWatch', () => {
  let server: ApiServer;

  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
  });
  afterEach(() => server.close());

  it('count the list, the watch, its events, a restart and the re-list after expired history', async () => {
    const client = kubeClient(server.kubeConfig(), { logger: silentLogger });
    const metrics = sourceMetrics();
    await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' } });
    const seen: string[] = [];
    const configmaps = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };
    const monitor = {
      ...metrics,
      watchRestart: (resource: string, reason: WatchRestartReason) => {
        metrics.watchRestart(resource, reason);
        // Before the watch resumes: a change, then its history compacted away, so the resume gets 410.
        server.put(configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } });
        server.faults.compact();
      },
    };
    const subscription = listWatch(server.kubeConfig(), configmaps, { monitor, logger: silentLogger, backoff: { initialMs: 1 } }).subscribe((e) => seen.push(e.type === 'Listed' || e.type === 'Added' ? `${e.type}:${e.object.metadata.name}` : e.type));
    try {
      await waitUntil(() => seen.includes('Synced') && server.openWatches() === 1);
      await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', namespace: 'default' } });
      await waitUntil(() => seen.includes('Added:b'));
      server.faults.closeWatches();
      await waitUntil(() => seen.filter((t) => t === 'Synced').length === 2);
    } finally {
      subscription.unsubscribe();
    }
    const value = (name: string, labels: Record<string, string>) => sampleValue(metrics.registry, name, labels);
    expect(await value('rxkube_source_list_requests_total', { resource: 'configmaps' })).to.equal(2);
    expect(await value('rxkube_source_watch_requests_total', { resource: 'configmaps' })).to.be.at.least(2);
    expect(await value('rxkube_source_events_total', { resource: 'configmaps', type: 'ADDED' })).to.equal(1);
    expect(await value('rxkube_source_watch_restarts_total', { resource: 'configmaps', reason: 'closed' })).to.equal(1);
    expect(await value('rxkube_source_relists_total', { resource: 'configmaps', reason: 'expired' })).to.equal(1);
  });
});

/** Waits for a condition over event-loop turns and short sleeps, failing after a bound rather than hanging. */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  expect(condition(), 'condition reached').to.equal(true);
}
