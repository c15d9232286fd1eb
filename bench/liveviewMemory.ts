/**
 * What silent pages cost the live view: a view of 10,000 keys, served over
 * HTTP, with N clients that open the event stream and never read it, while
 * the timeline runs at 500 entries a second. Each configuration runs in a
 * child process of its own (a fresh heap), N = 0 being the reference:
 * printed is the growth of RSS (peak while it runs, and at the end after a
 * GC), of `external` and of `arrayBuffers` over the child's own baseline,
 * and the difference to the run with no client, median of the rounds.
 *
 * Sizes: LIVEVIEW_KEYS (10000), LIVEVIEW_CLIENTS (32), LIVEVIEW_SECONDS (6),
 * LIVEVIEW_RATE (500), LIVEVIEW_ROUNDS (5). Run: npm run bench:liveview-memory
 */
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Subject } from 'rxjs';
import { silentLogger } from '../src/logger.js';
import { liveView } from '../src/observe/liveView/liveView.js';
import type { TimelineEntry } from '../src/observe/timeline.js';

const keys = Number(process.env.LIVEVIEW_KEYS ?? 10_000);
const clientsWanted = Number(process.env.LIVEVIEW_CLIENTS ?? 32);
const seconds = Number(process.env.LIVEVIEW_SECONDS ?? 6);
const rate = Number(process.env.LIVEVIEW_RATE ?? 500);
const rounds = Number(process.env.LIVEVIEW_ROUNDS ?? 5);
const MiB = 1024 * 1024;

interface Figures {
  clients: number;
  connected: number;
  left: number;
  snapshotBytes: number;
  peakRss: number;
  rss: number;
  external: number;
  arrayBuffers: number;
}

async function child(clients: number): Promise<Figures> {
  const gc = (globalThis as { gc?: () => void }).gc as () => void;
  const timeline = new Subject<TimelineEntry>();
  // maxClients: every silent page is let in (the default would turn the 17th away), so that the figure is 32 pages' cost.
  const view = liveView({ timeline }, { logger: silentLogger, maxClients: Math.max(1, clients) });
  const controller = 'bench';
  const key = (i: number) => `ns-${i % 50}/object-${String(i).padStart(6, '0')}`;
  const run = (i: number, at: number, n: number): TimelineEntry[] => [
    { type: 'trigger', at, controller, key: key(i), cause: { via: 'for', resource: 'objects', delta: 'Updated', objectKey: key(i) } },
    { type: 'run-start', at, controller, key: key(i), attempt: 1 },
    n % 10 === 0
      ? { type: 'run-end', at, controller, key: key(i), attempt: 1, duration: 12, result: 'error', error: `conflict: Operation cannot be fulfilled on objects "${key(i)}": the object has been modified; please apply your changes to the latest version and try again` }
      : { type: 'run-end', at, controller, key: key(i), attempt: 1, duration: 3, result: 'success' },
    n % 10 === 0 ? { type: 'queue', at, controller, key: key(i), state: 'delayed', delay: 5000, reason: 'error' } : { type: 'queue', at, controller, key: key(i), state: 'idle' },
  ];
  // Every key's last run failed (n = 0 mod 10), with kube's conflict message: the largest rows, the worst case for the snapshot's size.
  for (let i = 0; i < keys; i++) for (let r = 0; r < 3; r++) for (const e of run(i, Date.now(), r === 2 ? 0 : 1)) timeline.next(e);
  const server = createServer((req, res) => view.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const snapshotBytes = Buffer.byteLength(await (await fetch(`http://127.0.0.1:${port}/debug/rxkube/api/state`)).text());

  gc();
  const base = process.memoryUsage();
  let peakRss = base.rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 50);

  const sockets: Socket[] = [];
  for (let i = 0; i < clients; i++) {
    const socket = connect(port, '127.0.0.1');
    socket.write(`GET /debug/rxkube/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
    // Silent: it never reads, so what the server sends piles up in the kernel's buffers, then in the server's.
    socket.pause();
    socket.on('error', () => {});
    sockets.push(socket);
  }
  // Each page's snapshot is serialized as it connects: wait until all are in (or 10 s passed).
  const t0 = Date.now();
  while (view.clients < clients && Date.now() - t0 < 10_000) await new Promise((resolve) => setTimeout(resolve, 20));
  const connected = view.clients;
  let n = 0;
  const perTick = Math.max(1, Math.round(rate / 4 / 4));
  const load = setInterval(() => {
    for (let j = 0; j < perTick; j++, n++) for (const e of run(Math.floor(Math.random() * keys), Date.now(), n)) timeline.next(e);
  }, 250);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  clearInterval(load);
  clearInterval(sampler);
  gc();
  const end = process.memoryUsage();
  const left = view.clients;
  for (const socket of sockets) socket.destroy();
  view.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  return { clients, connected, left, snapshotBytes, peakRss: peakRss - base.rss, rss: end.rss - base.rss, external: end.external - base.external, arrayBuffers: end.arrayBuffers - base.arrayBuffers };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

if (process.argv[2] === '--child') {
  process.stdout.write(JSON.stringify(await child(Number(process.argv[3]))));
} else {
  const file = new URL(import.meta.url).pathname;
  const measure = (clients: number): Figures[] =>
    Array.from({ length: rounds }, () => JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', file, '--child', String(clients)], { encoding: 'utf8' })) as Figures);
  const none = measure(0);
  const some = measure(clientsWanted);
  const row = (label: string, runs: Figures[]) =>
    `${label}: peak RSS +${mib(median(runs.map((r) => r.peakRss)))}, RSS after GC +${mib(median(runs.map((r) => r.rss)))}, external +${mib(median(runs.map((r) => r.external)))}, arrayBuffers +${mib(median(runs.map((r) => r.arrayBuffers)))}`;
  console.log(`live view memory: ${keys} keys (snapshot ${mib(some[0]?.snapshotBytes ?? 0)}), ${rate} entries/s for ${seconds} s, median of ${rounds} rounds, each in a fresh process`);
  console.log(row('no client (reference)', none));
  console.log(row(`${clientsWanted} silent clients (${median(some.map((r) => r.connected))} connected, ${median(some.map((r) => r.left))} at the end)`, some));
  const peak = median(some.map((r) => r.peakRss)) - median(none.map((r) => r.peakRss));
  console.log(`${clientsWanted} silent clients cost: peak RSS +${mib(peak)} over the reference (${(peak / (some[0]?.snapshotBytes ?? 1)).toFixed(1)}× one snapshot)`);
}
