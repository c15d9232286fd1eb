import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../support/waitFor.js';

const child = new URL('../fixtures/runControllerChild.ts', import.meta.url).pathname;

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
});
