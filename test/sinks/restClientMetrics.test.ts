import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { createServer, type Server } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { controller, kubeClient, silentLogger } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { withProcessMetrics } from '../../src/sinks/metrics/processMetrics.js';
import { restClientDurationBuckets, restClientMetrics } from '../../src/sinks/metrics/restClientMetrics.js';
import { metricTypes, sampleValue } from './prometheus.js';

describe('rest client metrics', () => {
  it('count each answer by code, method and host, and time it by verb and host unless it is a watch', async () => {
    let now = 1000;
    const m = restClientMetrics({ clock: () => now });
    const get = m.request({ method: 'GET', host: '10.0.0.1:6443', timed: true });
    now += 0.4;
    get(200);
    get(200); // a second report of one answer changes nothing
    m.request({ method: 'POST', host: '10.0.0.1:6443', timed: true })(201);
    m.request({ method: 'GET', host: '10.0.0.1:6443', timed: false })(200);
    m.request({ method: 'PUT', host: '10.0.0.1:6443', timed: true })(0);
    const value = (name: string, labels: Record<string, string>) => sampleValue(m.registry, name, labels);
    expect(await value('rest_client_requests_total', { code: '200', method: 'GET', host: '10.0.0.1:6443' })).to.equal(2);
    expect(await value('rest_client_requests_total', { code: '201', method: 'POST', host: '10.0.0.1:6443' })).to.equal(1);
    expect(await value('rest_client_requests_total', { code: '<error>', method: 'PUT', host: '10.0.0.1:6443' })).to.equal(1);
    expect(await value('rest_client_request_duration_seconds_count', { verb: 'GET', host: '10.0.0.1:6443' }), 'the watch is not timed').to.equal(1);
    expect(await value('rest_client_request_duration_seconds_sum', { verb: 'GET', host: '10.0.0.1:6443' })).to.be.closeTo(0.0004, 1e-12);
    expect(await value('rest_client_request_duration_seconds_bucket', { verb: 'GET', host: '10.0.0.1:6443', le: '0.005' })).to.equal(1);
    const types = metricTypes(await m.registry.metrics());
    expect(types).to.include({ rest_client_requests_total: 'counter', rest_client_request_duration_seconds: 'histogram' });
    expect(restClientDurationBuckets).to.deep.equal([0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60]);
  });

  describe('fed by the HTTP transport', () => {
    let server: ApiServer;
    let refusing: Server;
    beforeEach(async () => {
      server = await startApiServer({ logger: silentLogger });
      refusing = createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    });
    afterEach(async () => {
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
      await server.close();
    });

    it('count what the server answered, 404s included, and a request that got no answer as <error>', async () => {
      const m = restClientMetrics();
      const client = kubeClient(server.kubeConfig(), { logger: silentLogger, requests: m });
      await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' } });
      await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'missing' }).catch(() => undefined);
      const host = new URL(server.url).host;
      expect(await sampleValue(m.registry, 'rest_client_requests_total', { code: '201', method: 'POST', host })).to.equal(1);
      expect(await sampleValue(m.registry, 'rest_client_requests_total', { code: '404', method: 'GET', host })).to.equal(1);

      const address = refusing.address() as { port: number };
      const kc = new KubeConfig();
      kc.loadFromOptions({
        // skipTLSVerify: client-node refuses plain HTTP otherwise.
        clusters: [{ name: 'c', server: `http://127.0.0.1:${address.port}`, skipTLSVerify: true }],
        users: [{ name: 'u' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      const broken = kubeClient(kc, { logger: silentLogger, requests: m, maxThrottleRetries: 0 });
      await broken.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'a' }).catch(() => undefined);
      expect(await sampleValue(m.registry, 'rest_client_requests_total', { code: '<error>', method: 'GET', host: `127.0.0.1:${address.port}` })).to.be.at.least(1);
    });
  });
});

describe('process metrics', () => {
  const kubeConfig = (): KubeConfig => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  };
  const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
  const make = (options: { registry?: Registry; processMetrics?: boolean } = {}) =>
    controller({ name: 'p', kubeConfig: kubeConfig(), for: configmaps, logger: silentLogger, reconcile: () => undefined, ...options });

  it("are on the registry a controller makes: prom-client's process_* and nodejs_* metrics", async () => {
    const types = metricTypes(await make().registry.metrics());
    expect(types).to.include({
      process_cpu_seconds_total: 'counter',
      process_resident_memory_bytes: 'gauge',
      process_open_fds: 'gauge',
      nodejs_eventloop_lag_seconds: 'gauge',
      nodejs_heap_size_used_bytes: 'gauge',
    });
  });

  it("leave a caller's registry as its owner made it, unless asked, and are added once however many ask", async () => {
    const own = new Registry();
    make({ registry: own });
    expect(own.getSingleMetric('process_cpu_seconds_total')).to.equal(undefined);
    make({ registry: own, processMetrics: true });
    make({ registry: own, processMetrics: true });
    withProcessMetrics(own);
    const text = await own.metrics();
    expect(text.match(/^# TYPE process_cpu_seconds_total /gm)).to.have.length(1);
    // One set of collectors for the process, on every registry that asks: N controllers do not start N event-loop monitors.
    expect(make().registry.getSingleMetric('nodejs_eventloop_lag_seconds')).to.equal(own.getSingleMetric('nodejs_eventloop_lag_seconds'));
    const mine = make({ processMetrics: false }).registry;
    expect(mine.getSingleMetric('process_cpu_seconds_total')).to.equal(undefined);
  });

  it('say what is wrong with a registry that holds one of their names from elsewhere', () => {
    const taken = new Registry();
    new Counter({ name: 'process_cpu_user_seconds_total', help: 'mine', registers: [taken] });
    expect(() => withProcessMetrics(taken)).to.throw(/cannot add prom-client's default process and nodejs metrics to this registry: .*process_cpu_user_seconds_total/);
  });
});
