import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { waitFor } from '../support/waitFor.js';

const child = new URL('../fixtures/runControllerChild.ts', import.meta.url).pathname;
const recorderChild = new URL('../fixtures/recorderChild.ts', import.meta.url).pathname;
const signalsChild = new URL('../fixtures/runControllerSignalsChild.ts', import.meta.url).pathname;

describe('runController in its own process', () => {
  let server: ApiServer;

  beforeEach(async () => {
    server = await startApiServer();
  });

  afterEach(async () => {
    await server.close();
  });

  it('serves health and metrics, and on SIGTERM finishes the reconcile in flight and exits by itself', async () => {
    await server.kubeConfig().makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    const proc = spawn(process.execPath, ['--import', 'tsx', child, server.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    const said: Record<string, unknown>[] = [];
    createInterface(proc.stdout).on('line', (line) => said.push(JSON.parse(line) as Record<string, unknown>));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));

    await waitFor(() => said.some((s) => s.reconciling === 'default/a'), 'the reconcile to start', 20_000);
    const url = said.find((s) => 'health' in s)?.health as string;
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).to.equal(200);
    expect(await (await fetch(`${url}/metrics`)).text()).to.contain('controller_runtime_reconcile_total{controller="child"');

    proc.kill('SIGTERM');
    const code = await exited;
    expect(code).to.equal(0);
    const order = said.filter((s) => !('health' in s)).map((s) => Object.keys(s)[0]);
    expect(order).to.deep.equal(['reconciling', 'reconciled', 'done']);
    await waitFor(() => server.openWatches() === 0, 'the watch to close');
  });

  it('on a second SIGTERM ends the grace period at once: the run in flight is aborted and the process exits by itself', async () => {
    await server.kubeConfig().makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    const proc = spawn(process.execPath, ['--import', 'tsx', signalsChild, server.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const said: Record<string, unknown>[] = [];
      createInterface(proc.stdout).on('line', (line) => said.push(JSON.parse(line) as Record<string, unknown>));
      const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
      await waitFor(() => said.some((s) => s.reconciling === 'default/a'), 'the reconcile to start', 20_000);
      proc.kill('SIGTERM');
      // The first signal starts a graceful shutdown: the run, ten minutes of grace ahead of it, goes on.
      await waitFor(() => said.some((s) => s.log === 'shutting down: no key starts any more'), 'the shutdown to begin');
      expect(said.some((s) => 'aborted' in s)).to.equal(false);
      proc.kill('SIGTERM');
      expect(await exited).to.equal(0);
      const events = said.filter((s) => !('log' in s)).map((s) => Object.keys(s)[0]);
      expect(events).to.deep.equal(['reconciling', 'aborted', 'done']);
      expect(said.map((s) => s.log)).to.include('asked again: aborting reconciles in flight now');
    } finally {
      proc.kill('SIGKILL');
    }
  });

  it('closes its own Event recorder before done settles, so an Event waiting for a retry cannot keep the process alive', async () => {
    await server.kubeConfig().makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    server.faults.failNext(1, { code: 503, message: 'busy', verb: 'create', resource: 'events' });
    const proc = spawn(process.execPath, ['--import', 'tsx', recorderChild, server.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    // The recorder retries 10 s apart: a process held by that timer would still be running at this deadline.
    const code = await Promise.race([
      new Promise<number | null>((resolve) => proc.on('exit', resolve)),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 8_000).unref()),
    ]);
    if (code === 'hung') proc.kill();
    expect(code).to.equal(0);
    expect(out).to.equal('done\n');
    expect(server.requestLog.filter((r) => r.verb === 'create' && r.resource === 'events').map((r) => r.status)).to.include(503);
  });
});
