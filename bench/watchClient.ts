/**
 * One client of bench/watch.ts, in its own process so that its peak RSS and
 * retained memory are its own. It lists, then counts MODIFIED events until
 * it has seen `total`, then (after a full GC) measures what it retains, and
 * prints one JSON line.
 *
 * Modes: `read` (the watch's bytes read and split into lines, nothing
 * decoded: the least the transport costs any client), `read-http` (the
 * same through node:http: what it costs a client that uses it), `parse` (JSON.parse
 * each line, nothing kept: the parse-only limit), `keep` (the same, newest object per key in a Map: the
 * parse-and-keep limit), `client-node` (makeInformer), and rxkube's
 * listWatch → deltas → indexer → reconcileByKey as `rxkube`,
 * `rxkube-metadata` (metadataOnly), `rxkube-drop` (dropManagedFields),
 * `rxkube-metadata-drop` (both), `rxkube-parsed` (`compact: false`, each
 * object parsed whole) and `rxkube-parsed-drop` (that, dropManagedFields).
 */
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { filter, map, tap } from 'rxjs';
import { deltas, reconcileByKey, dropManagedFields, listWatch, indexer, isDelta, type KubeObject, type ListWatchOptions } from 'rxkube';

const [mode, url, total] = process.argv.slice(2) as [string, string, string];
const expected = Number(total);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const start = performance.now();
/** CPU time (user + system, all threads: GC helpers too) is what a client costs whatever else the shared machine runs. */
const cpuMs = (since?: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};
const cpuStart = process.cpuUsage();
let syncedAt = 0;
let syncedCpuMs = 0;
let cpuAtFirstEvent: NodeJS.CpuUsage | undefined;
let watchCpuMs = 0;
/** Called once the client has synced. */
const synced = () => {
  syncedAt = performance.now();
  syncedCpuMs = cpuMs(cpuStart);
};
let firstEventAt = 0;
let lastEventAt = 0;
let events = 0;
/** Lets go of everything the client holds (stops its watch), so that what the cache retained can be measured as the difference. */
let release: () => void = () => {};

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
  // Let the reconciles still queued finish, then collect everything collectable.
  setTimeout(() => {
    const held = settledMemory();
    release();
    release = () => {};
    // Timers of the stopped watch and sockets closing: give them a moment before measuring what is left.
    setTimeout(() => {
      const retained = held - settledMemory();
      report(retained);
    }, 200);
  }, 200);
}

/** Heap plus external buffers after full collections. */
function settledMemory(): number {
  for (let i = 0; i < 3; i++) gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

function report(retained: number): void {
  {
    process.stdout.write(
      `${JSON.stringify({
        mode,
        events,
        watchMs: lastEventAt - firstEventAt,
        syncedMs: syncedAt - start,
        syncedCpuMs,
        watchCpuMs,
        maxRssMb: peakRssMb(),
        retainedMb: retained / 1e6,
      })}\n`,
    );
    process.exit(0);
  }
}

/**
 * This process's own peak RSS: the kernel's high-water mark of its memory
 * map (VmHWM), which starts afresh at exec. Not `resourceUsage().maxRSS`:
 * Linux carries that over from the parent across fork and exec, so every
 * client would report at least the bench's own RSS (the fixture it holds).
 */
function peakRssMb(): number {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm !== null) return Number(hwm[1]) / 1024;
  } catch {
    // Not Linux: the carried-over figure is all there is.
  }
  return process.resourceUsage().maxRSS / 1024;
}

function countEvent(): void {
  if (events++ === 0) {
    firstEventAt = performance.now();
    cpuAtFirstEvent = process.cpuUsage();
  }
  if (events === expected) {
    lastEventAt = performance.now();
    watchCpuMs = cpuMs(cpuAtFirstEvent);
    done();
  }
}

const get = (path: string) => new Promise<http.IncomingMessage>((resolve, reject) => http.get(`${url}${path}`, resolve).on('error', reject));

/**
 * The references: one unpaged list read whole, then the watch split into
 * lines, each JSON.parsed once (`transportOnly`: counted, not parsed). The
 * watch is read as cheaply as any client can read it: a socket reading
 * into one buffer (`onread`), chunked framing undone by hand, lines cut
 * in place (`nodeHttp`: through node:http instead, a buffer and a copy
 * per read, as node:http costs any client that uses it).
 */
async function reference(keep: boolean, transportOnly = false, nodeHttp = false): Promise<void> {
  let cache = new Map<string, unknown>();
  const res = await get('/api/v1/pods');
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const page = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { metadata: { resourceVersion: string }; items: KubeObject[] };
  chunks.length = 0;
  if (keep) for (const item of page.items) cache.set(`${item.metadata.namespace}/${item.metadata.name}`, item);
  synced();
  const take = (buf: Buffer, from: number, to: number) => {
    if (transportOnly) return void countEvent();
    const event = JSON.parse(buf.toString('utf8', from, to)) as { object: KubeObject };
    if (keep) cache.set(`${event.object.metadata.namespace}/${event.object.metadata.name}`, event.object);
    countEvent();
  };
  const lines = lineSplitter(take);
  const path = `/api/v1/pods?watch=1&resourceVersion=${page.metadata.resourceVersion}`;
  if (nodeHttp) {
    const watch = await get(path);
    release = () => {
      watch.destroy();
      cache = new Map();
    };
    watch.on('data', (chunk: Buffer) => lines(chunk, 0, chunk.length, false));
    return;
  }
  const socket = socketGet(path, (buf, from, to) => lines(buf, from, to, true));
  release = () => {
    socket.destroy();
    cache = new Map();
  };
}

/** Cuts bytes into lines for `take`; a line cut by a read is joined (copied first if the bytes are `volatile`). */
function lineSplitter(take: (buf: Buffer, from: number, to: number) => void): (buf: Buffer, from: number, to: number, volatile: boolean) => void {
  let pieces: Buffer[] = [];
  return (buf, from, to, volatile) => {
    let nl = buf.indexOf(10, from);
    if (nl !== -1 && nl < to && pieces.length > 0) {
      pieces.push(buf.subarray(from, nl));
      const line = Buffer.concat(pieces);
      pieces = [];
      take(line, 0, line.length);
      from = nl + 1;
      nl = buf.indexOf(10, from);
    }
    while (nl !== -1 && nl < to) {
      take(buf, from, nl);
      from = nl + 1;
      nl = buf.indexOf(10, from);
    }
    if (from < to) pieces.push(volatile ? Buffer.from(buf.subarray(from, to)) : buf.subarray(from, to));
  };
}

/**
 * A GET whose chunked body goes to `body` as it is read, over a socket
 * that reads into one buffer: the least a client must do to get the
 * bytes. (The bench's server always answers a watch 200, chunked.)
 */
function socketGet(path: string, body: (buf: Buffer, from: number, to: number) => void): net.Socket {
  const target = new URL(url);
  const buffer = Buffer.allocUnsafe(64 * 1024);
  let head = '';
  let inBody = false;
  /** Bytes left of the chunk being read; -1 while reading a chunk-size line, -2 in the CRLF after a chunk. */
  let left = -1;
  let sizeLine = '';
  const socket = net.connect({
    host: target.hostname,
    port: Number(target.port),
    onread: {
      buffer,
      callback: (n: number) => {
        let i = 0;
        if (!inBody) {
          head += buffer.toString('latin1', 0, n);
          const end = head.indexOf('\r\n\r\n');
          if (end === -1) return true;
          if (!head.startsWith('HTTP/1.1 200 ')) throw new Error(`the watch was answered ${JSON.stringify(head.slice(0, head.indexOf('\r\n')))}`);
          inBody = true;
          i = n - (head.length - end - 4);
        }
        while (i < n) {
          if (left === -2) {
            if (buffer[i++] === 10) left = -1;
          } else if (left === -1) {
            const c = buffer[i++] as number;
            if (c === 10) {
              left = parseInt(sizeLine, 16);
              sizeLine = '';
              if (left === 0) return true;
            } else if (c !== 13) sizeLine += String.fromCharCode(c);
          } else {
            const to = Math.min(n, i + left);
            body(buffer, i, to);
            left -= to - i;
            i = to;
            if (left === 0) left = -2;
          }
        }
        return true;
      },
    },
  });
  socket.write(`GET ${target.pathname.replace(/\/$/, '')}${path} HTTP/1.1\r\nHost: ${target.host}\r\n\r\n`);
  return socket;
}

async function clientNode(): Promise<void> {
  const kc = kubeConfig();
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const informer = k8s.makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
  let held: typeof informer | undefined = informer;
  let stopping = false;
  release = () => {
    stopping = true;
    void held?.stop();
    // The informer keeps its objects after stop(): only dropping it lets them go.
    held = undefined;
  };
  informer.on('update', countEvent);
  informer.on('error', (err: unknown) => {
    if (stopping) return; // the abort of its own watch
    console.error('client-node informer error', err);
    process.exit(1);
  });
  await informer.start();
  synced();
}

function rxkube(options: ListWatchOptions<KubeObject>): void {
  const subscription = listWatch(kubeConfig(), { version: 'v1', resource: 'pods' }, options)
    .pipe(
      deltas(),
      indexer(),
      tap((e) => {
        if (e.type === 'Synced' && syncedAt === 0) synced();
      }),
      filter(isDelta),
      filter((d) => d.type === 'Updated'),
      tap(countEvent),
      map((d) => d.key),
      reconcileByKey(() => undefined, { concurrency: 4 }),
    )
    .subscribe({ error: (err: unknown) => (console.error(err), process.exit(1)) });
  release = () => subscription.unsubscribe();
}

switch (mode) {
  case 'read':
    await reference(false, true);
    break;
  case 'read-http':
    await reference(false, true, true);
    break;
  case 'parse':
    await reference(false);
    break;
  case 'keep':
    await reference(true);
    break;
  case 'client-node':
    await clientNode();
    break;
  case 'rxkube':
    rxkube({});
    break;
  case 'rxkube-metadata':
    rxkube({ metadataOnly: true });
    break;
  case 'rxkube-drop':
    rxkube({ transform: dropManagedFields });
    break;
  case 'rxkube-metadata-drop':
    rxkube({ metadataOnly: true, transform: dropManagedFields });
    break;
  case 'rxkube-parsed':
    rxkube({ compact: false });
    break;
  case 'rxkube-parsed-drop':
    rxkube({ compact: false, transform: dropManagedFields });
    break;
  default:
    throw new Error(`unknown mode ${mode}`);
}
