/**
 * Write throughput of the embedded API server, for bench:apiserver: how many
 * creates, updates (PUT), merge patches and server-side applies per second it
 * answers over HTTP, and how many in-process `server.put` calls per second it
 * runs, each next to its floor measured in the same run:
 *
 *   - over HTTP, a bare node:http server in the same thread that parses each
 *     body, stores a `JSON.parse(JSON.stringify())` clone of the object in a
 *     Map (a merge patch merges its annotations first) and answers with it;
 *   - in process, a `JSON.parse(JSON.stringify())` clone plus `Map.set` per
 *     write of the same object.
 *
 * The HTTP client runs in a worker thread (its own core) with a few requests
 * in flight on kept-alive connections, so that the server is what limits the
 * rate; it only checks each status code.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import type { ApiServer } from 'rxkube/testing';
import type { KubeObject } from 'rxkube';

export type HttpWrite = 'create' | 'update' | 'merge' | 'apply';
export const httpWrites: readonly HttpWrite[] = ['create', 'update', 'merge', 'apply'];

const inFlight = 4;
const podsPath = '/api/v1/namespaces/default/pods';

/** The worker: builds each request from the template, sends `count` of them with `inFlight` in flight, answers the elapsed ms. */
const clientSource = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, write, count, inFlight, template, prefix, path, token } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight });
const target = new URL(url);
function podNamed(i, seq) {
  return { ...template, metadata: { ...template.metadata, name: prefix + i, annotations: { ...template.metadata.annotations, 'bench/seq': String(seq) } } };
}
function request(i) {
  const name = prefix + i;
  switch (write) {
    case 'create': return { method: 'POST', path, type: 'application/json', body: JSON.stringify(podNamed(i, 0)), ok: 201 };
    case 'update': return { method: 'PUT', path: path + '/' + name, type: 'application/json', body: JSON.stringify(podNamed(i, 1)), ok: 200 };
    case 'merge': return { method: 'PATCH', path: path + '/' + name, type: 'application/merge-patch+json', body: JSON.stringify({ metadata: { annotations: { 'bench/seq': '2' } } }), ok: 200 };
    default: {
      const { status, ...config } = podNamed(i, 3);
      return { method: 'PATCH', path: path + '/' + name + '?fieldManager=bench&force=true', type: 'application/apply-patch+yaml', body: JSON.stringify(config), ok: 200 };
    }
  }
}
function send(i) {
  const r = request(i);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: target.hostname, port: target.port, method: r.method, path: r.path, agent,
      headers: { 'Content-Type': r.type, 'Content-Length': Buffer.byteLength(r.body), ...(token ? { Authorization: 'Bearer ' + token } : {}) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => res.statusCode === r.ok ? resolve() : reject(new Error(write + ' ' + r.path + ': ' + res.statusCode + ' ' + Buffer.concat(chunks).toString().slice(0, 300))));
    });
    req.on('error', reject);
    req.end(r.body);
  });
}
let next = 0;
async function lane() {
  while (next < count) await send(next++);
}
const started = performance.now();
Promise.all(Array.from({ length: inFlight }, lane)).then(
  () => { agent.destroy(); parentPort.postMessage({ ms: performance.now() - started }); },
  (e) => parentPort.postMessage({ error: String(e) }),
);
`;

/** Elapsed ms of the run, and the ms this (the server's) thread was busy meanwhile. */
async function runClient(url: string, write: HttpWrite, count: number, template: KubeObject, prefix: string, token?: string, path = podsPath): Promise<{ ms: number; busyMs: number }> {
  const worker = new Worker(clientSource, { eval: true, workerData: { url, write, count, inFlight, template, prefix, path, token } });
  await new Promise((resolve) => worker.once('online', resolve));
  const before = performance.eventLoopUtilization();
  const ms = await new Promise<number>((resolve, reject) => {
    worker.on('message', (message: { ms?: number; error?: string }) => {
      void worker.terminate();
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.ms as number);
    });
    worker.on('error', reject);
  });
  return { ms, busyMs: performance.eventLoopUtilization(before).active };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

type Plain = { metadata: { name: string; annotations?: Record<string, string> } };

/** The floor over HTTP: parse, clone into a Map, answer the stored object. */
async function referenceServer(): Promise<{ server: Server; url: string }> {
  const stored = new Map<string, Plain>();
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      const body = JSON.parse(text) as Plain;
      const name = req.method === 'POST' ? body.metadata.name : decodeURIComponent((req.url ?? '').split('?')[0]?.split('/').pop() ?? '');
      let next: Plain = body;
      if ((req.headers['content-type'] ?? '').startsWith('application/merge-patch+json')) {
        next = JSON.parse(JSON.stringify(stored.get(name))) as Plain;
        next.metadata.annotations = { ...next.metadata.annotations, ...body.metadata.annotations };
      }
      const copy = JSON.parse(JSON.stringify(next)) as Plain;
      stored.set(name, copy);
      const json = JSON.stringify(copy);
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
      res.end(json);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export interface WriteFigure {
  name: string;
  perSecond: number;
  referencePerSecond: number;
  /** Time the server's thread spent per write (its event loop's active time), and the reference's. */
  busyUs: number;
  referenceBusyUs: number;
}

/**
 * Each HTTP write `count` times against the server (pods `prefix0..`, created by the create
 * run), then against the reference server, alternating per write kind so that both see the
 * same machine load. With `token`, the server's requests carry it as a bearer token.
 */
export async function measureHttpWrites(api: ApiServer, template: KubeObject, count: number, prefix: string, token?: string): Promise<WriteFigure[]> {
  const reference = await referenceServer();
  try {
    const figures: WriteFigure[] = [];
    for (const write of httpWrites) {
      const run = await runClient(api.url, write, count, template, prefix, token);
      const ref = await runClient(reference.url, write, count, template, prefix);
      figures.push({
        name: `http ${write}`,
        perSecond: (count / run.ms) * 1000,
        referencePerSecond: (count / ref.ms) * 1000,
        busyUs: (run.busyMs * 1000) / count,
        referenceBusyUs: (ref.busyMs * 1000) / count,
      });
    }
    return figures;
  } finally {
    reference.server.close();
  }
}

/** What `measurePuts` writes: pods by default; `change` makes each version differ in more than an annotation. */
export interface PutTarget {
  name: string;
  ref: { group: string; version: string; resource: string; namespace: string };
  change?: (object: KubeObject, i: number) => KubeObject;
}

const podPuts: PutTarget = { name: 'put', ref: { group: '', version: 'v1', resource: 'pods', namespace: 'default' } };

/** `count` in-process puts of `object` with a changing annotation, against clone + Map.set of the same objects. */
export function measurePuts(api: ApiServer, object: KubeObject, count: number, target: PutTarget = podPuts): WriteFigure {
  const ref = target.ref;
  const versions = Array.from({ length: count }, (_, i) => {
    const version = { ...object, metadata: { ...object.metadata, annotations: { ...object.metadata.annotations, 'bench/seq': `put-${i}` } } };
    return target.change === undefined ? version : target.change(version, i);
  });
  let started = performance.now();
  for (const version of versions) api.put(ref, version);
  const ms = performance.now() - started;
  const map = new Map<string, KubeObject>();
  started = performance.now();
  for (const version of versions) map.set(version.metadata.name as string, JSON.parse(JSON.stringify(version)) as KubeObject);
  const referenceMs = performance.now() - started;
  return {
    name: target.name,
    perSecond: (count / ms) * 1000,
    referencePerSecond: (count / referenceMs) * 1000,
    busyUs: (ms * 1000) / count,
    referenceBusyUs: (referenceMs * 1000) / count,
  };
}
