/**
 * The read path, measured honestly (issue 12): a list of N pods of about
 * 2 KB, then 100,000 MODIFIED events, served to each client in turn, each
 * client in its own process (bench/watchClient.ts), from a stand-in server
 * that replays pre-serialized bytes so that it is never what is measured.
 *
 * The list items are serialized once too, so a page is a slice of prepared
 * bytes (joining and encoding them per request made the server, not the
 * client, the bound on a paged list).
 *
 * Clients: the transport alone (`read`: the watch's bytes read from a
 * socket into one buffer and split into lines, nothing decoded; `read-http`:
 * the same through node:http), the parse-only limit (`parse`: JSON.parse
 * each line, nothing kept), the parse-and-keep limit (`keep`: newest object per key in a Map),
 * client-node 1.4's `makeInformer`, and rxkube (listWatch → deltas →
 * indexer → reconcileByKey) by default (the compact cache), parsed whole
 * (`compact: false`), metadata only, with dropManagedFields, parsed with
 * dropManagedFields, and metadata only with it. The references and client-node send no
 * `limit` and read one answer; rxkube runs against a server that pages
 * (`paged`, 500 a page) and one that ignores `limit` (`unpaged`).
 *
 * Printed per client (median of BENCH_ROUNDS interleaved rounds, default 3):
 * events/s over the watch (per wall second, and per second of the
 * process's CPU time, which other work on a shared machine disturbs far
 * less), time to synced (wall, and CPU ms), peak RSS, and the memory it
 * retains after a full GC (heap plus external buffers, less what the same
 * process held before it started), also as a ratio to the JSON size of the
 * objects it caches; then ratios to client-node and to the references.
 *
 * Sizes: BENCH_SIZES (default 10000; `10000,100000` for the issue's two).
 * Owners: BENCH_OWNERS=n makes the pods those of n ReplicaSets in turn (default 1: all of one, as the issue's were).
 * Before/after: BENCH_BASELINE=/path/to/an/older/worktree adds its rxkube clients to each round.
 * BENCH_CLIENTS=mode,… runs only those; BENCH_PROFILE=dir writes each client's CPU profile there.
 * Run: npm run bench:watch      BENCH_SIZES=10000,100000 npm run bench:watch
 */
import { execFile } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { smallPod } from './support/smallPods.js';

const EVENTS = 100_000;
/** The ReplicaSets the pods belong to, in turn (`smallPod`). */
const owners = Number(process.env.BENCH_OWNERS ?? 1);
if (!Number.isInteger(owners) || owners < 1) throw new Error(`BENCH_OWNERS must be a whole number of at least 1, not ${JSON.stringify(process.env.BENCH_OWNERS)}`);
const run = promisify(execFile);
/** Extra node flags for each client process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile one). */
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');

/** List items serialized once, joined by commas: any run of them is one slice, so serving a page costs the server no encoding. */
interface ItemBytes {
  bytes: Buffer;
  /** Where item i begins; the last entry is one past the end (as if a comma followed the last item). */
  offsets: number[];
}

function itemBytes(items: string[]): ItemBytes {
  const offsets = [0];
  for (const item of items) offsets.push((offsets[offsets.length - 1] as number) + Buffer.byteLength(item) + 1);
  return { bytes: Buffer.from(items.join(',')), offsets };
}

interface Fixture {
  pods: number;
  items: string[];
  itemBytes: ItemBytes;
  /** The items as PartialObjectMetadata, for metadata-only clients. */
  metadataItems?: string[];
  metadataItemBytes?: ItemBytes;
  listRv: string;
  chunks: Buffer[];
  metadataChunks?: Buffer[];
  /** Bytes of JSON of the newest version of every object: what a cache holds at the end. */
  cachedJsonBytes: number;
}

function batched(lines: Iterable<string>): Buffer[] {
  const out: Buffer[] = [];
  let batch: string[] = [];
  let bytes = 0;
  for (const line of lines) {
    batch.push(line);
    bytes += line.length;
    if (bytes >= 64 * 1024) {
      out.push(Buffer.from(batch.join('')));
      batch = [];
      bytes = 0;
    }
  }
  if (batch.length) out.push(Buffer.from(batch.join('')));
  return out;
}

function* watchLines(pods: number, metadataOnly: boolean): Generator<string> {
  for (let j = 0; j < EVENTS; j++) {
    const object = smallPod(j % pods, pods + 1 + j, owners);
    const shown = metadataOnly ? { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata } : object;
    yield `{"type":"MODIFIED","object":${JSON.stringify(shown)}}\n`;
  }
}

function buildFixture(pods: number): Fixture {
  const items = Array.from({ length: pods }, (_, i) => JSON.stringify(smallPod(i, i + 1, owners)));
  let cachedJsonBytes = 0;
  for (let i = 0; i < pods; i++) {
    // The newest version of pod i: its last event, or the listed one if no event touched it.
    const last = EVENTS - 1 - ((EVENTS - 1 - i) % pods);
    cachedJsonBytes += last >= 0 && last % pods === i && i < EVENTS ? JSON.stringify(smallPod(i, pods + 1 + last, owners)).length : (items[i] as string).length;
  }
  const fixture: Fixture = { pods, items, itemBytes: itemBytes(items), listRv: String(pods), chunks: batched(watchLines(pods, false)), cachedJsonBytes };
  // Built before any client runs, so that no client's time includes the fixture's.
  metadataForms(fixture);
  return fixture;
}

function metadataForms(fixture: Fixture): { itemBytes: ItemBytes; chunks: Buffer[] } {
  fixture.metadataItems ??= fixture.items.map((text) => {
    const object = JSON.parse(text) as { metadata: unknown };
    return JSON.stringify({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata });
  });
  fixture.metadataItemBytes ??= itemBytes(fixture.metadataItems);
  fixture.metadataChunks ??= batched(watchLines(fixture.pods, true));
  return { itemBytes: fixture.metadataItemBytes, chunks: fixture.metadataChunks };
}

/** `/paged/...` honours `limit`; `/unpaged/...` ignores it, as aggregated APIs and watch-cache lists do. */
function serve(current: () => Fixture): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const [, prefix, ...rest] = url.pathname.split('/');
    const fixture = current();
    if (`/${rest.join('/')}` !== '/api/v1/pods') {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"kind":"Status","code":404}');
      return;
    }
    const metadataOnly = (req.headers.accept ?? '').includes('as=PartialObjectMetadata');
    const forms = metadataOnly ? metadataForms(fixture) : { itemBytes: fixture.itemBytes, chunks: fixture.chunks };
    if (url.searchParams.get('watch') === '1' || url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      if (url.searchParams.get('resourceVersion') !== fixture.listRv) return; // a re-watch: nothing new
      let i = 0;
      const pump = () => {
        while (i < forms.chunks.length) {
          if (!res.write(forms.chunks[i++])) return void res.once('drain', pump);
        }
      };
      pump();
      return;
    }
    const limit = prefix === 'paged' ? Number(url.searchParams.get('limit') ?? 0) : 0;
    const from = Number(url.searchParams.get('continue') ?? 0);
    const to = limit > 0 ? Math.min(fixture.pods, from + limit) : fixture.pods;
    const cont = to < fixture.pods ? `,"continue":"${to}"` : '';
    const kind = metadataOnly ? '"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1"' : '"kind":"PodList","apiVersion":"v1"';
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write(`{${kind},"metadata":{"resourceVersion":"${fixture.listRv}"${cont}},"items":[`);
    // Streamed in pieces, as a real server writes a large answer; the items' bytes were made before any client ran.
    const { bytes, offsets } = forms.itemBytes;
    const last = to > from ? (offsets[to] as number) - 1 : (offsets[from] as number);
    let at = offsets[from] as number;
    const pump = () => {
      while (at < last) {
        const end = Math.min(last, at + (1 << 20));
        const piece = bytes.subarray(at, end);
        at = end;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
      res.end(']}');
    };
    pump();
  });
  // A client parsing a 200 MB answer takes longer than Node's 5 s keep-alive before its next request on the same socket.
  server.keepAliveTimeout = 10 * 60_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

interface Result {
  mode: string;
  events: number;
  watchMs: number;
  syncedMs: number;
  /** CPU time of the client process (all threads) to synced, and over the watch: its cost whatever else the machine runs. */
  syncedCpuMs: number;
  watchCpuMs: number;
  maxRssMb: number;
  retainedMb: number;
}

/** Runs one client; with `tree` (another checkout), this same client script runs that checkout's rxkube. */
async function client(mode: string, url: string, tree?: string): Promise<Result> {
  const script = fileURLToPath(new URL('./watchClient.ts', import.meta.url));
  // BENCH_PROFILE=dir writes each client's CPU profile there (node --cpu-prof).
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE] : [];
  const { stdout } = await run(process.execPath, ['--expose-gc', '--max-old-space-size=8192', ...profile, ...nodeArgs, '--import', 'tsx', script, mode, url, String(EVENTS)], {
    maxBuffer: 1 << 20,
    // tsx reads the tsconfig (and so where `rxkube` resolves) from the working directory.
    ...(tree === undefined ? {} : { cwd: tree }),
  });
  return JSON.parse(stdout.trim().split('\n').pop() as string) as Result;
}

const sizes = (process.env.BENCH_SIZES ?? '10000').split(',').map(Number);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const only = process.env.BENCH_CLIENTS?.split(',');
/** Each client, and which server it reads: references and client-node send no limit, so paging does not apply to them. */
/** BENCH_BASELINE: a checkout of an earlier rxkube (a `git worktree`), whose rxkube clients run in the same rounds, for before/after. */
const baseline = process.env.BENCH_BASELINE;
const clients: { name: string; mode: string; prefix: string; tree?: string }[] = [
  { name: 'read', mode: 'read', prefix: 'unpaged' },
  { name: 'read-http', mode: 'read-http', prefix: 'unpaged' },
  { name: 'parse', mode: 'parse', prefix: 'unpaged' },
  { name: 'keep', mode: 'keep', prefix: 'unpaged' },
  { name: 'client-node', mode: 'client-node', prefix: 'unpaged' },
  ...['rxkube', 'rxkube-parsed', 'rxkube-metadata', 'rxkube-drop', 'rxkube-parsed-drop', 'rxkube-metadata-drop'].flatMap((mode) => [
    { name: `${mode} paged`, mode, prefix: 'paged' },
    { name: `${mode} unpaged`, mode, prefix: 'unpaged' },
  ]),
].filter((c) => only === undefined || only.includes(c.mode));
if (baseline !== undefined) {
  // The modes every tree knows: `rxkube-parsed` came when the compact cache became the default (a tree from before runs that as `rxkube`).
  const everywhere = ['rxkube', 'rxkube-metadata', 'rxkube-drop', 'rxkube-metadata-drop'];
  clients.push(...clients.filter((c) => everywhere.includes(c.mode)).map((c) => ({ ...c, name: `${c.name} (baseline)`, tree: baseline })));
}

let fixture: Fixture | undefined;
const server = await serve(() => fixture as Fixture);
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
console.log(`sizes: ${sizes.join(', ')} pods${owners > 1 ? ` of ${owners} ReplicaSets in turn` : ''}; ${EVENTS} MODIFIED events each; ${rounds} interleaved round(s), medians; clients one at a time, each in its own process`);
console.log(`node ${process.version}, load average ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')} (a shared machine: compare ratios within one run)`);
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number;
const fmt = (n: number) => Math.round(n).toLocaleString('en');

for (const pods of sizes) {
  fixture = buildFixture(pods);
  const jsonMb = fixture.cachedJsonBytes / 1e6;
  console.log(`\n== ${fmt(pods)} pods (${fixture.items[0]?.length} bytes each; cached JSON ${jsonMb.toFixed(1)} MB; one unpaged list ${((fixture.items.reduce((n, s) => n + s.length + 1, 0)) / 1e6).toFixed(1)} MB)`);
  const runs: Record<string, Result[]> = Object.fromEntries(clients.map((c) => [c.name, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const c of clients) runs[c.name]?.push(await client(c.mode, `${base}/${c.prefix}`, c.tree));
    console.log(`round ${round}/${rounds} done`);
  }
  const results: Record<string, Result> = {};
  console.log(`${'client'.padEnd(30)} ${'events/s'.padStart(9)} ${'ev/CPU-s'.padStart(9)} ${'synced ms'.padStart(10)} ${'CPU ms'.padStart(7)} ${'peak RSS MB'.padStart(12)} ${'retained MB'.padStart(12)} ${'retained/JSON'.padStart(14)}`);
  for (const c of clients) {
    const all = runs[c.name] as Result[];
    const r: Result = {
      mode: c.name,
      events: EVENTS,
      watchMs: median(all.map((x) => x.watchMs)),
      syncedMs: median(all.map((x) => x.syncedMs)),
      syncedCpuMs: median(all.map((x) => x.syncedCpuMs)),
      watchCpuMs: median(all.map((x) => x.watchCpuMs)),
      maxRssMb: median(all.map((x) => x.maxRssMb)),
      retainedMb: median(all.map((x) => x.retainedMb)),
    };
    results[c.name] = r;
    console.log(
      `${c.name.padEnd(30)} ${fmt((EVENTS / r.watchMs) * 1000).padStart(9)} ${fmt((EVENTS / r.watchCpuMs) * 1000).padStart(9)} ${fmt(r.syncedMs).padStart(10)} ${fmt(r.syncedCpuMs).padStart(7)} ${fmt(r.maxRssMb).padStart(12)} ${r.retainedMb.toFixed(1).padStart(12)} ${(r.retainedMb / jsonMb).toFixed(2).padStart(14)}`,
    );
  }
  const rate = (name: string) => EVENTS / (results[name] as Result).watchMs;
  const cpuRate = (name: string) => EVENTS / (results[name] as Result).watchCpuMs;
  const cn = results['client-node'];
  if (cn === undefined) continue;
  console.log(`\nratios to client-node at ${fmt(pods)} pods (events/s, per wall and per CPU second: higher is better; synced, RSS, retained: lower is better)`);
  console.log(`${'client'.padEnd(30)} ${'events/s'.padStart(9)} ${'ev/CPU-s'.padStart(9)} ${'synced'.padStart(7)} ${'CPU'.padStart(5)} ${'peak RSS'.padStart(9)} ${'retained'.padStart(9)}`);
  for (const c of clients) {
    const r = results[c.name] as Result;
    console.log(
      `${c.name.padEnd(30)} ${(rate(c.name) / rate('client-node')).toFixed(2).padStart(9)} ${(cpuRate(c.name) / cpuRate('client-node')).toFixed(2).padStart(9)} ${(r.syncedMs / cn.syncedMs).toFixed(2).padStart(7)} ${(r.syncedCpuMs / cn.syncedCpuMs).toFixed(2).padStart(5)} ${(r.maxRssMb / cn.maxRssMb).toFixed(2).padStart(9)} ${(r.retainedMb / cn.retainedMb).toFixed(2).padStart(9)}`,
    );
  }
  if (results.read !== undefined) {
    // What each client spends on a line beyond reading it: the part a client's own code decides.
    const us = (name: string) => (results[name] as Result).watchMs * 1000 / EVENTS;
    const beyond = clients.filter((c) => c.name !== 'read').map((c) => `${c.name} ${(us(c.name) - us('read')).toFixed(1)}`);
    console.log(`transport: ${us('read').toFixed(1)} µs a line (wall); beyond it, µs a line: ${beyond.join(', ')}`);
  }
  if (results.keep !== undefined && results.parse !== undefined) {
    console.log(`references: keep/parse events/s ${(rate('keep') / rate('parse')).toFixed(2)}; rxkube paged/keep ${results['rxkube paged'] ? (rate('rxkube paged') / rate('keep')).toFixed(2) : '-'}`);
  }
}
server.closeAllConnections();
server.close();
