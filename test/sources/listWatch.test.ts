import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { asyncScheduler, type Subscription } from 'rxjs';
import { silentLogger, listWatch, type ListWatchOptions, dropManagedFields, type KubeObject, type ListWatchEvent } from 'rxkube';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';

/**
 * listWatch against answers no real API server gives (the embedded one cannot be made to):
 * a tiny node:http server plays one scripted answer per request and holds the requests after.
 */

type Play = (res: ServerResponse) => void;

describe('listWatch on answers a real API server does not give', () => {
  let server: Server;
  let kubeConfig: KubeConfig;
  let script: Play[] = [];
  let requests: URL[] = [];
  let subscription: Subscription | undefined;

  beforeEach(async () => {
    script = [];
    requests = [];
    server = createServer((req, res) => {
      requests.push(new URL(req.url ?? '/', 'http://x'));
      script.shift()?.(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'f', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'f' }],
      contexts: [{ name: 'f', cluster: 'f', user: 'f' }],
      currentContext: 'f',
    });
  });

  afterEach(async () => {
    subscription?.unsubscribe();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  function run(options: ListWatchOptions<KubeObject> = {}) {
    const events: ListWatchEvent[] = [];
    const state: { error?: unknown } = {};
    subscription = listWatch(kubeConfig, { version: 'v1', resource: 'configmaps' }, {
      scheduler: dilatedScheduler(100),
      backoff: { initialMs: 1, maxMs: 5 },
      logger: silentLogger,
      ...options,
    }).subscribe({ next: (e) => events.push(e), error: (e: unknown) => (state.error = e) });
    return { events, state };
  }

  const json = (status: number, body: unknown, headers: Record<string, string> = {}): Play => (res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  it('waits out a Retry-After longer than a Node timer can hold rather than retrying at once', async () => {
    script.push(json(429, { kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' }, { 'Retry-After': '9999999999' }));
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const delays: number[] = [];
      run({ scheduler: asyncScheduler, monitor: { retry: (info) => delays.push(info.delayMs) } });
      await waitFor(() => delays.length > 0, 'the retry');
      await new Promise((resolve) => setImmediate(resolve));
      expect(delays).to.deep.equal([2 ** 31 - 1]);
      expect(warnings.map((w) => w.name)).to.deep.equal([]);
      expect(requests).to.have.length(1);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('skips list items that are not objects and lists the rest, even from a page whose kind is mistyped', async () => {
    script.push(json(200, { kind: 5, apiVersion: 7, metadata: { resourceVersion: '3' }, items: [null, '', 5, [], { metadata: { name: 'a', managedFields: [{}] } }] }));
    const { events, state } = run({ transform: dropManagedFields });
    await waitFor(() => events.some((e) => e.type === 'Synced'), 'the list');
    expect(state.error).to.equal(undefined);
    expect(events).to.deep.equal([{ type: 'Restart' }, { type: 'Listed', object: { metadata: { name: 'a' } } }, { type: 'Synced', resourceVersion: '3' }]);
  });

  it('sends nothing more once unsubscribed while a page is being emitted', async () => {
    script.push(json(200, { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '3' }, items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }] }));
    const sent: string[] = [];
    const listed: string[] = [];
    subscription = listWatch(kubeConfig, { version: 'v1', resource: 'configmaps' }, { logger: silentLogger, monitor: { request: (verb) => sent.push(verb) } }).subscribe((e) => {
      if (e.type !== 'Listed') return;
      listed.push(e.object.metadata.name as string);
      subscription?.unsubscribe();
    });
    await waitFor(() => listed.length > 0, 'the first object');
    // Whatever would follow (a watch request) starts within a few turns of the event loop.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(listed).to.deep.equal(['a']);
    expect(sent).to.deep.equal(['list']);
    expect(requests).to.have.length(1);
  });

  it('ends at once with an error naming the fault when the kubeconfig has no current cluster', async () => {
    const empty = new KubeConfig();
    empty.loadFromOptions({ clusters: [], users: [], contexts: [], currentContext: '' });
    let error: unknown;
    subscription = listWatch(empty, { version: 'v1', resource: 'pods' }, { logger: silentLogger }).subscribe({ error: (e: unknown) => (error = e) });
    await waitFor(() => error !== undefined, 'the error');
    expect((error as Error).message).to.equal('cannot list pods in all namespaces: the kubeconfig has no current cluster: set a current context with a cluster');
    expect(requests).to.deep.equal([]);
  });
});
