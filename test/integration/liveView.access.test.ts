import { expect } from 'chai';
import { request } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Browser, Page } from 'playwright-core';
import { Subject } from 'rxjs';
import { silentLogger } from 'rxkube';
import { liveView, type LiveView } from '../../src/observe/liveView/liveView.js';
import { prepareLiveViewServer, startLiveViewServer, type LiveViewServer, type LiveViewServerOptions } from '../../src/observe/liveView/liveViewServer.js';
import type { TimelineEntry } from '../../src/observe/timeline.js';
import { describeBrowser, launchChromium } from '../support/chromium.js';
import { keyRow, waitForText } from '../support/pageText.js';

const token = 'c0ffee-live-view-token-0123456789';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with the headers given, Host included (fetch would not let a test choose the Host), its answer read whole or, for a stream, its head. */
function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        // An event stream never ends: its first message is enough.
        if (res.headers['content-type']?.startsWith('text/event-stream') === true && body.includes('\n\n')) req.destroy();
      });
      const done = () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      res.on('end', done);
      res.on('close', done);
    });
    req.on('error', reject);
    req.end();
  });
}

/** An IPv4 address of this machine that is not loopback, if it has one. */
function outsideAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
}

describe('who the live view answers (its own listener: loopback, Host, token)', () => {
  let view: LiveView;
  let timeline: Subject<TimelineEntry>;
  const servers: LiveViewServer[] = [];
  const serve = async (options: LiveViewServerOptions = {}) => {
    const server = await startLiveViewServer(view, { port: 0, logger: silentLogger, ...options });
    servers.push(server);
    return server;
  };

  beforeEach(() => {
    timeline = new Subject<TimelineEntry>();
    view = liveView({ timeline }, { logger: silentLogger });
    timeline.next({ type: 'queue', at: 1, controller: 'c', key: 'ns/a', state: 'waiting' });
  });
  afterEach(async () => {
    view.close();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('listens on 127.0.0.1 by default, so another address of the machine is refused', async () => {
    const server = await serve();
    expect(server.url).to.equal(`http://127.0.0.1:${server.port}/debug/rxkube/`);
    expect((await get(`${server.url}api/state`)).status).to.equal(200);
    const outside = outsideAddress();
    if (outside === undefined) throw new Error('this machine has no address but loopback: the test cannot show that the view is not on another');
    const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      const socket = connect(server.port, outside, () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.on('error', resolve);
    });
    expect(error?.code).to.equal('ECONNREFUSED');
  });

  it('answers 403 to a Host it does not know, on every path (the page, its script, the event stream, the JSON), as kubectl proxy does', async () => {
    const server = await serve();
    for (const path of ['', 'app.js', 'style.css', 'events', 'api/state', 'api/key?key=ns/a']) {
      const answer = await get(`${server.url}${path}`, { Host: 'evil.example' });
      expect(answer.status, path).to.equal(403);
      expect(answer.body, path).to.equal('403 Forbidden: the live view does not answer for host "evil.example": it answers loopback names and the address it listens on (acceptHosts adds more)\n');
      expect(answer.body, path).to.not.contain('ns/a');
    }
    // A rebinding attacker's name with the view's port, and a loopback name as a subdomain of it, are no better.
    expect((await get(`${server.url}api/state`, { Host: `evil.example:${server.port}` })).status).to.equal(403);
    expect((await get(`${server.url}api/state`, { Host: 'localhost.evil.example' })).status).to.equal(403);
    for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, 'LOCALHOST', `[::1]:${server.port}`, '[::1]']) {
      expect((await get(`${server.url}api/state`, { Host: host })).status, host).to.equal(200);
    }
    const events = await get(`${server.url}events`, { Host: `localhost:${server.port}` });
    expect(events.body).to.match(/^retry: 1000\nevent: snapshot\n/);
  });

  it('answers the names acceptHosts adds (a name, or a RegExp as kubectl proxy takes), and the address it was told to listen on', async () => {
    const server = await serve({ acceptHosts: ['viewer.example.com', /^[a-z]+\.corp\.example$/] });
    expect((await get(`${server.url}api/state`, { Host: 'viewer.example.com' })).status).to.equal(200);
    expect((await get(`${server.url}api/state`, { Host: 'build.corp.example:8081' })).status).to.equal(200);
    expect((await get(`${server.url}api/state`, { Host: 'corp.example' })).status).to.equal(403);
    const outside = outsideAddress();
    if (outside === undefined) throw new Error('this machine has no address but loopback');
    // Listening on another address is the opt-in: that address is then a name it answers.
    const there = await serve({ host: outside });
    expect(there.url).to.equal(`http://${outside}:${there.port}/debug/rxkube/`);
    expect((await get(`${there.url}api/state`)).status).to.equal(200);
    expect((await get(`${there.url}api/state`, { Host: 'evil.example' })).status).to.equal(403);
  });

  it('with a token, answers 401 without it, takes it as a bearer header, and trades it in the address for a cookie', async () => {
    const server = await serve({ token });
    const bare = await get(`${server.url}api/state`);
    expect(bare.status).to.equal(401);
    expect(bare.headers['www-authenticate']).to.equal('Bearer realm="rxkube live view"');
    expect(bare.body).to.equal('401 Unauthorized: the live view needs its token: open /debug/rxkube/?token=<token> once in the browser, or send Authorization: Bearer <token>\n');
    expect((await get(`${server.url}api/state`, { Authorization: `Bearer ${token}x` })).status).to.equal(401);
    expect((await get(`${server.url}api/state`, { Authorization: `Bearer ${token}` })).status).to.equal(200);
    expect((await get(`${server.url}api/state?token=wrong`)).status).to.equal(401);
    // The Host check comes first: a right token on a wrong Host is still 403.
    expect((await get(`${server.url}api/state`, { Host: 'evil.example', Authorization: `Bearer ${token}` })).status).to.equal(403);

    const traded = await get(`${server.url}?key=ns%2Fa&token=${token}`);
    expect(traded.status).to.equal(303);
    expect(traded.headers.location).to.equal('/debug/rxkube/?key=ns%2Fa');
    const cookie = (traded.headers['set-cookie'] as string[])[0] as string;
    expect(cookie).to.match(new RegExp(`^rxkube-live-view-${server.port}=[0-9a-f]{64}; Path=/debug/rxkube; HttpOnly; SameSite=Strict$`));
    // The cookie is not the token itself.
    expect(cookie).to.not.contain(token);
    const pair = cookie.split(';')[0] as string;
    expect((await get(`${server.url}events`, { Cookie: pair })).body).to.match(/event: snapshot/);
    expect((await get(`${server.url}events`, { Cookie: `${pair.slice(0, -1)}0` })).status).to.equal(401);
  });

  it('refuses a short token and a bad acceptHosts entry before it listens, naming them', () => {
    expect(() => prepareLiveViewServer(view, { token: 'short' })).to.throw(RangeError, 'live view: token must be a string of at least 16 characters (a random one: openssl rand -hex 32), got 5 characters');
    expect(() => prepareLiveViewServer(view, { acceptHosts: [42 as unknown as string] })).to.throw(TypeError, 'live view: acceptHosts takes host names and RegExps, got number');
  });
});

describeBrowser('the live view page behind its access checks, in Chromium', function () {
  let browser: Browser | undefined;
  let page: Page | undefined;
  let view: LiveView | undefined;
  let server: LiveViewServer | undefined;
  const pageErrors: string[] = [];

  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await page?.close();
    view?.close();
    await server?.close();
    expect(pageErrors, 'errors in the page').to.deep.equal([]);
    pageErrors.length = 0;
  });

  const open = async (options: LiveViewServerOptions) => {
    const timeline = new Subject<TimelineEntry>();
    view = liveView({ timeline }, { logger: silentLogger });
    server = await startLiveViewServer(view, { port: 0, logger: silentLogger, ...options });
    page = await (browser as Browser).newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    return { timeline, page };
  };

  it('works on loopback, by address and by the name localhost, and shows what comes after it connected', async () => {
    const { timeline, page: p } = await open({});
    await p.goto(`http://localhost:${server?.port}/debug/rxkube/`);
    await waitForText(p, '#status', 'live');
    timeline.next({ type: 'queue', at: Date.now(), controller: 'c', key: 'ns/local', state: 'waiting' });
    await waitForText(p, `${keyRow('ns/local')} .state`, /^waiting$/);
    await p.goto(server?.url as string);
    await waitForText(p, '#status', 'live');
  });

  it('with a token: 401 without it; opened once with ?token=, the page works, its address no longer holds the token, and its script cannot read the cookie', async () => {
    const { timeline, page: p } = await open({ token });
    const refused = await p.goto(server?.url as string);
    expect(refused?.status()).to.equal(401);
    await p.goto(`${server?.url}?token=${token}`);
    expect(p.url()).to.equal(server?.url);
    await waitForText(p, '#status', 'live');
    timeline.next({ type: 'queue', at: Date.now(), controller: 'c', key: 'ns/tokened', state: 'waiting' });
    await waitForText(p, `${keyRow('ns/tokened')} .state`, /^waiting$/);
    // The detail is a fetch of its own: the cookie goes with it too.
    await p.click(keyRow('ns/tokened'));
    await waitForText(p, '#detail-summary', 'last activity');
    expect(await p.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).to.equal('');
    // A reload keeps working: the cookie, not the address, carries it.
    await p.reload();
    await waitForText(p, '#status', 'live');
  });
});
