import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import * as diagnostics from 'node:diagnostics_channel';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Subscription } from 'rxjs';
import { listWatch, type ListWatchEvent } from 'rxkube';
import { selfSignedCertificates } from 'rxkube/webhooks';
import { directGet, type DirectGetHandlers } from '../../src/sources/directGet.js';
import { requestTarget } from '../../src/sources/http.js';
import type { ResponseHead } from '../../src/sources/responseFraming.js';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';

/** A kubeconfig for `server` that trusts `ca` and sends `token`, and (with `proxy`) goes through that proxy. */
function kubeConfig(server: string, ca: string | undefined, token: string, proxy?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, ...(ca === undefined ? { skipTLSVerify: true } : { caData: Buffer.from(ca).toString('base64') }), ...(proxy === undefined ? {} : { proxyUrl: proxy }) }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const pod = (name: string, rv: number) => ({ metadata: { name, namespace: 'n', uid: `uid-${name}`, resourceVersion: String(rv) }, spec: { nodeName: 'node-1' } });

/** A pods collection: a list of two, and a watch that sends one MODIFIED event then stays open. Each request's head is kept. */
function podsHandler(seen: http.IncomingMessage[]): http.RequestListener {
  return (req, res) => {
    seen.push(req);
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/api/v1/pods') return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (url.searchParams.get('watch') === null) {
      res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '2' }, items: [pod('a', 1), pod('b', 2)] }));
      return;
    }
    // In two writes, the second cutting the event in half: a read may end anywhere.
    const line = `${JSON.stringify({ type: 'MODIFIED', object: { ...pod('a', 3), apiVersion: 'v1', kind: 'Pod' } })}\n`;
    res.write(line.slice(0, 40));
    setTimeout(() => res.write(line.slice(40)), 20);
  };
}

/** The paths node:http sends requests to `port` for, while `body` runs (other tests' sources may still be sending theirs). */
async function nodeHttpRequests(port: string, body: (paths: string[]) => Promise<void>): Promise<void> {
  const paths: string[] = [];
  const onStart = (message: unknown) => {
    const { request } = message as { request: http.ClientRequest };
    if (String(request.getHeader('host')).endsWith(`:${port}`)) paths.push(request.path);
  };
  diagnostics.subscribe('http.client.request.start', onStart);
  try {
    await body(paths);
  } finally {
    diagnostics.unsubscribe('http.client.request.start', onStart);
  }
}

/** What `directGet` told its handlers, once it has closed. */
function get(url: string, options: https.RequestOptions): Promise<{ head?: ResponseHead; body: string; error?: Error }> {
  return new Promise((resolve) => {
    let head: ResponseHead | undefined;
    let body = '';
    const handlers: DirectGetHandlers = {
      head: (h) => (head = h),
      body: (chunk) => (body += chunk.toString('utf8')),
      end: () => {},
      closed: (error) => resolve({ ...(head === undefined ? {} : { head }), body, ...(error === undefined ? {} : { error }) }),
    };
    directGet(new URL(url), options, new AbortController().signal, handlers);
  });
}

const listening = (server: net.Server) => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(String((server.address() as AddressInfo).port))));
const closing = (server: net.Server) => new Promise((resolve) => server.close(resolve));

describe('a watch read from its own connection (directGet), not through node:http', () => {
  const servers: net.Server[] = [];
  let running: Subscription | undefined;
  /** A server that answers anything empty, and counts the connections made to it. */
  const countingServer = async (): Promise<{ port: string; connections: () => number }> => {
    let connections = 0;
    const server = http.createServer((_req, res) => res.end());
    server.on('connection', () => connections++);
    servers.push(server);
    return { port: await listening(server), connections: () => connections };
  };
  afterEach(async () => {
    running?.unsubscribe();
    running = undefined;
    for (const server of servers.splice(0)) {
      (server as http.Server).closeAllConnections?.();
      await closing(server);
    }
  });

  it('watches over TLS verified against the kubeconfig CA, with its token, lines cut anywhere, and node:http sends only the list', async () => {
    const certificates = await selfSignedCertificates({ dnsNames: ['localhost'] });
    const seen: http.IncomingMessage[] = [];
    const server = https.createServer({ cert: certificates.cert, key: certificates.key }, podsHandler(seen));
    servers.push(server);
    const port = await listening(server);
    const events: ListWatchEvent[] = [];
    await nodeHttpRequests(port, async (paths) => {
      running = listWatch(kubeConfig(`https://localhost:${port}`, certificates.caCert, 'secret-token'), { version: 'v1', resource: 'pods' }, { scheduler: dilatedScheduler(100) }).subscribe((e) => events.push(e));
      await waitFor(() => events.some((e) => e.type === 'Modified'), 'the watch event');
      expect(paths.map((p) => new URL(p, 'http://x').searchParams.has('watch'))).to.deep.equal([false]);
    });
    const modified = events.find((e) => e.type === 'Modified') as ListWatchEvent & { object: { metadata: { resourceVersion: string }; spec: unknown } };
    expect(modified.object.metadata.resourceVersion).to.equal('3');
    expect(modified.object.spec).to.deep.equal({ nodeName: 'node-1' });
    const watch = seen.find((r) => r.url?.includes('watch=')) as http.IncomingMessage;
    expect(watch.headers.authorization).to.equal('Bearer secret-token');
    expect(watch.headers.host).to.equal(`localhost:${port}`);
    expect(watch.headers.accept).to.match(/application\/json/);
  });

  it('refuses a server whose certificate the kubeconfig CA did not sign, naming why', async () => {
    const served = await selfSignedCertificates({ dnsNames: ['localhost'] });
    const other = await selfSignedCertificates({ dnsNames: ['localhost'] });
    const seen: http.IncomingMessage[] = [];
    const server = https.createServer({ cert: served.cert, key: served.key }, podsHandler(seen));
    servers.push(server);
    const port = await listening(server);
    const { url, options } = await requestTarget(kubeConfig(`https://localhost:${port}`, other.caCert, 't'), '/api/v1/pods', new URLSearchParams({ watch: '1' }), 'application/json');
    const got = await get(url.href, options);
    expect(got.head).to.equal(undefined);
    expect(got.error?.message).to.match(/certificate/);
    expect(seen).to.have.length(0);
  });

  it('goes through node:http when the kubeconfig names a proxy, and the proxy carries the watch', async () => {
    const seen: http.IncomingMessage[] = [];
    const api = http.createServer(podsHandler(seen));
    servers.push(api);
    const apiPort = await listening(api);
    /** The api server's ports of the connections the proxy made for its tunnels. */
    const tunnels: number[] = [];
    // A proxy as client-node's proxy agent (hpagent) uses one: a CONNECT tunnel per connection.
    const proxy = http.createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      const [host, port] = (req.url ?? '').split(':');
      const upstream = net.connect(Number(port), host, () => {
        tunnels.push(upstream.localPort as number);
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
    });
    const proxyPort = await listening(proxy);
    const events: ListWatchEvent[] = [];
    await nodeHttpRequests(apiPort, async (paths) => {
      running = listWatch(kubeConfig(`http://127.0.0.1:${apiPort}`, undefined, 't', `http://127.0.0.1:${proxyPort}`), { version: 'v1', resource: 'pods' }, { scheduler: dilatedScheduler(100) }).subscribe((e) => events.push(e));
      await waitFor(() => events.some((e) => e.type === 'Modified'), 'the watch event through the proxy');
      expect(paths.filter((p) => p.includes('watch='))).to.have.length(1);
    });
    const watch = seen.find((r) => r.url?.includes('watch=')) as http.IncomingMessage;
    expect(tunnels).to.include(watch.socket.remotePort);
  });

  it('refuses a header node:http would refuse, naming it, without connecting', async () => {
    const { port, connections } = await countingServer();
    const got = await get(`http://127.0.0.1:${port}/api/v1/pods?watch=1`, { headers: { 'X-Token': 'a\r\nInjected: yes' }, agent: new http.Agent() });
    expect(got.error).to.be.instanceOf(TypeError);
    expect(got.error?.message).to.equal('invalid character in the value of header "X-Token"');
    expect(connections()).to.equal(0);
  });

  it('opens no connection for a request stopped before it was sent', async () => {
    const { port, connections } = await countingServer();
    const stopped = new AbortController();
    stopped.abort();
    // Every socket net.connect makes, connected or not, counted while directGet runs (synchronously: no other test's socket can come in between).
    let sockets = 0;
    const onSocket = () => sockets++;
    let closed: { error: Error | undefined; head: boolean } | undefined;
    let head = false;
    diagnostics.subscribe('net.client.socket', onSocket);
    try {
      directGet(new URL(`http://127.0.0.1:${port}/api/v1/pods?watch=1`), { agent: new http.Agent() }, stopped.signal, {
        head: () => (head = true),
        body: () => {},
        end: () => {},
        closed: (error) => (closed = { error, head }),
      });
    } finally {
      diagnostics.unsubscribe('net.client.socket', onSocket);
    }
    expect(sockets).to.equal(0);
    expect(closed).to.deep.equal({ error: undefined, head: false });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(connections()).to.equal(0);
  });

  it('names a refused connection, and bytes that are not HTTP', async () => {
    const closed = net.createServer();
    const closedPort = await listening(closed);
    await closing(closed);
    const refused = await get(`http://127.0.0.1:${closedPort}/`, { agent: new http.Agent() });
    expect(refused.error?.message).to.match(/ECONNREFUSED/);
    const ssh = net.createServer((socket) => socket.resume().end('SSH-2.0-OpenSSH_9.6\r\n\r\n'));
    servers.push(ssh);
    const sshPort = await listening(ssh);
    const garbled = await get(`http://127.0.0.1:${sshPort}/`, { agent: new http.Agent() });
    expect(garbled.error?.name).to.equal('ResponseFramingError');
    expect(garbled.error?.message).to.match(/not an HTTP\/1\.1 status line: "SSH-2\.0-OpenSSH_9\.6"/);
  });
});
