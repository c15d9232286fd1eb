import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { waitFor } from '../support/waitFor.js';

const child = new URL('../fixtures/listWatchChild.ts', import.meta.url).pathname;

describe('listWatch in its own process', () => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it('leaves nothing to keep the process alive once unsubscribed', async () => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, server.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', resolve));
    await waitFor(() => out.includes('Synced') && server.openWatches() === 1, 'the watch', 20_000);
    await server.kubeConfig().makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    // The idle check alone (60 s) or an open socket would hold the process far past this deadline.
    const code = await Promise.race([exited, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 15_000).unref())]);
    if (code === 'hung') proc.kill();
    expect(code).to.equal(0);
    expect(out.split('\n').filter(Boolean)).to.deep.equal(['Restart', 'Synced', 'Added']);
  });
});
