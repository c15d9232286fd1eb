import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { expect } from 'chai';
import { tap, type Subscription } from 'rxjs';
import { deltas, listWatch, silentLogger, type ListWatchOptions, ListWatchError, dropManagedFields, indexer, type StoreEvent, isDelta, type KubeObject, type ListWatchEvent } from 'rxkube';
import { type ListWatchMonitor, type SourceStatus } from '../../src/sources/listWatch.js';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };

describe('listWatch against the embedded API server', function () {
  let server: ApiServer;
  let kc: KubeConfig;
  let core: CoreV1Api;
  const running: Subscription[] = [];

  beforeEach(async () => {
    server = await startApiServer({ bookmarkIntervalMs: 50 });
    kc = server.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
  });

  afterEach(async () => {
    for (const s of running.splice(0)) s.unsubscribe();
    await server.close();
  });

  const create = (name: string, data: Record<string, string> = { v: '1' }) =>
    core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name }, data } });
  const update = (name: string, data: Record<string, string>) =>
    core.patchNamespacedConfigMap({ namespace: 'default', name, body: { data } }, withMergePatch);
  const remove = (name: string) => core.deleteNamespacedConfigMap({ namespace: 'default', name });

  /** Runs listWatch → deltas → indexer, recording everything it emits. */
  function informer(options: ListWatchOptions<KubeObject> = {}) {
    const raw: ListWatchEvent[] = [];
    const out: StoreEvent[] = [];
    const retries: Parameters<NonNullable<ListWatchMonitor['retry']>>[0][] = [];
    const restarts: string[] = [];
    const malformed: string[] = [];
    let error: unknown;
    const monitor: ListWatchMonitor = {
      retry: (info) => retries.push(info),
      watchRestart: (_r, reason) => restarts.push(reason),
      malformedLine: (_r, e) => malformed.push(e.message),
    };
    const subscription = listWatch(kc, configmaps, { scheduler: dilatedScheduler(100), idleTimeout: 600_000, monitor, ...options })
      .pipe(
        tap((e) => raw.push(e)),
        deltas(),
        indexer(),
      )
      .subscribe({ next: (e) => out.push(e), error: (e: unknown) => (error = e) });
    running.push(subscription);
    const store = () => out[out.length - 1]?.store;
    return {
      raw,
      out,
      retries,
      restarts,
      malformed,
      error: () => error,
      store,
      storeNames: () => (store()?.list() ?? []).map((o) => o.metadata.name).sort(),
      serverNames: () => server.snapshot(configmaps).map((o) => o.metadata.name as string).sort(),
    };
  }

  const requests = (verb: string) => server.requestLog.filter((r) => r.verb === verb && r.resource === 'configmaps');

  it('lists page by page, then watches from the list version with bookmarks and a 300–600 s timeout', async () => {
    for (const name of ['a', 'b', 'c', 'd', 'e']) await create(name);
    const i = informer({ pageSize: 2 });
    await waitFor(() => i.raw.some((e) => e.type === 'Synced') && requests('watch').length > 0, 'the list and the watch');
    const lists = requests('list');
    expect(lists.map((r) => [r.query.limit, r.query.continue !== undefined])).to.deep.equal([
      ['2', false],
      ['2', true],
      ['2', true],
    ]);
    expect(i.raw.map((e) => e.type)).to.deep.equal(['Restart', 'Listed', 'Listed', 'Listed', 'Listed', 'Listed', 'Synced']);
    const synced = i.raw.find((e) => e.type === 'Synced') as { resourceVersion: string };
    const watch = requests('watch')[0]!;
    expect(watch.query.resourceVersion).to.equal(synced.resourceVersion);
    expect(watch.query.allowWatchBookmarks).to.equal('true');
    const timeout = Number(watch.query.timeoutSeconds);
    expect(timeout).to.be.within(300, 600);
    // List items come without apiVersion and kind; the source puts them back.
    const listed = i.raw.find((e) => e.type === 'Listed') as { object: KubeObject };
    expect([listed.object.apiVersion, listed.object.kind]).to.deep.equal(['v1', 'ConfigMap']);
  });

  it('emits watch events after Synced and keeps the store equal to the server', async () => {
    await create('a');
    const i = informer();
    await waitFor(() => requests('watch').length > 0, 'the watch');
    await create('b');
    await update('a', { v: '2' });
    await remove('b');
    await waitFor(() => i.raw.filter((e) => e.type === 'Deleted').length === 1, 'the delete');
    expect(i.raw.filter((e) => e.type !== 'Bookmark').map((e) => e.type)).to.deep.equal([
      'Restart',
      'Listed',
      'Synced',
      'Added',
      'Modified',
      'Deleted',
    ]);
    expect(i.storeNames()).to.deep.equal(i.serverNames());
    expect(i.store()?.get('default/a')?.metadata.resourceVersion).to.equal(
      server.snapshot(configmaps).find((o) => o.metadata.name === 'a')?.metadata.resourceVersion,
    );
  });

  it('resumes a cleanly closed watch from the last version seen, without a re-list', async () => {
    await create('a');
    const i = informer();
    await waitFor(() => requests('watch').length === 1, 'the first watch');
    await update('a', { v: '2' });
    await waitFor(() => i.raw.some((e) => e.type === 'Modified'), 'the update');
    const seen = i.store()?.resourceVersion;
    server.faults.closeWatches();
    await waitFor(() => requests('watch').length === 2, 'the second watch');
    expect(requests('list')).to.have.length(1);
    // Exactly the version it had seen, compared as the opaque string it is: a later one would skip events.
    expect(requests('watch')[1]!.query.resourceVersion).to.equal(seen);
    expect(i.restarts).to.include('closed');
    await create('c');
    await waitFor(() => i.storeNames().includes('c'), 'an event on the resumed watch');
  });

  it('reconnects after a dropped connection and loses nothing written meanwhile', async () => {
    await create('a');
    const i = informer({ backoff: { initialMs: 1000 } });
    await waitFor(() => requests('watch').length === 1, 'the first watch');
    // Held off until both writes are in: a reconnect answered 403 is retried, and none can succeed
    // meanwhile, however quickly the dilated backoff comes round on a busy or an idle machine.
    server.faults.forbid({ verb: 'watch', resource: 'configmaps' });
    server.faults.dropWatches();
    await create('b');
    await remove('a');
    const writesDone = server.requestLog.length;
    server.faults.allow({ verb: 'watch', resource: 'configmaps' });
    await waitFor(() => i.storeNames().join() === 'b', 'the changes made while disconnected');
    const log = server.requestLog;
    const isWatch = (r: (typeof log)[number]) => r.verb === 'watch' && r.resource === 'configmaps';
    const first = log.findIndex(isWatch);
    const resumed = log.findIndex((r, n) => n > first && isWatch(r) && r.status === 200);
    expect(resumed, 'the watch resumed only after both writes').to.be.at.least(writesDone);
    expect(requests('list')).to.have.length(1);
    expect(i.restarts).to.include('dropped');
    expect(i.retries[0]?.verb).to.equal('watch');
  });

  for (const form of ['an ERROR event', 'an HTTP status'] as const) {
    it(`re-lists after a 410 sent as ${form}, with tombstones for objects deleted meanwhile`, async () => {
      server.faults.watch410AsHttpStatus(form === 'an HTTP status');
      for (const name of ['a', 'b', 'c']) await create(name);
      const i = informer({ backoff: { initialMs: 1000 } });
      await waitFor(() => requests('watch').length === 1, 'the first watch');
      // Held off (403, retried) until the history is compacted, however fast the dilated backoff comes round.
      server.faults.forbid({ verb: 'watch', resource: 'configmaps' });
      server.faults.dropWatches();
      // While it is away: b goes, d comes, and the history it would resume from is compacted.
      await remove('b');
      await create('d');
      server.faults.compact();
      server.faults.allow({ verb: 'watch', resource: 'configmaps' });
      await waitFor(() => requests('list').length === 2 && i.storeNames().join() === 'a,c,d', 'the re-list');
      const tombstones = i.out.filter(isDelta).filter((d) => d.type === 'Deleted');
      expect(tombstones.map((d) => [d.key, d.finalStateUnknown])).to.deep.equal([['default/b', true]]);
      expect(i.restarts).to.include('expired');
      expect(i.storeNames()).to.deep.equal(i.serverNames());
    });
  }

  it('waits out a 429 for at least its Retry-After', async () => {
    await create('a');
    server.faults.failNext(1, { code: 429, retryAfterSeconds: 3, verb: 'watch', resource: 'configmaps' });
    const i = informer({ backoff: { initialMs: 10, jitter: 0 } });
    await waitFor(() => requests('watch').length === 2, 'the retried watch');
    expect(i.retries).to.have.length(1);
    expect(i.retries[0]).to.include({ verb: 'watch', code: 429, delayMs: 3000 });
    expect(i.restarts).to.deep.equal(['throttled']);
    expect(requests('list')).to.have.length(1);
  });

  it('backs off 500s with doubling delays, then recovers', async () => {
    await create('a');
    server.faults.failNext(4, { code: 500, message: 'etcd is sad', verb: 'list', resource: 'configmaps' });
    const i = informer({ backoff: { initialMs: 800, jitter: 0 } });
    await waitFor(() => i.raw.some((e) => e.type === 'Synced'), 'the list after the failures');
    expect(i.retries.map((r) => [r.verb, r.code, r.delayMs])).to.deep.equal([
      ['list', 500, 800],
      ['list', 500, 1600],
      ['list', 500, 3200],
      ['list', 500, 6400],
    ]);
    expect(i.storeNames()).to.deep.equal(['a']);
  });

  it('takes a silent watch for dead after its idle limit and reopens it', async () => {
    await create('a');
    const i = informer({ idleTimeout: 20_000, backoff: { initialMs: 10 } });
    await waitFor(() => requests('watch').length === 1, 'the first watch');
    server.faults.silenceWatches();
    await waitFor(() => i.restarts.includes('idle'), 'the idle limit');
    server.faults.unsilenceWatches();
    await waitFor(() => requests('watch').length >= 2, 'the reopened watch');
    await create('b');
    await waitFor(() => i.storeNames().join() === 'a,b', 'events on the reopened watch');
    expect(requests('list')).to.have.length(1);
  });

  it('sees watch events late, in order, while delayWatchEvents holds them, and sees them again once it is lifted', async () => {
    await create('a');
    const i = informer();
    await waitFor(() => i.storeNames().join() === 'a', 'the list');
    server.faults.delayWatchEvents(400, { resource: 'configmaps' });
    const start = Date.now();
    await create('b');
    await create('c');
    // The writes were answered; their events are still held.
    expect(i.storeNames().join()).to.equal('a');
    await waitFor(() => i.storeNames().join() === 'a,b,c', 'the delayed events');
    expect(Date.now() - start).to.be.at.least(390);
    const added = i.raw.flatMap((e) => (e.type === 'Added' ? [e.object.metadata.name] : []));
    expect(added).to.deep.equal(['b', 'c']);
    server.faults.delayWatchEvents(0, { resource: 'configmaps' });
    await create('d');
    // After any line still held (a bookmark sent during the delay): none overtakes another.
    await waitFor(() => i.storeNames().join() === 'a,b,c,d', 'an event after the delay is lifted');
  });

  it('gives up a list that sends nothing for its idle limit and lists again', async () => {
    await create('a');
    server.faults.latency(60_000, { verb: 'list', resource: 'configmaps' });
    const i = informer({ idleTimeout: 20_000, backoff: { initialMs: 10 } });
    await waitFor(() => i.retries.some((r) => r.verb === 'list' && r.reason.includes('sent nothing')), 'the idle limit on the list');
    server.faults.latency(0, { verb: 'list', resource: 'configmaps' });
    await waitFor(() => i.raw.some((e) => e.type === 'Synced'), 'a list that completes');
    expect(i.storeNames()).to.deep.equal(['a']);
    expect(i.error()).to.equal(undefined);
  });

  it('reports a malformed line and reopens the watch from the last good version', async () => {
    await create('a');
    const i = informer({ backoff: { initialMs: 10 } });
    await waitFor(() => requests('watch').length === 1, 'the first watch');
    await update('a', { v: '2' });
    await waitFor(() => i.raw.some((e) => e.type === 'Modified'), 'the update');
    const good = i.store()?.resourceVersion;
    server.faults.malformedLine('{"type":"MODIFIED","object":{"metadata"');
    await waitFor(() => requests('watch').length === 2, 'the reopened watch');
    expect(i.malformed).to.have.length(1);
    expect(i.malformed[0]).to.contain('malformed watch line (not JSON');
    expect(requests('watch')[1]!.query.resourceVersion).to.equal(good);
    expect(i.restarts).to.include('malformed');
    await create('b');
    await waitFor(() => i.storeNames().join() === 'a,b', 'events after the malformed line');
    expect(i.error()).to.equal(undefined);
  });

  it("logs a malformed line through the caller's logger with the error, resource, offset and length, never its content", async () => {
    await create('a');
    const records: { level: string; fields: unknown; message: string | undefined }[] = [];
    const at = (level: string) => (fields: unknown, message?: string) => records.push({ level, fields, message });
    const i = informer({ backoff: { initialMs: 10 }, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } });
    await waitFor(() => requests('watch').length === 1, 'the first watch');
    const secretLine = '{"type":"MODIFIED","object":{"kind":"Secret","metadata":{"name":"db"},"data":{"password":"aHVudGVyMg=="}';
    server.faults.malformedLine(secretLine);
    await waitFor(() => requests('watch').length === 2, 'the reopened watch');
    const logged = records.find((r) => r.message?.startsWith('malformed watch line'));
    expect(logged?.level).to.equal('error');
    expect(logged?.fields).to.deep.include({ resource: 'configmaps' });
    expect(String((logged?.fields as { error?: unknown }).error)).to.match(new RegExp(`^malformed watch line \\(not JSON: [^"]*\\) at byte \\d+ of the response, ${secretLine.length} bytes$`));
    expect(JSON.stringify(records)).not.to.match(/aHVudGVyMg|password|Secret/);
    expect(i.malformed.join()).not.to.match(/aHVudGVyMg|password/);
  });

  it('restarts a list whose continue token expired (410) from the top', async () => {
    for (const name of ['a', 'b', 'c', 'd']) await create(name);
    let lists = 0;
    const i = informer({
      pageSize: 2,
      backoff: { initialMs: 10 },
      monitor: {
        request: (verb) => {
          // Between page one and page two: a write, then the history (and the token's snapshot) is compacted away.
          if (verb === 'list' && ++lists === 2) {
            server.put(configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'e', namespace: 'default' } });
            server.faults.compact();
          }
        },
      },
    });
    await waitFor(() => i.raw.some((e) => e.type === 'Synced'), 'the list');
    const pages = requests('list').map((r) => [r.query.continue !== undefined, r.status]);
    expect(pages).to.deep.equal([
      [false, 200],
      [true, 410],
      [false, 200],
      [true, 200],
      [true, 200],
    ]);
    expect(i.raw.filter((e) => e.type === 'Restart')).to.have.length(2);
    expect(i.storeNames()).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
  });

  it('lists through a streaming watch when asked, ending at the initial-events-end bookmark', async () => {
    for (const name of ['a', 'b']) await create(name);
    const i = informer({ streamingList: true });
    await waitFor(() => i.raw.some((e) => e.type === 'Synced'), 'the streaming list');
    expect(requests('list')).to.have.length(0);
    const first = requests('watch')[0]!;
    expect(first.query).to.include({ sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true' });
    expect(i.raw.slice(0, 4).map((e) => e.type)).to.deep.equal(['Restart', 'Listed', 'Listed', 'Synced']);
    await create('c');
    await waitFor(() => i.storeNames().join() === 'a,b,c', 'a watch event after the streaming list');
    // The same connection carries on as the watch.
    expect(requests('watch')).to.have.length(1);
  });

  it('applies the transform to every object before anything downstream holds it', async () => {
    await create('a');
    const i = informer({ transform: dropManagedFields });
    await waitFor(() => requests('watch').length === 1, 'the watch');
    await update('a', { v: '2' });
    await create('b');
    await waitFor(() => i.storeNames().join() === 'a,b' && i.raw.some((e) => e.type === 'Modified'), 'the events');
    // The server does keep managedFields on these objects; the store never sees them.
    expect(server.snapshot(configmaps).every((o) => Array.isArray(o.metadata.managedFields))).to.equal(true);
    const objects = i.raw.filter((e): e is Extract<ListWatchEvent, { object: KubeObject }> => 'object' in e).map((e) => e.object);
    expect(objects).to.have.length(3);
    expect(objects.every((o) => o.metadata.managedFields === undefined)).to.equal(true);
  });

  describe('forbidden and unauthorized while running', () => {
    /** Log lines at warn, as `level message {fields}`. */
    function warnings() {
      const lines: { message: string; fields: Record<string, unknown> }[] = [];
      const record = (fields: Record<string, unknown> | string, message?: string) =>
        lines.push(typeof fields === 'string' ? { message: fields, fields: {} } : { message: message ?? '', fields });
      return { lines, logger: { debug: () => {}, info: () => {}, warn: record, error: () => {} } };
    }

    it('retries a 403 with backoff, logging the verb, resource and message, saying it is failing, and recovers once allowed', async () => {
      await create('a');
      server.faults.forbid({ verb: 'list', resource: 'configmaps' });
      const log = warnings();
      const statuses: SourceStatus[] = [];
      const retries: Parameters<NonNullable<ListWatchMonitor['retry']>>[0][] = [];
      const i = informer({ logger: log.logger, monitor: { status: (_r, st) => statuses.push(st), retry: (info) => retries.push(info) } });
      await waitFor(() => retries.filter((r) => r.code === 403).length >= 4, 'several retries of the 403');
      expect(i.error()).to.equal(undefined);
      expect(statuses[0]).to.deep.include({ healthy: false, verb: 'list', code: 403 });
      const forbidden = log.lines.find((l) => l.fields.code === 403);
      expect(forbidden?.fields).to.deep.include({ resource: 'configmaps', verb: 'list' });
      expect(String(forbidden?.fields.message)).to.contain('cannot list');
      expect(forbidden?.message).to.match(/^list of configmaps in namespace "default" forbidden: .*RBAC.*retrying/);
      // The retries back off: each wait is longer than the one before, up to the cap.
      const delays = retries.filter((r) => r.code === 403).map((r) => r.delayMs);
      expect(delays[1]).to.be.greaterThan(delays[0] as number);
      server.faults.allow();
      await waitFor(() => i.storeNames().join() === 'a' && statuses.some((st) => st.healthy), 'the list once allowed');
      expect(statuses.at(-1)).to.deep.equal({ healthy: true });
    });

    it('retries a 401 and recovers once the token is rotated', async () => {
      await server.close();
      server = await startApiServer({ token: 'right' });
      kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'embedded', server: server.url, skipTLSVerify: true }],
        users: [{ name: 'rotating', token: 'stale' }],
        contexts: [{ name: 'embedded', cluster: 'embedded', user: 'rotating' }],
        currentContext: 'embedded',
      });
      server.put(configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' } });
      const i = informer();
      await waitFor(() => i.retries.filter((r) => r.code === 401).length >= 2, 'retries of the 401');
      expect(i.error()).to.equal(undefined);
      // As a token file rewritten by a rotation: the next request reads the new one.
      (kc.getCurrentUser() as { token?: string }).token = 'right';
      await waitFor(() => i.storeNames().join() === 'a', 'the list with the new token');
      expect(i.error()).to.equal(undefined);
    });
  });

  describe('faults no retry can fix', () => {
    it("ends with an error on 404 for a resource type the server does not serve, with notServed: 'fail'", async () => {
      const raw: unknown[] = [];
      let error: unknown;
      running.push(
        listWatch(kc, { group: 'example.com', version: 'v1', resource: 'widgets' }, { notServed: 'fail' }).subscribe({
          next: (e) => raw.push(e),
          error: (e: unknown) => (error = e),
        }),
      );
      await waitFor(() => error !== undefined, 'the error');
      expect((error as ListWatchError).code).to.equal(404);
      expect((error as Error).message).to.match(/^cannot list widgets.example.com in all namespaces: the API server does not serve this resource type/);
    });

    it("waits instead for a type of a group a CRD can add to, and for any with notServed: 'wait': the cache empty and synced, the source failing", async () => {
      const statuses: SourceStatus[] = [];
      const seen: Record<string, ListWatchEvent[]> = { widgets: [], configmap: [] };
      let error: unknown;
      const monitor: ListWatchMonitor = { status: (_r, status) => statuses.push(status) };
      const widgets = { group: 'example.com', version: 'v1', resource: 'widgets' };
      const misspelt = { version: 'v1', resource: 'configmap' };
      running.push(listWatch(kc, widgets, { monitor, logger: silentLogger }).subscribe({ next: (e) => seen.widgets?.push(e), error: (e: unknown) => (error = e) }));
      running.push(listWatch(kc, misspelt, { notServed: 'wait', logger: silentLogger }).subscribe({ next: (e) => seen.configmap?.push(e), error: (e: unknown) => (error = e) }));
      await waitFor(() => seen.widgets?.length === 2 && seen.configmap?.length === 2, 'the empty lists');
      expect(seen.widgets).to.deep.equal([{ type: 'Restart' }, { type: 'Synced', resourceVersion: '' }]);
      expect(seen.configmap).to.deep.equal([{ type: 'Restart' }, { type: 'Synced', resourceVersion: '' }]);
      expect(statuses).to.deep.equal([{ healthy: false, verb: 'list', reason: 'not served (404 NotFound); waiting for the type to be served', code: 404 }]);
      expect(error).to.equal(undefined);
    });

    it('ends with an error on 400 for a bad selector, quoting it', async () => {
      const i = informer({ labelSelector: 'app in (web' });
      await waitFor(() => i.error() !== undefined, 'the error');
      expect((i.error() as ListWatchError).code).to.equal(400);
      expect((i.error() as Error).message).to.contain('with labelSelector "app in (web"');
    });
  });

  it('aborts its request at once when unsubscribed, leaving no watch open', async () => {
    const i = informer();
    await waitFor(() => server.openWatches() === 1, 'the watch');
    for (const s of running.splice(0)) s.unsubscribe();
    await waitFor(() => server.openWatches() === 0, 'the watch to close');
    expect(i.error()).to.equal(undefined);
  });

  it('completes when its signal aborts', async () => {
    const abort = new AbortController();
    let completed = false;
    running.push(listWatch(kc, configmaps, { signal: abort.signal }).subscribe({ complete: () => (completed = true) }));
    await waitFor(() => server.openWatches() === 1, 'the watch');
    abort.abort();
    expect(completed).to.equal(true);
    await waitFor(() => server.openWatches() === 0, 'the watch to close');
  });
});

const withMergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
