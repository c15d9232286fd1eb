import { CoreV1Api, Watch } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { eventually, failure, raw, RawWatch, start, startWithClients, watchPath } from './apiserver.helpers.js';

describe('embedded API server: faults on demand', () => {
  let server: ApiServer;
  let core: CoreV1Api;
  const watches: RawWatch[] = [];
  const cmPath = '/api/v1/namespaces/default/configmaps';

  beforeEach(async () => ({ server, core } = await startWithClients({ bookmarkIntervalMs: 20 })));
  afterEach(async () => {
    for (const w of watches.splice(0)) w.close();
    await server.close();
  });

  function watch(query: Record<string, string> = {}): RawWatch {
    const w = new RawWatch(server, watchPath(cmPath, { resourceVersion: server.resourceVersion, ...query }));
    watches.push(w);
    return w;
  }

  it('dropWatches cuts open watches mid-stream, without the end of the chunked body', async () => {
    const w = watch();
    await w.opened;
    expect(server.faults.dropWatches()).to.equal(1);
    expect(await w.ended).to.equal('aborted');
    await eventually(() => server.openWatches() === 0);
  });

  it('dropWatches reaches client-node Watch as an error in its done callback', async () => {
    let done: unknown = 'not yet';
    await new Watch(server.kubeConfig()).watch(cmPath, {}, () => {}, (err) => (done = err));
    await eventually(() => server.openWatches() === 1);
    server.faults.dropWatches();
    await eventually(() => done !== 'not yet');
    // An error, not the null or undefined of a watch that ended cleanly.
    expect(done).to.be.instanceOf(Error);
  });

  it('closeWatches ends open watches cleanly', async () => {
    const w = watch();
    await w.opened;
    expect(server.faults.closeWatches()).to.equal(1);
    expect(await w.ended).to.equal('end');
  });

  it('compact makes watches from older resourceVersions 410 Expired, while newer ones resume', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    const old = server.resourceVersion;
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'b' } } });
    server.faults.compact();
    const expired = new RawWatch(server, watchPath(cmPath, { resourceVersion: old }));
    watches.push(expired);
    await expired.ended;
    expect(expired.events.map((e) => [e.type, e.object.code, e.object.reason])).to.deep.equal([['ERROR', 410, 'Expired']]);
    const fresh = watch();
    await fresh.opened;
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'c' } } });
    await fresh.until(1);
  });

  it('watch410AsHttpStatus answers an expired watch with HTTP 410 instead of an ERROR event', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    const old = String(Number(server.resourceVersion) - 1);
    server.faults.compact();
    server.faults.watch410AsHttpStatus(true);
    const res = await raw(server, 'GET', watchPath(cmPath, { resourceVersion: old }));
    expect(res.status).to.equal(410);
    expect(res.json()).to.deep.include({ kind: 'Status', reason: 'Expired', code: 410 });
    let error: { statusCode?: number } | undefined;
    await new Watch(server.kubeConfig()).watch(cmPath, { resourceVersion: old }, () => {}, (err) => (error = err as { statusCode?: number }));
    await eventually(() => error !== undefined);
    expect(error?.statusCode).to.equal(410);
  });

  it('failNext answers the next matching requests with 429 and Retry-After, then recovers', async () => {
    server.faults.failNext(2, { code: 429, retryAfterSeconds: 3, verb: 'list', resource: 'configmaps' });
    const first = await raw(server, 'GET', cmPath);
    expect(first.status).to.equal(429);
    expect(first.headers['retry-after']).to.equal('3');
    expect(first.json()).to.deep.equal({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Too many requests, please try again later.',
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 3 },
      code: 429,
    });
    const { code } = await failure(core.listNamespacedConfigMap({ namespace: 'default' }));
    expect(code).to.equal(429);
    const ok = await core.listNamespacedConfigMap({ namespace: 'default' });
    expect(ok.items).to.deep.equal([]);
  });

  it('failNext leaves requests that do not match alone', async () => {
    server.faults.failNext(1, { code: 500, verb: 'create' });
    await core.listNamespacedConfigMap({ namespace: 'default' });
    const { code, body } = await failure(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } }));
    expect(code).to.equal(500);
    expect(body.reason).to.equal('InternalError');
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
  });

  it('failNext can fail a watch request, with a given reason and message', async () => {
    server.faults.failNext(1, { code: 503, message: 'etcd is down', verb: 'watch' });
    const res = await raw(server, 'GET', watchPath(cmPath));
    expect(res.status).to.equal(503);
    expect(res.json()).to.deep.include({ reason: 'ServiceUnavailable', message: 'etcd is down' });
  });

  it('forbid answers 403 Forbidden until allow lifts it', async () => {
    server.faults.forbid({ verb: 'list', resource: 'configmaps' });
    const { code, body } = await failure(core.listNamespacedConfigMap({ namespace: 'default' }));
    expect(code).to.equal(403);
    expect(body.message).to.equal('configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default"');
    await failure(core.listNamespacedConfigMap({ namespace: 'default' }));
    await core.listNamespacedPod({ namespace: 'default' });
    server.faults.allow({ verb: 'list', resource: 'configmaps' });
    await core.listNamespacedConfigMap({ namespace: 'default' });
  });

  it('latency delays matching responses and no others', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    // An hour: no busy machine can make the undelayed request lose this race.
    server.faults.latency(3_600_000, { verb: 'get' });
    let slowSettled = false;
    const slow = core.readNamespacedConfigMap({ name: 'a', namespace: 'default' }).then(
      () => (slowSettled = true),
      () => (slowSettled = true), // cut by the server's close in afterEach
    );
    await core.listNamespacedConfigMap({ namespace: 'default' });
    expect(slowSettled, 'the delayed get answered before the undelayed list').to.equal(false);
    // Lifted, a get is answered at all (with the hour's delay it could only time the test out).
    server.faults.latency(0, { verb: 'get' });
    const read = await core.readNamespacedConfigMap({ name: 'a', namespace: 'default' });
    expect(read.metadata?.name).to.equal('a');
    expect(slowSettled, 'the get sent before the lift keeps its delay').to.equal(false);
    void slow;
  });

  it('silenceWatches keeps watches open but sends nothing, not even bookmarks, until unsilenced', async () => {
    const w = watch({ allowWatchBookmarks: 'true' });
    await w.until(1, 'BOOKMARK');
    server.faults.silenceWatches();
    const heard = w.events.length;
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'quiet' } } });
    // Long enough for several 20 ms bookmark ticks; a busy machine only makes it longer.
    await new Promise((r) => setTimeout(r, 100));
    // A marker written past the silence, on the same connection: whatever the server sent before it
    // (the ADDED event, bookmarks) arrives before it, so once it is here, nothing else can still be on its way.
    expect(server.faults.malformedLine('{marker')).to.equal(1);
    await eventually(() => w.badLines.includes('{marker'));
    expect(w.events.slice(heard), 'events heard while silenced').to.deep.equal([]);
    expect(server.openWatches()).to.equal(1);
    server.faults.unsilenceWatches();
    await eventually(() => w.events.some((e) => e.type === 'ADDED' && e.object.metadata?.name === 'quiet'));
  });

  it('malformedLine writes a line that is not JSON into every open watch', async () => {
    const w = watch();
    await w.opened;
    expect(server.faults.malformedLine('{not json')).to.equal(1);
    await eventually(() => w.badLines.length === 1);
    expect(w.badLines).to.deep.equal(['{not json']);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'after' } } });
    await w.until(1);
  });

  it('reset clears every fault', async () => {
    server.faults.failNext(5, { code: 500 });
    server.faults.forbid({ verb: 'get' });
    server.faults.latency(1000);
    server.faults.watch410AsHttpStatus(true);
    server.faults.reset();
    const res = await raw(server, 'GET', cmPath);
    expect(res.status).to.equal(200);
  });

  it('records every request in the request log with verb, resource, namespace, query and status', async () => {
    server.clearRequestLog();
    await core.listNamespacedConfigMap({ namespace: 'default', limit: 5 });
    await failure(core.readNamespacedConfigMap({ name: 'nope', namespace: 'default' }));
    const log = server.requestLog.map(({ verb, resource, namespace, query, status }) => ({ verb, resource, namespace, query, status }));
    expect(log).to.deep.equal([
      { verb: 'list', resource: 'configmaps', namespace: 'default', query: { limit: '5' }, status: 200 },
      { verb: 'get', resource: 'configmaps', namespace: 'default', query: {}, status: 404 },
    ]);
  });

  it('requires the bearer token when started with one (401 otherwise)', async () => {
    const secured = await start({ token: 's3cret' });
    try {
      const res = await raw(secured, 'GET', cmPath);
      expect(res.status).to.equal(401);
      expect(res.json()).to.deep.include({ reason: 'Unauthorized', code: 401 });
      const client = secured.kubeConfig().makeApiClient(CoreV1Api);
      expect((await client.listNamespacedConfigMap({ namespace: 'default' })).items).to.deep.equal([]);
    } finally {
      await secured.close();
    }
  });
});
