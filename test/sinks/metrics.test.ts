import { expect } from 'chai';
import { Counter, Registry, register as globalRegistry } from 'prom-client';
import { asyncScheduler, from, lastValueFrom, map, mergeMap, throwError, timer, toArray, type SchedulerLike } from 'rxjs';
import { silentLogger, exponentialFailureRateLimiter, reconcileByKey, type ReconcileOutcome, controllerMetrics, leaderMetrics, sourceMetrics } from 'rxkube';
import { testScheduler } from '../support/objects.js';
import { reconcileTimeBuckets } from '../../src/sinks/metrics/controllerMetrics.js';
import { workqueueDurationBuckets } from '../../src/sinks/metrics/workqueueMetrics.js';
import { MalformedWatchLineError } from '../../src/sources/watchLineReader.js';
import { controllerMetricTypes, metricTypes, sampleValue } from './prometheus.js';

/** A scheduler whose clock the test sets. */
function manualClock(): { scheduler: SchedulerLike; set(ms: number): void } {
  let now = 0;
  return {
    scheduler: { now: () => now, schedule: asyncScheduler.schedule.bind(asyncScheduler) },
    set: (ms) => {
      now = ms;
    },
  };
}

describe('controller metrics', () => {
  it('expose every controller-runtime and workqueue name at 0 with the controller label from the start', async () => {
    const m = controllerMetrics({ controller: 'apps', maxConcurrentReconciles: 4 });
    const text = await m.registry.metrics();
    const types = metricTypes(text);
    for (const [name, type] of Object.entries(controllerMetricTypes)) {
      expect(types[name], name).to.equal(type);
      const series = type === 'histogram' ? `${name}_count` : name;
      expect(text, name).to.match(new RegExp(`^${series}\\{[^}]*controller="apps"[^}]*\\} \\d`, 'm'));
    }
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
      expect(await sampleValue(m.registry, 'controller_runtime_reconcile_total', { controller: 'apps', result })).to.equal(0);
    }
    expect(await sampleValue(m.registry, 'controller_runtime_max_concurrent_reconciles', { controller: 'apps' })).to.equal(4);
    expect(text).to.include('workqueue_depth{name="apps",controller="apps",priority="0"} 0');
  });

  it('count outcomes by result, errors, and time reconciles in seconds with controller-runtime buckets', async () => {
    const m = controllerMetrics({ controller: 'apps' });
    const outcomes = [
      { result: 'success', duration: 3 },
      { result: 'success', duration: 7 },
      { result: 'error', duration: 20 },
      { result: 'requeue', duration: 1 },
      { result: 'requeue_after', duration: 2 },
    ] as const;
    for (const o of outcomes) m.outcome(o);
    const value = (name: string, labels: Record<string, string>) => sampleValue(m.registry, name, labels);
    expect(await value('controller_runtime_reconcile_total', { controller: 'apps', result: 'success' })).to.equal(2);
    expect(await value('controller_runtime_reconcile_total', { controller: 'apps', result: 'error' })).to.equal(1);
    expect(await value('controller_runtime_reconcile_total', { controller: 'apps', result: 'requeue' })).to.equal(1);
    expect(await value('controller_runtime_reconcile_total', { controller: 'apps', result: 'requeue_after' })).to.equal(1);
    expect(await value('controller_runtime_reconcile_errors_total', { controller: 'apps' })).to.equal(1);
    expect(await value('controller_runtime_reconcile_time_seconds_count', { controller: 'apps' })).to.equal(5);
    expect(await value('controller_runtime_reconcile_time_seconds_sum', { controller: 'apps' })).to.be.closeTo(0.033, 1e-9);
    expect(await value('controller_runtime_reconcile_time_seconds_bucket', { controller: 'apps', le: '0.005' })).to.equal(3);
    expect(await value('controller_runtime_reconcile_time_seconds_bucket', { controller: 'apps', le: '0.01' })).to.equal(4);
    const text = await m.registry.metrics();
    const bounds = [...text.matchAll(/^controller_runtime_reconcile_time_seconds_bucket\{le="([^"]+)"/gm)].map((x) => x[1]);
    expect(bounds).to.deep.equal([...reconcileTimeBuckets.map(String), '+Inf']);
  });

  it('count a dropped key as an error and as a terminal error, not as a fifth result', async () => {
    const m = controllerMetrics({ controller: 'apps' });
    m.outcome({ result: 'dropped', duration: 1 });
    expect(await sampleValue(m.registry, 'controller_runtime_reconcile_total', { controller: 'apps', result: 'error' })).to.equal(1);
    expect(await sampleValue(m.registry, 'controller_runtime_reconcile_errors_total', { controller: 'apps' })).to.equal(1);
    expect(await sampleValue(m.registry, 'controller_runtime_terminal_reconcile_errors_total', { controller: 'apps' })).to.equal(1);
    expect(await m.registry.metrics()).to.not.include('result="dropped"');
  });

  it('pass outcomes through the recordOutcomes tap unchanged while counting them', async () => {
    const m = controllerMetrics({ controller: 'apps' });
    const outcomes = [
      { key: 'a', result: 'success' as const, attempt: 0, duration: 1 },
      { key: 'b', result: 'error' as const, attempt: 2, duration: 1, error: new Error('x') },
    ];
    expect(await lastValueFrom(from(outcomes).pipe(m.recordOutcomes(), toArray()))).to.deep.equal(outcomes);
    expect(await sampleValue(m.registry, 'controller_runtime_reconcile_errors_total', { controller: 'apps' })).to.equal(1);
  });

  it('feed the workqueue metrics from the observer hooks, in seconds with client-go buckets', async () => {
    const m = controllerMetrics({ controller: 'apps' });
    const labels = { name: 'apps', controller: 'apps' };
    m.observer.added('ns/a');
    m.observer.added('ns/b');
    m.observer.priorityDepth(0, 1);
    m.observer.priorityDepth(-100, 1);
    m.observer.started('ns/a', 250);
    m.observer.activeWorkers(1);
    m.observer.priorityDepth(-100, 0);
    m.observer.finished('ns/a', 1500);
    m.observer.retried('ns/a');
    const value = (name: string, l: Record<string, string> = labels) => sampleValue(m.registry, name, l);
    expect(await value('workqueue_adds_total')).to.equal(2);
    // One series per priority, as controller-runtime's priority queue labels them.
    expect(await value('workqueue_depth', { ...labels, priority: '0' })).to.equal(1);
    expect(await value('workqueue_depth', { ...labels, priority: '-100' })).to.equal(0);
    expect(await value('workqueue_retries_total')).to.equal(1);
    expect(await value('controller_runtime_active_workers', { controller: 'apps' })).to.equal(1);
    expect(await value('workqueue_queue_duration_seconds_sum')).to.equal(0.25);
    expect(await value('workqueue_queue_duration_seconds_bucket', { ...labels, le: '0.1' })).to.equal(0);
    expect(await value('workqueue_queue_duration_seconds_bucket', { ...labels, le: '1' })).to.equal(1);
    expect(await value('workqueue_work_duration_seconds_sum')).to.equal(1.5);
    const text = await m.registry.metrics();
    const bounds = [...text.matchAll(/^workqueue_work_duration_seconds_bucket\{le="([^"]+)"/gm)].map((x) => x[1]);
    expect(bounds).to.deep.equal([...workqueueDurationBuckets.map(String), '+Inf']);
    expect(bounds[0]).to.equal('1e-8');
  });

  it('compute unfinished work and the longest running processor at scrape time from the injected clock', async () => {
    const clock = manualClock();
    const m = controllerMetrics({ controller: 'apps', scheduler: clock.scheduler, maxConcurrentReconciles: 2 });
    const labels = { name: 'apps', controller: 'apps' };
    const value = (name: string) => sampleValue(m.registry, name, labels);
    clock.set(1000);
    m.observer.started('ns/a', 0);
    clock.set(3000);
    m.observer.started('ns/b', 0);
    clock.set(6000);
    expect(await value('workqueue_unfinished_work_seconds')).to.equal(8);
    expect(await value('workqueue_longest_running_processor_seconds')).to.equal(5);
    m.observer.finished('ns/a', 5000);
    clock.set(7000);
    expect(await value('workqueue_unfinished_work_seconds')).to.equal(4);
    expect(await value('workqueue_longest_running_processor_seconds')).to.equal(4);
    m.observer.activeWorkers(0);
    expect(await value('workqueue_unfinished_work_seconds')).to.equal(0);
    expect(await value('workqueue_longest_running_processor_seconds')).to.equal(0);
  });

  it('count what reconcileByKey reports when wired as its observer and outcome tap, in virtual time', async () => {
    const scheduler = testScheduler();
    const m = controllerMetrics({ controller: 'apps', scheduler });
    const outcomes: ReconcileOutcome[] = [];
    scheduler.run(({ cold, flush }) => {
      // a fails after 2 ms on its first run and is retried 5 ms later; b waits 1 ms for the one worker.
      const reconcile = (key: string, ctx: { attempt: number }) =>
        key === 'a' && ctx.attempt === 0
          ? timer(2).pipe(mergeMap(() => throwError(() => new Error('boom'))))
          : timer(3).pipe(map(() => undefined));
      cold<string>('ab')
        .pipe(
          reconcileByKey(reconcile, {
            scheduler,
            concurrency: 1,
            rateLimiter: exponentialFailureRateLimiter(5, 1000),
            observer: m.observer,
            logger: silentLogger,
          }),
          m.recordOutcomes(),
        )
        .subscribe((o) => outcomes.push(o));
      flush();
    });
    expect(outcomes.map((o) => `${o.key}:${o.result}`)).to.deep.equal(['a:error', 'b:success', 'a:success']);
    const labels = { name: 'apps', controller: 'apps' };
    const value = (name: string, l: Record<string, string> = labels) => sampleValue(m.registry, name, l);
    expect(await value('workqueue_adds_total')).to.equal(3);
    expect(await value('workqueue_retries_total')).to.equal(1);
    expect(await value('workqueue_depth', { ...labels, priority: '0' })).to.equal(0);
    expect(await value('workqueue_queue_duration_seconds_count')).to.equal(3);
    expect(await value('workqueue_queue_duration_seconds_sum')).to.be.closeTo(0.001, 1e-12);
    expect(await value('workqueue_work_duration_seconds_sum')).to.be.closeTo(0.008, 1e-12);
    expect(await value('workqueue_unfinished_work_seconds')).to.equal(0);
    expect(await value('controller_runtime_active_workers', { controller: 'apps' })).to.equal(0);
    expect(await value('controller_runtime_reconcile_total', { controller: 'apps', result: 'success' })).to.equal(2);
    expect(await value('controller_runtime_reconcile_total', { controller: 'apps', result: 'error' })).to.equal(1);
    expect(await value('controller_runtime_reconcile_time_seconds_count', { controller: 'apps' })).to.equal(3);
  });

  it('give each controller its own new registry by default, never the global one', async () => {
    const a = controllerMetrics({ controller: 'a' });
    const b = controllerMetrics({ controller: 'a' });
    expect(a.registry).to.not.equal(b.registry);
    a.outcome({ result: 'success', duration: 1 });
    expect(await sampleValue(b.registry, 'controller_runtime_reconcile_total', { controller: 'a', result: 'success' })).to.equal(0);
    expect(globalRegistry.getSingleMetric('controller_runtime_reconcile_total')).to.equal(undefined);
  });

  it('let two controllers share one registry, each with its own series', async () => {
    const registry = new Registry();
    const clock = manualClock();
    const a = controllerMetrics({ controller: 'a', registry, scheduler: clock.scheduler });
    const b = controllerMetrics({ controller: 'b', registry, scheduler: clock.scheduler, maxConcurrentReconciles: 3 });
    a.outcome({ result: 'success', duration: 1 });
    b.outcome({ result: 'error', duration: 1 });
    a.observer.started('x', 0);
    b.observer.started('x', 0);
    clock.set(2000);
    b.observer.finished('x', 2000);
    const value = (name: string, l: Record<string, string>) => sampleValue(registry, name, l);
    expect(await value('controller_runtime_reconcile_total', { controller: 'a', result: 'success' })).to.equal(1);
    expect(await value('controller_runtime_reconcile_total', { controller: 'b', result: 'success' })).to.equal(0);
    expect(await value('controller_runtime_reconcile_errors_total', { controller: 'b' })).to.equal(1);
    expect(await value('controller_runtime_max_concurrent_reconciles', { controller: 'a' })).to.equal(1);
    expect(await value('controller_runtime_max_concurrent_reconciles', { controller: 'b' })).to.equal(3);
    b.setMaxConcurrentReconciles(5);
    expect(await value('controller_runtime_max_concurrent_reconciles', { controller: 'b' })).to.equal(5);
    expect(await value('workqueue_unfinished_work_seconds', { name: 'a', controller: 'a' })).to.equal(2);
    expect(await value('workqueue_unfinished_work_seconds', { name: 'b', controller: 'b' })).to.equal(0);
  });

  it('remove only their own series from a shared registry', async () => {
    const registry = new Registry();
    const a = controllerMetrics({ controller: 'a', registry });
    controllerMetrics({ controller: 'b', registry });
    a.remove();
    const text = await registry.metrics();
    expect(text).to.not.match(/controller="a"/);
    for (const name of Object.keys(controllerMetricTypes)) {
      const series = controllerMetricTypes[name] === 'histogram' ? `${name}_count` : name;
      expect(text, name).to.match(new RegExp(`^${series}\\{[^}]*controller="b"`, 'm'));
    }
  });

  it('refuse a registry where a name is taken by a metric of another type, saying which', () => {
    const registry = new Registry();
    new Counter({ name: 'workqueue_depth', help: 'not ours', registers: [registry] });
    expect(() => controllerMetrics({ controller: 'a', registry })).to.throw(
      /metric "workqueue_depth" is already registered on this registry as a Counter with labels \[\]; rxkube needs a Gauge/,
    );
  });

  it('refuse an empty controller name', () => {
    expect(() => controllerMetrics({ controller: '' })).to.throw(TypeError, /non-empty controller name/);
  });
});

describe('leader metrics', () => {
  it('set leader_election_master_status to 1 while leading and 0 while standing by', async () => {
    const m = leaderMetrics();
    m.setLeader('apps-lock', true);
    expect(await sampleValue(m.registry, 'leader_election_master_status', { name: 'apps-lock' })).to.equal(1);
    m.setLeader('apps-lock', false);
    expect(await sampleValue(m.registry, 'leader_election_master_status', { name: 'apps-lock' })).to.equal(0);
    expect(metricTypes(await m.registry.metrics()).leader_election_master_status).to.equal('gauge');
    m.remove('apps-lock');
    expect(await m.registry.metrics()).to.not.include('apps-lock');
  });
});

describe('source metrics', () => {
  it('count requests by verb, re-lists and restarts by reason, events by type, malformed lines, retries, and gauge the store size', async () => {
    const m = sourceMetrics();
    m.request('list', 'configmaps');
    m.request('list', 'configmaps');
    m.request('watch', 'configmaps');
    m.relist('configmaps', 'initial');
    m.relist('configmaps', 'expired');
    m.watchRestart('configmaps', 'expired');
    m.watchRestart('configmaps', 'closed');
    m.watchRestart('configmaps', 'closed');
    m.event('configmaps', 'ADDED');
    m.malformedLine('configmaps', new MalformedWatchLineError('not JSON', 0, 10));
    m.retry({ resource: 'configmaps', verb: 'watch', delayMs: 800, reason: 'error' });
    m.storeSize('configmaps', 12);
    m.storeSize('deployments.apps', 3);
    const value = (name: string, labels: Record<string, string>) => sampleValue(m.registry, name, labels);
    expect(await value('rxkube_source_list_requests_total', { resource: 'configmaps' })).to.equal(2);
    expect(await value('rxkube_source_watch_requests_total', { resource: 'configmaps' })).to.equal(1);
    expect(await value('rxkube_source_relists_total', { resource: 'configmaps', reason: 'expired' })).to.equal(1);
    expect(await value('rxkube_source_relists_total', { resource: 'configmaps', reason: 'initial' }), 'the first list is no re-list').to.equal(
      undefined,
    );
    expect(await value('rxkube_source_watch_restarts_total', { resource: 'configmaps', reason: 'closed' })).to.equal(2);
    expect(await value('rxkube_source_watch_restarts_total', { resource: 'configmaps', reason: 'expired' })).to.equal(1);
    expect(await value('rxkube_source_events_total', { resource: 'configmaps', type: 'ADDED' })).to.equal(1);
    expect(await value('rxkube_source_malformed_lines_total', { resource: 'configmaps' })).to.equal(1);
    expect(await value('rxkube_source_retries_total', { resource: 'configmaps', verb: 'watch' })).to.equal(1);
    expect(await value('rxkube_store_objects', { resource: 'configmaps' })).to.equal(12);
    expect(await value('rxkube_store_objects', { resource: 'deployments.apps' })).to.equal(3);
  });

  it('count retries after 401 and 403 by verb and code, skipped objects, and gauge whether a source is failing', async () => {
    const m = sourceMetrics();
    m.retry({ resource: 'secrets', verb: 'list', delayMs: 800, reason: '403 Forbidden: no', code: 403 });
    m.retry({ resource: 'secrets', verb: 'list', delayMs: 1600, reason: '403 Forbidden: no', code: 403 });
    m.retry({ resource: 'secrets', verb: 'watch', delayMs: 800, reason: '401 Unauthorized: no', code: 401 });
    m.retry({ resource: 'secrets', verb: 'watch', delayMs: 800, reason: '500 InternalError: no', code: 500 });
    m.skipped('secrets', { verb: 'list', bytes: 200 * 1024 * 1024 });
    const value = (name: string, labels: Record<string, string>) => sampleValue(m.registry, name, labels);
    expect(await value('rxkube_source_auth_retries_total', { resource: 'secrets', verb: 'list', code: '403' })).to.equal(2);
    expect(await value('rxkube_source_auth_retries_total', { resource: 'secrets', verb: 'watch', code: '401' })).to.equal(1);
    expect(await value('rxkube_source_auth_retries_total', { resource: 'secrets', verb: 'watch', code: '500' }), 'a 500 is no auth failure').to.equal(undefined);
    expect(await value('rxkube_source_retries_total', { resource: 'secrets', verb: 'watch' })).to.equal(2);
    expect(await value('rxkube_source_skipped_objects_total', { resource: 'secrets', verb: 'list' })).to.equal(1);
    m.status('secrets', { healthy: false });
    expect(await value('rxkube_source_failing', { resource: 'secrets' })).to.equal(1);
    m.status('secrets', { healthy: true });
    expect(await value('rxkube_source_failing', { resource: 'secrets' })).to.equal(0);
  });
});
