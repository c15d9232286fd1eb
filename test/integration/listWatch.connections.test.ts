import { expect } from 'chai';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Subscription } from 'rxjs';
import { listWatch, type ListWatchEvent } from 'rxkube';
import { KeepAliveAgent } from '../../src/sources/keepAliveAgent.js';
import { kubeConfigFor } from '../support/kubeConfigFor.js';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';

/**
 * The pages of a list share one kept connection (client-node's kubeconfig
 * makes a new agent, so a new connection, for every request), and a
 * source that stops leaves no connection open.
 */
describe('listWatch connections', () => {
  const PODS = 12;
  let server: http.Server;
  let opened = 0;
  const open = new Set<import('node:net').Socket>();
  let running: Subscription | undefined;

  beforeEach(async () => {
    opened = 0;
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // The watch stays open and silent: the test only counts connections.
      if (url.searchParams.get('watch') !== null) return void res.write('');
      const from = Number(url.searchParams.get('continue') ?? 0);
      const to = Math.min(PODS, from + Number(url.searchParams.get('limit')));
      const items = Array.from({ length: to - from }, (_, i) => ({ metadata: { name: `p${from + i}`, namespace: 'n', resourceVersion: String(from + i + 1) } }));
      const cont = to < PODS ? { continue: String(to) } : {};
      res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: String(PODS), ...cont }, items }));
    });
    server.on('connection', (socket) => {
      opened++;
      open.add(socket);
      socket.on('close', () => open.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    running?.unsubscribe();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('lists every page over one connection, watches over another, and closes both once unsubscribed', async () => {
    const kc = kubeConfigFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const events: ListWatchEvent[] = [];
    running = listWatch(kc, { version: 'v1', resource: 'pods' }, { pageSize: 3, scheduler: dilatedScheduler(100) }).subscribe((e) => events.push(e));
    await waitFor(() => events.some((e) => e.type === 'Synced') && open.size === 2, 'the list and the open watch');
    expect(events.filter((e) => e.type === 'Listed')).to.have.length(PODS);
    // Four pages and a watch: two connections, where one per request made five.
    expect(opened).to.equal(2);
    running.unsubscribe();
    await waitFor(() => open.size === 0, 'every connection closed');
  });

  it('keeps its agent while the TLS material is the same, and makes a new one when it changes', () => {
    const agent = new KeepAliveAgent();
    const given = (cert: string) => ({ agent: new https.Agent({ cert }), cert: Buffer.from(cert) });
    const first = given('a');
    agent.apply(first);
    const kept = first.agent;
    expect(kept).to.be.instanceOf(https.Agent).and.to.have.property('keepAlive', true);
    const again = given('a');
    agent.apply(again);
    expect(again.agent).to.equal(kept);
    const rotated = given('b');
    agent.apply(rotated);
    expect(rotated.agent).to.be.instanceOf(https.Agent);
    expect(rotated.agent).to.not.equal(kept);
    agent.destroy();
  });

  it('leaves an agent that is not a plain http(s) one (a proxy) as the kubeconfig made it', () => {
    class ProxyAgent extends http.Agent {}
    const options = { agent: new ProxyAgent() };
    const proxy = options.agent;
    new KeepAliveAgent().apply(options);
    expect(options.agent).to.equal(proxy);
  });
});
