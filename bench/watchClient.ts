/**
 * One client of bench/watch.ts, in its own process so that its peak RSS is
 * its own. Modes `client-node-watch` and `rxkube-watch` compare the two
 * watch transports alone (client-node's `Watch`: node-fetch and readline;
 * ours: node:http with the kubeconfig's options and a Buffer line reader). Prints one JSON line: events, watch time, time to synced, peak RSS.
 */
import * as k8s from '@kubernetes/client-node';
import * as http from 'node:http';
import { filter, map, tap } from 'rxjs';
import { deltas, reconcileByKey, dropManagedFields, listWatch, indexer, isDelta, type KubeObject } from 'rxkube';
import { getStream } from '../src/sources/http.js';
import { WatchLineReader } from '../src/sources/watchLineReader.js';

const [mode, url, total] = process.argv.slice(2) as [string, string, string];
const expected = Number(total);
const start = performance.now();
let syncedAt = 0;
let firstEventAt = 0;
let events = 0;

function kubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'bench', server: url, skipTLSVerify: true }],
    users: [{ name: 'bench' }],
    contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
    currentContext: 'bench',
  });
  return kc;
}

function done(): void {
  const now = performance.now();
  process.stdout.write(
    `${JSON.stringify({ mode, events, watchMs: now - firstEventAt, syncedMs: syncedAt - start, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
  );
  process.exit(0);
}

function countEvent(): void {
  if (events++ === 0) firstEventAt = performance.now();
  if (events === expected) done();
}

async function bare(): Promise<void> {
  const cache = new Map<string, unknown>();
  const get = (path: string) =>
    new Promise<http.IncomingMessage>((resolve, reject) => http.get(`${url}${path}`, resolve).on('error', reject));
  let token = '';
  let rv = '';
  do {
    const res = await get(`/api/v1/pods?limit=500${token ? `&continue=${token}` : ''}`);
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const page = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { metadata: { continue?: string; resourceVersion: string }; items: KubeObject[] };
    for (const item of page.items) cache.set(`${item.metadata.namespace}/${item.metadata.name}`, item);
    token = page.metadata.continue ?? '';
    rv = page.metadata.resourceVersion;
  } while (token);
  syncedAt = performance.now();
  const res = await get(`/api/v1/pods?watch=1&resourceVersion=${rv}`);
  // A line cut by a chunk boundary waits as pieces and is joined once, when its end arrives.
  let pieces: Buffer[] = [];
  const take = (buf: Buffer, from: number, to: number) => {
    const event = JSON.parse(buf.toString('utf8', from, to)) as { object: KubeObject };
    cache.set(`${event.object.metadata.namespace}/${event.object.metadata.name}`, event.object);
    countEvent();
  };
  res.on('data', (chunk: Buffer) => {
    let from = 0;
    let nl = chunk.indexOf(10);
    if (nl !== -1 && pieces.length > 0) {
      pieces.push(chunk.subarray(0, nl));
      const line = Buffer.concat(pieces);
      pieces = [];
      take(line, 0, line.length);
      from = nl + 1;
      nl = chunk.indexOf(10, from);
    }
    while (nl !== -1) {
      take(chunk, from, nl);
      from = nl + 1;
      nl = chunk.indexOf(10, from);
    }
    if (from < chunk.length) pieces.push(chunk.subarray(from));
  });
}

/** The transports alone: the list is read the bare way, then only the watch differs. */
async function bareList(): Promise<string> {
  const get = (path: string) =>
    new Promise<http.IncomingMessage>((resolve, reject) => http.get(`${url}${path}`, resolve).on('error', reject));
  const res = await get('/api/v1/pods');
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const page = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { metadata: { resourceVersion: string } };
  syncedAt = performance.now();
  return page.metadata.resourceVersion;
}

async function clientNodeWatch(): Promise<void> {
  const rv = await bareList();
  await new k8s.Watch(kubeConfig()).watch('/api/v1/pods', { resourceVersion: rv }, countEvent, (err: unknown) => {
    if (events < expected) {
      console.error('client-node Watch ended early', err);
      process.exit(1);
    }
  });
}

async function rxkubeWatch(): Promise<void> {
  const rv = await bareList();
  const query = new URLSearchParams({ watch: '1', resourceVersion: rv });
  const res = await getStream(kubeConfig(), '/api/v1/pods', query, new AbortController().signal);
  const reader = new WatchLineReader(countEvent, (err) => {
    console.error(err);
    process.exit(1);
  });
  res.on('data', (chunk: Buffer) => reader.push(chunk));
}

async function clientNode(): Promise<void> {
  const kc = kubeConfig();
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const informer = k8s.makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
  informer.on('update', countEvent);
  informer.on('error', (err: unknown) => {
    console.error('client-node informer error', err);
    process.exit(1);
  });
  await informer.start();
  syncedAt = performance.now();
}

function rxkube(transform: boolean): void {
  listWatch(kubeConfig(), { version: 'v1', resource: 'pods' }, transform ? { transform: dropManagedFields } : {})
    .pipe(
      deltas(),
      indexer(),
      tap((e) => {
        if (e.type === 'Synced' && syncedAt === 0) syncedAt = performance.now();
      }),
      filter(isDelta),
      filter((d) => d.type === 'Updated'),
      tap(countEvent),
      map((d) => d.key),
      reconcileByKey(() => undefined, { concurrency: 4 }),
    )
    .subscribe({ error: (err: unknown) => (console.error(err), process.exit(1)) });
}

if (mode === 'bare') await bare();
else if (mode === 'client-node') await clientNode();
else if (mode === 'client-node-watch') await clientNodeWatch();
else if (mode === 'rxkube-watch') await rxkubeWatch();
else if (mode === 'rxkube') rxkube(false);
else if (mode === 'rxkube-transform') rxkube(true);
else throw new Error(`unknown mode ${mode}`);
