/**
 * List-watch throughput: the same 10,000-pod list and 100,000 MODIFIED watch
 * events (pods of about 3.8 KB with managedFields) served to each client in
 * turn, each client in its own process:
 *
 *   (a) the limit: paged list and watch read with node:http, one JSON.parse
 *       per line, the newest object kept per key in a Map (the least any
 *       cache must do);
 *   (b) @kubernetes/client-node's makeInformer;
 *   (c) rxkube: listWatch → deltas → indexer → reconcileByKey (no-op);
 *   (c') the same with a transform that drops managedFields;
 *   and the two watch transports alone, after a bare list: client-node's
 *   `Watch` against our node:http request and line reader (the choice of
 *   HTTP path that issue 5 asks to measure).
 *
 * It prints, for each (median of BENCH_ROUNDS interleaved rounds, default
 * 3): events per second over the watch, time to synced, peak RSS; then the ratios c/a and c/b. Targets (issue 5): c/a ≥ 0.8 and
 * c/b ≥ 2 for events per second; RSS of c ≤ 1.5 × a, lower again for c'.
 *
 * The server here is a fixture that replays pre-serialized bytes, so that it
 * is never what is measured.
 *
 * Run: npm run bench:watch
 */
import { execFile } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pod } from './support/pods.js';

const PODS = 10_000;
const EVENTS = 100_000;
const run = promisify(execFile);

function buildFixture() {
  const items = Array.from({ length: PODS }, (_, i) => JSON.stringify(pod(i, i + 1)));
  const listRv = String(PODS);
  const lines: Buffer[] = [];
  let batch: string[] = [];
  let batchBytes = 0;
  for (let j = 0; j < EVENTS; j++) {
    const line = `{"type":"MODIFIED","object":${JSON.stringify(pod(j % PODS, PODS + 1 + j))}}\n`;
    batch.push(line);
    batchBytes += line.length;
    if (batchBytes >= 64 * 1024) {
      lines.push(Buffer.from(batch.join('')));
      batch = [];
      batchBytes = 0;
    }
  }
  if (batch.length) lines.push(Buffer.from(batch.join('')));
  return { items, listRv, chunks: lines };
}

function serve(fixture: ReturnType<typeof buildFixture>): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/api/v1/pods') {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"kind":"Status","code":404}');
      return;
    }
    if (url.searchParams.get('watch') === '1' || url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      if (url.searchParams.get('resourceVersion') !== fixture.listRv) return; // a re-watch: nothing new
      let i = 0;
      const pump = () => {
        while (i < fixture.chunks.length) {
          if (!res.write(fixture.chunks[i++])) return void res.once('drain', pump);
        }
      };
      pump();
      return;
    }
    const limit = Number(url.searchParams.get('limit') ?? 0);
    const from = Number(url.searchParams.get('continue') ?? 0);
    const to = limit > 0 ? Math.min(PODS, from + limit) : PODS;
    const cont = to < PODS ? `,"continue":"${to}"` : '';
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${fixture.listRv}"${cont}},"items":[${fixture.items.slice(from, to).join(',')}]}`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

interface Result {
  mode: string;
  events: number;
  watchMs: number;
  syncedMs: number;
  maxRssMb: number;
}

async function client(mode: string, url: string): Promise<Result> {
  const script = fileURLToPath(new URL('./watchClient.ts', import.meta.url));
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script, mode, url, String(EVENTS)], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop() as string) as Result;
}

const fixture = buildFixture();
const server = await serve(fixture);
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
console.log(`fixture: ${PODS} pods (${fixture.items[0]?.length} bytes each), ${EVENTS} MODIFIED events; clients run one after another`);
// Rounds interleave the clients, and each figure is the median of its
// rounds: the machine is shared, and a slow minute should not land on one
// client only.
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const modes = ['bare', 'client-node-watch', 'rxkube-watch', 'client-node', 'rxkube', 'rxkube-transform'];
const runs: Record<string, Result[]> = Object.fromEntries(modes.map((m) => [m, []]));
for (let round = 1; round <= rounds; round++) {
  for (const mode of modes) runs[mode]!.push(await client(mode, url));
  console.log(`round ${round}/${rounds} done`);
}
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number;
const results: Record<string, Result> = {};
for (const mode of modes) {
  const all = runs[mode]!;
  const r: Result = {
    mode,
    events: EVENTS,
    watchMs: median(all.map((x) => x.watchMs)),
    syncedMs: median(all.map((x) => x.syncedMs)),
    maxRssMb: median(all.map((x) => x.maxRssMb)),
  };
  results[mode] = r;
  console.log(
    `${mode.padEnd(17)} ${Math.round((r.events / r.watchMs) * 1000).toLocaleString('en').padStart(9)} events/s   synced in ${String(Math.round(r.syncedMs)).padStart(5)} ms   peak RSS ${String(Math.round(r.maxRssMb)).padStart(5)} MB`,
  );
}
server.close();
server.closeAllConnections();
const rate = (m: string) => (results[m] as Result).events / (results[m] as Result).watchMs;
const rss = (m: string) => (results[m] as Result).maxRssMb;
const line = (label: string, value: number, target: string, ok: boolean) =>
  console.log(`${label.padEnd(44)} ${value.toFixed(2).padStart(6)}  (target ${target}: ${ok ? 'met' : 'NOT met'})`);
line('events/s  c/a (rxkube / bare JSON.parse)', rate('rxkube') / rate('bare'), '≥ 0.8', rate('rxkube') / rate('bare') >= 0.8);
line('events/s  c/b (rxkube / client-node)', rate('rxkube') / rate('client-node'), '≥ 2', rate('rxkube') / rate('client-node') >= 2);
line('transport rxkube-watch / client-node-watch', rate('rxkube-watch') / rate('client-node-watch'), 'info', true);
line('synced    b/c (client-node time / rxkube time)', results['client-node']!.syncedMs / results['rxkube']!.syncedMs, 'info', true);
line('peak RSS  c/a', rss('rxkube') / rss('bare'), '≤ 1.5', rss('rxkube') / rss('bare') <= 1.5);
line("peak RSS  c'/c (managedFields dropped)", rss('rxkube-transform') / rss('rxkube'), '< 1', rss('rxkube-transform') < rss('rxkube'));
