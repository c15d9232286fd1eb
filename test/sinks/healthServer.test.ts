import { expect } from 'chai';
import { Counter, Registry } from 'prom-client';
import { startHealthServer, silentLogger } from 'rxkube';
import { type HealthServer } from '../../src/sinks/metrics/healthServer.js';

function tcpHandles(): number {
  return process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP')).length;
}

describe('health server', () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('serves the registry at /metrics in the Prometheus text format with its Content-Type', async () => {
    const registry = new Registry();
    new Counter({ name: 'things_total', help: 'Things', registers: [registry] }).inc(3);
    server = await startHealthServer({ port: 0, host: '127.0.0.1', registry, logger: silentLogger });
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).to.include('# TYPE things_total counter');
    expect(text).to.include('things_total 3');
  });

  it('answers 200 ok on /healthz and /readyz when every check passes, sync or async', async () => {
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      checks: { healthz: () => true, readyz: { synced: async () => true, leader: () => true } },
      logger: silentLogger,
    });
    for (const path of ['/healthz', '/readyz']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).to.equal(200);
      expect(await res.text(), path).to.equal('ok');
    }
    const verbose = await fetch(`${server.url}/readyz?verbose`);
    expect(await verbose.text()).to.equal('[+]synced ok\n[+]leader ok\nreadyz check passed\n');
  });

  it('answers 503 naming the failing checks, with a throw, a false and a timeout each counted as failed', async () => {
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      checkTimeout: 20,
      checks: {
        readyz: {
          synced: () => false,
          leader: () => true,
          informer: () => {
            throw new Error('watch of configmaps is down');
          },
          slow: () => new Promise<boolean>(() => {}),
        },
      },
      logger: silentLogger,
    });
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).to.equal(503);
    expect(await res.text()).to.equal(
      '[-]synced failed\n[+]leader ok\n[-]informer failed: watch of configmaps is down\n[-]slow failed: timed out after 20 ms\n' +
        'readyz check failed: synced, informer, slow\n',
    );
    const healthz = await fetch(`${server.url}/healthz`);
    expect(healthz.status, 'healthz has no checks, so the process being up is enough').to.equal(200);
  });

  it('follows a check as it changes between probes', async () => {
    let synced = false;
    server = await startHealthServer({ port: 0, host: '127.0.0.1', checks: { readyz: { synced: () => synced } }, logger: silentLogger });
    expect((await fetch(`${server.url}/readyz`)).status).to.equal(503);
    synced = true;
    expect((await fetch(`${server.url}/readyz`)).status).to.equal(200);
  });

  it('answers 404 for other paths and for /metrics without a registry, 405 for other methods', async () => {
    server = await startHealthServer({ port: 0, host: '127.0.0.1', logger: silentLogger });
    expect((await fetch(`${server.url}/nope`)).status).to.equal(404);
    expect((await fetch(`${server.url}/metrics`)).status).to.equal(404);
    const post = await fetch(`${server.url}/healthz`, { method: 'POST' });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('GET, HEAD');
    const head = await fetch(`${server.url}/healthz`, { method: 'HEAD' });
    expect(head.status).to.equal(200);
  });

  it('says which address it could not listen on', async () => {
    server = await startHealthServer({ port: 0, host: '127.0.0.1', logger: silentLogger });
    let caught: unknown;
    try {
      await startHealthServer({ port: server.port, host: '127.0.0.1', logger: silentLogger });
    } catch (err) {
      caught = err;
    }
    expect((caught as Error).message).to.match(new RegExp(`^health server cannot listen on 127.0.0.1:${server.port}: .*EADDRINUSE`));
  });

  it('ends a probe still in flight on close instead of waiting for its check', async () => {
    let checking!: () => void;
    const checkStarted = new Promise<void>((resolve) => (checking = resolve));
    const s = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      checkTimeout: 10 * 60_000,
      checks: {
        readyz: () => {
          checking();
          return new Promise<boolean>(() => {});
        },
      },
      logger: silentLogger,
    });
    const probe = fetch(`${s.url}/readyz`).then(
      () => 'answered',
      () => 'connection closed',
    );
    await checkStarted;
    await s.close();
    expect(await probe).to.equal('connection closed');
  });

  it('leaves no socket or server handle open after close, even with a keep-alive connection', async () => {
    const before = tcpHandles();
    const s = await startHealthServer({ port: 0, host: '127.0.0.1', logger: silentLogger });
    const res = await fetch(`${s.url}/healthz`, { headers: { connection: 'keep-alive' } });
    await res.text();
    expect(tcpHandles()).to.be.greaterThan(before);
    await s.close();
    await s.close();
    // Handles are released in the close phase of the event loop after close() resolves; give it a few turns.
    for (let turn = 0; turn < 20 && tcpHandles() > before; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(tcpHandles()).to.equal(before);
  });
});
