import { makeInformer, Watch, type CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { request } from 'node:http';
import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { configmaps, eventually, RawWatch, start, startWithClients, watchPath } from './apiserver.helpers.js';

describe('embedded API server: watches', () => {
  let server: ApiServer;
  let core: CoreV1Api;
  const watches: RawWatch[] = [];
  const cmPath = '/api/v1/namespaces/default/configmaps';

  beforeEach(async () => ({ server, core } = await startWithClients({ bookmarkIntervalMs: 50, historyWindow: 20 })));
  afterEach(async () => {
    for (const w of watches.splice(0)) w.close();
    await server.close();
  });

  function watch(path: string, query: Record<string, string> = {}, headers: Record<string, string> = {}): RawWatch {
    const w = new RawWatch(server, watchPath(path, query), headers);
    watches.push(w);
    return w;
  }

  async function create(name: string, labels?: Record<string, string>): Promise<V1ConfigMap> {
    return core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, labels } } });
  }

  it('streams ADDED, MODIFIED and DELETED as newline-delimited JSON over a chunked 200', async () => {
    const w = watch(cmPath, { resourceVersion: server.resourceVersion });
    await w.opened;
    expect(w.status).to.equal(200);
    expect(w.headers['content-type']).to.equal('application/json');
    expect(w.headers['transfer-encoding']).to.equal('chunked');
    const created = await create('a');
    await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: { ...created, data: { k: 'v' } } });
    await core.deleteNamespacedConfigMap({ name: 'a', namespace: 'default' });
    const events = await w.until(3);
    expect(events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED']);
    const rvs = events.map((e) => Number(e.object.metadata?.resourceVersion));
    expect(rvs[0]).to.equal(Number(created.metadata?.resourceVersion));
    expect(rvs[1]).to.be.greaterThan(rvs[0]);
    expect(rvs[2]).to.be.greaterThan(rvs[1]);
    expect(w.badLines).to.deep.equal([]);
  });

  it('delivers each event as soon as it happens, one line per event', async () => {
    const w = watch(cmPath, { resourceVersion: server.resourceVersion });
    await w.opened;
    await create('a');
    await w.until(1);
    expect(w.body.endsWith('\n')).to.equal(true);
    await create('b');
    await w.until(2);
    expect(w.body.split('\n').filter((l) => l !== '')).to.have.length(2);
  });

  it('starts with a synthetic ADDED for every object when started without a resourceVersion or at 0', async () => {
    await create('a');
    await create('b');
    for (const query of [{}, { resourceVersion: '0' }] as Record<string, string>[]) {
      const w = watch(cmPath, query);
      const events = await w.until(2);
      expect(events.map((e) => `${e.type} ${e.object.metadata?.name}`)).to.deep.equal(['ADDED a', 'ADDED b']);
    }
  });

  it('resumes after a resourceVersion, replaying exactly the changes since then', async () => {
    await create('a');
    const rv = server.resourceVersion;
    await create('b');
    await core.deleteNamespacedConfigMap({ name: 'a', namespace: 'default' });
    const w = watch(cmPath, { resourceVersion: rv });
    const events = await w.until(2);
    expect(events.map((e) => `${e.type} ${e.object.metadata?.name}`)).to.deep.equal(['ADDED b', 'DELETED a']);
  });

  it('answers a watch from a resourceVersion older than the history with an ERROR 410 Expired event, then ends', async () => {
    await create('a');
    const rv = server.resourceVersion;
    for (let i = 0; i < 25; i++) await create(`x${i}`);
    const w = watch(cmPath, { resourceVersion: rv });
    expect(await w.ended).to.equal('end');
    expect(w.status).to.equal(200);
    expect(w.events).to.have.length(1);
    expect(w.events[0].type).to.equal('ERROR');
    expect(w.events[0].object).to.deep.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 });
    expect(String(w.events[0].object.message)).to.match(new RegExp(`^too old resource version: ${rv} \\(\\d+\\)$`));
  });

  it('sends periodic BOOKMARKs carrying only the resourceVersion when asked to', async () => {
    await create('a');
    const w = watch(cmPath, { resourceVersion: server.resourceVersion, allowWatchBookmarks: 'true' });
    const [bookmark] = await w.until(1, 'BOOKMARK');
    expect(bookmark.object).to.deep.equal({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: server.resourceVersion } });
    await create('b');
    const marks = await w.until(3, 'BOOKMARK');
    expect(marks[2].object.metadata?.resourceVersion).to.equal(server.resourceVersion);
  });

  it('ends the watch cleanly after timeoutSeconds, having sent no bookmark it was not asked for', async () => {
    const w = watch(cmPath, { resourceVersion: server.resourceVersion, timeoutSeconds: '1' });
    await w.opened;
    expect(server.openWatches()).to.equal(1);
    expect(await w.ended).to.equal('end');
    expect(w.events).to.deep.equal([]);
    await eventually(() => server.openWatches() === 0, 2000, 'the watch to be gone');
  });

  it('streams the current objects then the initial-events-end bookmark with sendInitialEvents', async () => {
    await create('a');
    await create('b');
    const w = watch(cmPath, { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true' });
    const events = await w.until(3);
    expect(events.slice(0, 2).map((e) => `${e.type} ${e.object.metadata?.name}`)).to.deep.equal(['ADDED a', 'ADDED b']);
    expect(events[2].type).to.equal('BOOKMARK');
    expect(events[2].object.metadata?.annotations).to.deep.equal({ 'k8s.io/initial-events-end': 'true' });
    expect(events[2].object.metadata?.resourceVersion).to.equal(server.resourceVersion);
    await create('c');
    await eventually(() => w.events.some((e) => e.type === 'ADDED' && e.object.metadata?.name === 'c'));
  });

  it('refuses sendInitialEvents without resourceVersionMatch=NotOlderThan with 422', async () => {
    const w = watch(cmPath, { sendInitialEvents: 'true', allowWatchBookmarks: 'true' });
    await w.ended;
    expect(w.status).to.equal(422);
    expect(JSON.parse(w.body).message).to.contain('sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
  });

  it('filters by selectors: an object that starts matching is ADDED, one that stops is DELETED', async () => {
    const w = watch(cmPath, { resourceVersion: server.resourceVersion, labelSelector: 'tier=gold' });
    await w.opened;
    const a = await create('a', { tier: 'silver' });
    const gold = await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: { ...a, metadata: { ...a.metadata, labels: { tier: 'gold' } } } });
    const touched = await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: { ...gold, data: { x: '1' } } });
    const silver = await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: { ...touched, metadata: { ...touched.metadata, labels: { tier: 'silver' } } } });
    await core.deleteNamespacedConfigMap({ name: 'a', namespace: 'default' });
    await create('b', { tier: 'gold' });
    const events = await w.until(4);
    expect(events.map((e) => `${e.type} ${e.object.metadata?.name}`)).to.deep.equal(['ADDED a', 'MODIFIED a', 'DELETED a', 'ADDED b']);
    // The DELETED of an object leaving the selection shows its last matching state at the new resourceVersion.
    expect((events[2].object.metadata as { labels?: object }).labels).to.deep.equal({ tier: 'gold' });
    expect(events[2].object.metadata?.resourceVersion).to.equal(silver.metadata?.resourceVersion);
  });

  it('watches one namespace, or all of them at /api/v1/configmaps', async () => {
    await core.createNamespace({ body: { metadata: { name: 'other' } } });
    const one = watch(cmPath, { resourceVersion: server.resourceVersion });
    const all = watch('/api/v1/configmaps', { resourceVersion: server.resourceVersion });
    await Promise.all([one.opened, all.opened]);
    await core.createNamespacedConfigMap({ namespace: 'other', body: { metadata: { name: 'x' } } });
    await create('y');
    await all.until(2);
    await one.until(1);
    expect(one.events.map((e) => e.object.metadata?.name)).to.deep.equal(['y']);
  });

  it('watches a single object by name through a field selector, as kubectl get -w does', async () => {
    await create('a');
    await create('b');
    const w = watch(cmPath, { fieldSelector: 'metadata.name=b' });
    const [added] = await w.until(1);
    expect(added.object.metadata?.name).to.equal('b');
    await core.deleteNamespacedConfigMap({ name: 'a', namespace: 'default' });
    await core.deleteNamespacedConfigMap({ name: 'b', namespace: 'default' });
    await w.until(2);
    expect(w.events.map((e) => `${e.type} ${e.object.metadata?.name}`)).to.deep.equal(['ADDED b', 'DELETED b']);
  });

  it('sends no event for a write that changes nothing', async () => {
    const a = await create('a');
    const w = watch(cmPath, { resourceVersion: server.resourceVersion });
    await w.opened;
    await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: a });
    await create('marker');
    const events = await w.until(1);
    expect(events.map((e) => e.object.metadata?.name)).to.deep.equal(['marker']);
  });

  it('works with client-node Watch: events reach the callback and abort ends the watch', async () => {
    const seen: string[] = [];
    let doneWith: unknown = 'not yet';
    const controller = await new Watch(server.kubeConfig()).watch(
      cmPath,
      { resourceVersion: server.resourceVersion, allowWatchBookmarks: true },
      (type, obj: V1ConfigMap) => seen.push(`${type} ${obj.metadata?.name ?? ''}`),
      (err) => (doneWith = err),
    );
    await eventually(() => server.openWatches() === 1);
    await create('a');
    await eventually(() => seen.includes('ADDED a'));
    controller.abort();
    await eventually(() => server.openWatches() === 0, 2000, 'the server to see the watch go');
    expect(doneWith).to.not.equal('not yet');
  });

  it('keeps a client-node informer in sync through adds, updates, deletes and a dropped watch', async () => {
    const informer = makeInformer(server.kubeConfig(), cmPath, () => core.listNamespacedConfigMap({ namespace: 'default' }));
    const added: string[] = [];
    informer.on('add', (o) => added.push(o.metadata?.name ?? ''));
    informer.on('error', () => setTimeout(() => void informer.start(), 10));
    await create('a');
    await informer.start();
    await eventually(() => added.includes('a'));
    const b = await create('b');
    await core.replaceNamespacedConfigMap({ name: 'b', namespace: 'default', body: { ...b, data: { v: '2' } } });
    await core.deleteNamespacedConfigMap({ name: 'a', namespace: 'default' });
    await eventually(() => informer.list('default').map((o) => o.metadata?.name).join() === 'b' && informer.get('b', 'default')?.data?.v === '2');
    server.faults.dropWatches();
    await create('c');
    await eventually(() => informer.list('default').map((o) => o.metadata?.name).sort().join() === 'b,c', 5000, 'the informer to see c after the drop');
    await informer.stop();
  });

  it('frees the watch when the client goes away', async () => {
    const w = watch(cmPath, { resourceVersion: server.resourceVersion });
    await w.opened;
    expect(server.openWatches()).to.equal(1);
    w.close();
    await eventually(() => server.openWatches() === 0);
  });

  it('serves watches of other versions of a shared storage: events.k8s.io/v1 sees core Events, renamed', async () => {
    const w = watch('/apis/events.k8s.io/v1/namespaces/default/events', { resourceVersion: server.resourceVersion });
    await w.opened;
    await core.createNamespacedEvent({
      namespace: 'default',
      body: { metadata: { name: 'e1' }, involvedObject: { kind: 'Pod', name: 'p' }, message: 'hello', reason: 'Test', type: 'Normal' },
    });
    const [event] = await w.until(1);
    expect(event.object.apiVersion).to.equal('events.k8s.io/v1');
    expect(event.object.note).to.equal('hello');
    expect(event.object.regarding).to.deep.equal({ kind: 'Pod', name: 'p' });
    expect(event.object.message).to.equal(undefined);
  });

  describe('with a client that reads slowly', () => {
    const big = (i: number): Record<string, string> => ({ blob: `${i}:${'x'.repeat(20_000)}` });

    /** A watch whose reading is paused until `resume` (the socket fills, the server must hold events back). */
    function pausedWatch(target: ApiServer, from: string): { resume: () => void; lines: () => string[]; ended: Promise<void> } {
      // The server may count the watch open before the client has its response: a resume asked
      // for before then happens when the response comes.
      let resumeFn = (): void => void (resumedEarly = true);
      let resumedEarly = false;
      let body = '';
      let endedFn!: () => void;
      const ended = new Promise<void>((resolve) => (endedFn = resolve));
      const req = request(`${target.url}${watchPath(cmPath, { resourceVersion: from })}`, (res) => {
        if (!resumedEarly) res.pause();
        resumeFn = () => res.resume();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('close', endedFn);
      });
      req.end();
      // Only whole lines: what follows the last newline is an event still arriving, not yet JSON.
      return { resume: () => resumeFn(), lines: () => body.split('\n').slice(0, -1).filter((l) => l !== ''), ended };
    }

    it('holds events back while the client does not read and sends them all, in order, when it does', async () => {
      const roomy = await start({ historyWindow: 1000 });
      try {
        const w = pausedWatch(roomy, roomy.resourceVersion);
        await eventually(() => roomy.openWatches() === 1);
        for (let i = 0; i < 400; i++) roomy.put(configmaps, { metadata: { name: `c${i}` }, data: big(i) } as never);
        w.resume();
        await eventually(() => w.lines().length === 400, 10_000, 'all 400 events');
        const names = w.lines().map((l) => (JSON.parse(l) as { object: { metadata: { name: string } } }).object.metadata.name);
        expect(names).to.deep.equal(Array.from({ length: 400 }, (_, i) => `c${i}`));
        expect(roomy.openWatches()).to.equal(1);
      } finally {
        await roomy.close();
      }
    });

    it('ends, cleanly, a watch whose client falls out of the history window, so it resumes from where it was', async () => {
      const small = await start({ historyWindow: 50 });
      try {
        const w = pausedWatch(small, small.resourceVersion);
        await eventually(() => small.openWatches() === 1);
        for (let i = 0; i < 200; i++) small.put(configmaps, { metadata: { name: `c${i}` }, data: big(i) } as never);
        w.resume();
        await w.ended;
        expect(small.openWatches()).to.equal(0);
        const received = w.lines();
        expect(received.length).to.be.greaterThan(0);
        expect(received.length).to.be.lessThan(200);
        const names = received.map((l) => (JSON.parse(l) as { object: { metadata: { name: string } } }).object.metadata.name);
        expect(names).to.deep.equal(Array.from({ length: received.length }, (_, i) => `c${i}`));
      } finally {
        await small.close();
      }
    });
  });

  it('ends every open watch and leaves nothing behind when the server closes', async () => {
    const w = watch(cmPath, { resourceVersion: server.resourceVersion, allowWatchBookmarks: 'true' });
    await w.opened;
    await server.close();
    expect(await w.ended).to.be.oneOf(['end', 'aborted']);
    expect(server.openWatches()).to.equal(0);
  });
});
