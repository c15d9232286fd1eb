import { expect } from 'chai';
import { Subject } from 'rxjs';
import { silentLogger } from 'rxkube';
import { startHealthServer, type HealthServer } from '../../src/sinks/metrics/healthServer.js';
import { liveView, type LiveView } from '../../src/observe/liveView/liveView.js';
import type { TimelineEntry } from '../../src/observe/timeline.js';
import type { KubeObject } from '../../src/types.js';

describe('the live view over HTTP (a synthetic timeline)', () => {
  let server: HealthServer | undefined;
  let view: LiveView | undefined;
  let timeline: Subject<TimelineEntry>;
  const object: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' } };

  beforeEach(async () => {
    timeline = new Subject<TimelineEntry>();
    view = liveView({ timeline, stores: { configmaps: { size: 1, get: (key) => (key === 'ns/a' ? object : undefined) } }, primary: 'configmaps' }, { logger: silentLogger });
    const mounted = view;
    server = await startHealthServer({ port: 0, host: '127.0.0.1', logger: silentLogger, mounts: { [mounted.path]: (req, res) => mounted.handle(req, res) } });
  });
  afterEach(async () => {
    view?.close();
    await server?.close();
  });

  const get = (path: string, init?: RequestInit) => fetch(`${server?.url}/debug/rxkube${path}`, { redirect: 'manual', ...init });

  it('serves its page, script and style itself, with a policy that loads nothing from elsewhere', async () => {
    const page = await get('/');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).to.contain("script-src 'self'");
    const html = await page.text();
    expect(html).to.contain('<script src="app.js" defer></script>');
    expect(html).to.not.match(/https?:\/\//);
    const script = await get('/app.js');
    expect(script.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    expect(await script.text()).to.contain("new EventSource('events')");
    expect((await get('/style.css')).headers.get('content-type')).to.equal('text/css; charset=utf-8');
  });

  it('redirects /debug/rxkube to /debug/rxkube/, so that the page\'s relative links resolve', async () => {
    const res = await get('');
    expect(res.status).to.equal(301);
    expect(res.headers.get('location')).to.equal('/debug/rxkube/');
  });

  it("answers a key's detail as JSON, with its runs and its cached object", async () => {
    timeline.next({ type: 'trigger', at: 1, controller: 'c', key: 'ns/a', cause: { via: 'for', resource: 'configmaps', delta: 'Added', objectKey: 'ns/a' } });
    timeline.next({ type: 'run-start', at: 2, controller: 'c', key: 'ns/a', attempt: 1 });
    const res = await get('/api/key?key=ns%2Fa');
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { summary: { key: string; state: string }; runs: unknown[]; object: KubeObject; cached: boolean };
    expect(body.summary.key).to.equal('ns/a');
    expect(body.runs).to.have.length(1);
    expect(body.cached).to.equal(true);
    expect(body.object).to.deep.equal(object);
  });

  it("redacts a cached Secret's values in a key's detail, also when the store of Secrets holds it without a kind (as list items come)", async () => {
    const secret = { apiVersion: 'v1', metadata: { name: 's', namespace: 'ns' }, data: { password: 'aHVudGVyMg==' } };
    const secrets = liveView({ timeline, stores: { secrets: { size: 1, get: (key) => (key === 'ns/s' ? secret : undefined) } }, primary: 'secrets' }, { logger: silentLogger });
    const mounted = await startHealthServer({ port: 0, host: '127.0.0.1', logger: silentLogger, mounts: { [secrets.path]: (req, res) => secrets.handle(req, res) } });
    try {
      timeline.next({ type: 'trigger', at: 1, controller: 'c', key: 'ns/s', cause: { via: 'for', resource: 'secrets', delta: 'Added', objectKey: 'ns/s' } });
      const body = (await (await fetch(`${mounted.url}/debug/rxkube/api/key?key=ns%2Fs`)).json()) as { object: KubeObject };
      expect(body.object).to.deep.equal({ ...secret, data: { password: '(redacted)' } });
      // The cache's own object is left as it is.
      expect(secret.data.password).to.equal('aHVudGVyMg==');
    } finally {
      secrets.close();
      await mounted.close();
    }
  });

  it('refuses a maxClients or maxBuffered that would bound nothing, naming it', () => {
    expect(() => liveView({ timeline }, { maxClients: 0 })).to.throw(RangeError, 'live view: maxClients must be a positive integer, got 0');
    expect(() => liveView({ timeline }, { maxBuffered: -1 })).to.throw(RangeError, 'live view: maxBuffered must be a positive number of bytes, got -1');
  });

  it('answers 404 naming a key it does not hold, and 400 without a key', async () => {
    const unknown = await get('/api/key?key=ns/nope');
    expect(unknown.status).to.equal(404);
    expect(unknown.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(((await unknown.json()) as { error: string }).error).to.equal(
      'no key "ns/nope" in the live view: it was never triggered since the view started, or it was dropped (the view keeps the 10000 most recently active keys)',
    );
    const missing = await get('/api/key');
    expect(missing.status).to.equal(400);
    expect(((await missing.json()) as { error: string }).error).to.equal('missing query parameter "key": ask for /debug/rxkube/api/key?key=namespace/name');
  });

  it('answers 404 for other paths below it and 405 for other methods than GET and HEAD', async () => {
    const other = await get('/nothing-here');
    expect(other.status).to.equal(404);
    expect(await other.text()).to.contain('404 page not found: /debug/rxkube/nothing-here');
    const post = await get('/api/state', { method: 'POST', body: '{}' });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('GET, HEAD');
    // The health server's own endpoints are still its own.
    expect((await fetch(`${server?.url}/healthz`)).status).to.equal(200);
  });

  it('streams a snapshot then deltas over server-sent events, and takes a page that reconnects from a fresh snapshot', async () => {
    const read = async (expectEvents: number) => {
      const abort = new AbortController();
      const res = await get('/events', { signal: abort.signal });
      expect(res.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = '';
      const events = () => [...text.matchAll(/event: (\w+)\ndata: (.*)\n\n/g)].map((m) => ({ event: m[1], data: JSON.parse(m[2] as string) as { keys: Array<{ key: string; state: string }> } }));
      while (events().length < expectEvents) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += decoder.decode(chunk.value, { stream: true });
        if (events().length === 1 && expectEvents > 1) timeline.next({ type: 'queue', at: 3, controller: 'c', key: 'ns/b', state: 'waiting' });
      }
      abort.abort();
      await reader.cancel().catch(() => {});
      return events();
    };
    const first = await read(2);
    expect(first.map((e) => e.event)).to.deep.equal(['snapshot', 'delta']);
    expect(first[1]?.data.keys).to.deep.include.members([{ key: 'ns/b', state: 'waiting', since: 3, at: 3, attempt: 0, runs: 0, recent: '' }]);
    const again = await read(1);
    expect(again[0]?.event).to.equal('snapshot');
    expect(again[0]?.data.keys.map((k) => k.key)).to.deep.equal(['ns/b']);
  });

  it('stays up when the timeline fails, saying why', async () => {
    timeline.error(new Error('informer pods: gone for good'));
    const state = (await (await get('/api/state')).json()) as { ended: string };
    expect(state.ended).to.equal('the timeline failed: informer pods: gone for good');
  });
});
