import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Subscription } from 'rxjs';
import { listWatch, type KubeObject, type ListWatchEvent, type Logger } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { kubeConfigFor } from '../support/kubeConfigFor.js';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';

/**
 * The read path at scale, over real HTTP: answers far past the old 64 MiB
 * page cap (one page from a server that ignores `limit`, and `pageSize: 0`
 * against the embedded server), a 20 MB watch line (from a server that is not the embedded one, which refuses a ConfigMap that big as kube does), an object over the
 * per-object cap skipped alone, and a server that went back in time.
 */

const configmaps = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };

/** Log lines by level, to check what was reported. */
function recordingLogger(): Logger & { lines: { level: string; message: string; fields: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown> | string, message?: string): void => {
      lines.push(typeof fields === 'string' ? { level, message: fields, fields: {} } : { level, message: message ?? '', fields });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Counts what a source emits without keeping the objects (100,000 of them would only cost the test memory). */
function counting(kc: KubeConfig, resource: Parameters<typeof listWatch>[1], options: Parameters<typeof listWatch>[2] = {}) {
  const counts: Record<string, number> = {};
  const names: string[] = [];
  const events: ListWatchEvent[] = [];
  let error: unknown;
  const subscription = listWatch(kc, resource, { scheduler: dilatedScheduler(100), ...options }).subscribe({
    next: (e) => {
      counts[e.type] = (counts[e.type] ?? 0) + 1;
      if (e.type !== 'Listed') events.push(e);
      else if (names.length < 3) names.push(e.object.metadata.name as string);
    },
    error: (e: unknown) => (error = e),
  });
  return { counts, names, events, subscription, error: () => error };
}

describe('listWatch at scale', function () {
  this.timeout(120_000);
  const running: Subscription[] = [];
  afterEach(() => {
    for (const s of running.splice(0)) s.unsubscribe();
  });

  describe('against a server that ignores limit', () => {
    const PODS = 100_000;
    let server: http.Server;
    let listBytes = 0;
    const limits: (string | null)[] = [];

    before(async () => {
      const pod = (i: number) =>
        JSON.stringify({
          metadata: {
            name: `pod-${i}`,
            namespace: `ns-${i % 10}`,
            uid: `uid-${i}`,
            resourceVersion: String(i + 1),
            labels: { app: 'web', tier: 'frontend', 'pod-template-hash': '7d4b9c8f6' },
            annotations: { note: 'x'.repeat(400) },
          },
          spec: { containers: [{ name: 'web', image: 'example.com/web:1.4.2' }], nodeName: `node-${i % 50}` },
          status: { phase: 'Running', podIP: `10.0.${(i >> 8) & 255}.${i & 255}` },
        });
      server = http.createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://x');
        if (url.searchParams.get('watch') === '1') {
          // A quiet watch: the test is about the list.
          res.writeHead(200, { 'Content-Type': 'application/json' });
          return;
        }
        limits.push(url.searchParams.get('limit'));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        // Written in pieces, as a real server streams a big answer, and never `limit`ed.
        let bytes = 0;
        const write = (text: string) => {
          bytes += Buffer.byteLength(text);
          return res.write(text);
        };
        write(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${PODS}"},"items":[`);
        let i = 0;
        const pump = () => {
          while (i < PODS) {
            const batch: string[] = [];
            for (const end = Math.min(PODS, i + 1000); i < end; i++) batch.push(pod(i));
            if (!write(`${i > 1000 ? ',' : ''}${batch.join(',')}`)) return void res.once('drain', pump);
          }
          write(']}');
          listBytes = bytes;
          res.end();
        };
        pump();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });

    after(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it('lists 100,000 pods sent as one answer of more than 64 MiB, item by item, and syncs', async () => {
      const kc = kubeConfigFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      const source = counting(kc, { version: 'v1', resource: 'pods' });
      running.push(source.subscription);
      await waitFor(() => source.counts.Synced === 1 || source.error() !== undefined, 'the list to sync', 100_000);
      expect(source.error()).to.equal(undefined);
      expect(limits[0]).to.equal('500');
      expect(listBytes).to.be.greaterThan(64 * 1024 * 1024);
      expect(source.counts).to.deep.include({ Restart: 1, Listed: PODS, Synced: 1 });
      expect(source.names).to.deep.equal(['pod-0', 'pod-1', 'pod-2']);
      expect(source.events.find((e) => e.type === 'Synced')).to.deep.equal({ type: 'Synced', resourceVersion: String(PODS) });
    });
  });

  // kube-apiserver refuses a ConfigMap over 1 MiB (and the embedded server does too), but an
  // aggregated API server, or etcd run with a raised --max-request-bytes, can send one line this long.
  describe('against a server that sends a 20 MB watch line', () => {
    const BLOB = 20 * 1024 * 1024;
    let server: http.Server;
    before(async () => {
      server = http.createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://x');
        res.writeHead(200, { 'Content-Type': 'application/json' });
        if (url.searchParams.get('watch') !== '1') return void res.end('{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}');
        const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'huge', namespace: 'default', resourceVersion: '2', uid: 'u-huge' }, data: { blob: 'x'.repeat(BLOB) } };
        const line = `${JSON.stringify({ type: 'ADDED', object })}\n`;
        // In 64 KiB writes, as a socket delivers it: the reader must join the pieces of one line.
        for (let at = 0; at < line.length; at += 65_536) res.write(line.slice(at, at + 65_536));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    after(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it('reads the line whole, as one object', async () => {
      const objects: KubeObject[] = [];
      let error: unknown;
      const kc = kubeConfigFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      running.push(
        listWatch(kc, configmaps, { scheduler: dilatedScheduler(100) }).subscribe({
          next: (e) => 'object' in e && objects.push(e.object),
          error: (e: unknown) => (error = e),
        }),
      );
      await waitFor(() => objects.length === 1 || error !== undefined, 'the event');
      expect(error).to.equal(undefined);
      expect(objects[0]?.metadata.name).to.equal('huge');
      expect((objects[0] as unknown as { data: { blob: string } }).data.blob.length).to.equal(BLOB);
    });
  });

  describe('against the embedded API server', () => {
    let server: ApiServer;
    beforeEach(async () => {
      server = await startApiServer({ bookmarkIntervalMs: 60_000 });
    });
    afterEach(async () => {
      await server.close();
    });

    const put = (name: string, bytes: number) =>
      server.put(configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { blob: 'x'.repeat(bytes) } } as KubeObject);

    it('lists more than 64 MiB of ConfigMaps in one response with pageSize 0', async () => {
      for (let i = 0; i < 560; i++) put(`cm-${String(i).padStart(3, '0')}`, 128 * 1024);
      const source = counting(server.kubeConfig(), configmaps, { pageSize: 0 });
      running.push(source.subscription);
      await waitFor(() => source.counts.Synced === 1 || source.error() !== undefined, 'the list to sync', 100_000);
      expect(source.error()).to.equal(undefined);
      const lists = server.requestLog.filter((r) => r.verb === 'list' && r.resource === 'configmaps');
      expect(lists.map((r) => r.query.limit)).to.deep.equal([undefined]);
      expect(source.counts).to.deep.include({ Restart: 1, Listed: 560, Synced: 1 });
    });

    it('skips an object over maxObjectBytes alone, in a list and in a watch, reporting each, and goes on', async () => {
      put('a', 10);
      put('big', 50_000);
      put('c', 10);
      const logger = recordingLogger();
      const skipped: { verb: string; bytes: number }[] = [];
      const names: string[] = [];
      running.push(
        listWatch(server.kubeConfig(), configmaps, { scheduler: dilatedScheduler(100), maxObjectBytes: 20_000, logger, monitor: { skipped: (_r, info) => skipped.push(info) } }).subscribe({
          next: (e) => 'object' in e && names.push(`${e.type} ${e.object.metadata.name}`),
        }),
      );
      await waitFor(() => server.openWatches() === 1, 'the watch');
      put('big2', 50_000);
      put('d', 10);
      await waitFor(() => names.length === 3, 'the events after the big one');
      expect(names).to.deep.equal(['Listed a', 'Listed c', 'Added d']);
      expect(skipped.map((s) => s.verb)).to.deep.equal(['list', 'watch']);
      expect(skipped.every((s) => s.bytes > 50_000)).to.equal(true);
      const errors = logger.lines.filter((l) => l.level === 'error');
      expect(errors.map((l) => l.message)).to.have.length(2);
      expect(errors[0]?.message).to.match(/^list item larger than the largest object kept/);
      expect(String(errors[0]?.fields.head)).to.contain('"name":"big"');
    });

    it('converges to a server that went back in time: the watch gets 504, the source lists again, and says so once at warn', async () => {
      for (const name of ['a', 'b', 'c']) put(name, 10);
      for (let i = 0; i < 20; i++) put('a', i);
      const port = Number(new URL(server.url).port);
      const logger = recordingLogger();
      const keys = new Map<string, KubeObject>();
      const kc = server.kubeConfig();
      running.push(
        listWatch(kc, configmaps, { scheduler: dilatedScheduler(100), logger }).subscribe((e) => {
          if (e.type === 'Restart') keys.clear();
          else if (e.type === 'Listed' || e.type === 'Added' || e.type === 'Modified') keys.set(e.object.metadata.name as string, e.object);
          else if (e.type === 'Deleted') keys.delete(e.object.metadata.name as string);
        }),
      );
      await waitFor(() => server.openWatches() === 1 && keys.size === 3, 'the watch');
      // The "restored" server: the same address, an older state (b only, at a far lower resourceVersion).
      await server.close();
      server = await startApiServer({ port, bookmarkIntervalMs: 60_000 });
      put('b', 10);
      await waitFor(() => [...keys.keys()].join() === 'b', 'the source to converge on the restored server');
      expect(keys.get('b')?.metadata.resourceVersion).to.equal(server.snapshot(configmaps)[0]?.metadata.resourceVersion);
      const watches = server.requestLog.filter((r) => r.verb === 'watch' && r.resource === 'configmaps');
      expect(watches[0]?.status).to.equal(504);
      // Still watching, on the restored server's versions; changes arrive.
      await waitFor(() => server.openWatches() === 1, 'the new watch');
      put('z', 10);
      await waitFor(() => keys.has('z'), 'a change on the restored server');
      const back = logger.lines.filter((l) => l.message.startsWith("the server's resourceVersion went backwards"));
      // Warned once; what follows from the same cause (the re-list at a lower version) is info.
      expect(back[0]?.level).to.equal('warn');
      expect(back.filter((l) => l.level === 'warn')).to.have.length(1);
    });
  });
});
