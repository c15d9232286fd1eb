import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { exponentialFailureRateLimiter, runController, silentLogger, type KubeObject, type RunningController } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { describeBrowser, launchChromium } from '../support/chromium.js';
import { kubeConfigFor } from '../support/kubeConfigFor.js';
import { keyRow, textOf, waitForText } from '../support/pageText.js';
import { pinnedClock } from '../support/pinnedClock.js';
import { waitFor } from '../support/waitFor.js';

const configmaps = { version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };

/** A real controller on the embedded API server, its live view served by runController, read by headless Chromium. */
describeBrowser('the live view of a running controller, in Chromium', function () {
  let browser: Browser | undefined;
  let api: ApiServer;
  let running: RunningController<KubeObject> | undefined;
  let page: Page | undefined;
  const pageErrors: string[] = [];
  /** Reconciles of `default/gated-*` wait here until the test lets them go. */
  const gates = new Map<string, () => void>();

  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    api = await startApiServer({ logger: silentLogger });
    gates.clear();
    pageErrors.length = 0;
  });
  afterEach(async () => {
    await page?.close();
    page = undefined;
    for (const release of gates.values()) release();
    running?.stop();
    await running?.done.catch(() => {});
    running = undefined;
    await api.close();
    expect(pageErrors, 'errors in the page').to.deep.equal([]);
  });

  /** The controller's scheduler: real timers, and a now() a test may pin. */
  let clock: ReturnType<typeof pinnedClock>;
  const start = async () => {
    clock = pinnedClock();
    running = await runController<KubeObject>({
      scheduler: clock.scheduler,
      name: 'lv',
      kubeConfig: api.kubeConfig(),
      for: configmaps,
      concurrency: 1,
      // A failure is retried in an hour: the page has time to show the retry coming.
      rateLimiter: exponentialFailureRateLimiter(3_600_000, 3_600_000),
      health: { port: 0, host: '127.0.0.1' },
      liveView: { port: 0 },
      handleSignals: false,
      logger: silentLogger,
      onOutcome: () => {},
      reconcile: async (key) => {
        if (key === 'default/bad') throw new Error('quota exceeded: 3 of 3 widgets in use');
        if (key.startsWith('default/gated-')) await new Promise<void>((resolve) => gates.set(key, resolve));
      },
    });
    page = await (browser as Browser).newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    // The page's clock stands still: its countdowns are the server's now, not the time since the last message.
    await page.clock.setFixedTime(Date.now());
    await page.goto(running.liveView as string);
    await waitForText(page, '#status', 'live');
    return page;
  };
  const create = (name: string) => api.kubeConfig().makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name }, data: { k: 'v' } } });
  const release = async (key: string) => {
    await waitFor(() => gates.has(key), `the reconcile of ${key} to start`);
    (gates.get(key) as () => void)();
  };

  it('shows a key move from waiting to running to done', async () => {
    const p = await start();
    expect(running?.liveView).to.match(/^http:\/\/127\.0\.0\.1:\d+\/debug\/rxkube\/$/);
    await waitForText(p, '#controller', 'lv');
    await create('gated-a');
    await waitFor(() => gates.has('default/gated-a'), 'the reconcile of gated-a to start');
    // One worker, busy with gated-a: gated-b waits.
    await create('gated-b');
    await p.fill('#filter', 'gated-b');
    await waitForText(p, `${keyRow('default/gated-b')} .state`, /^waiting$/);
    expect(await textOf(p, '#queue-depth')).to.equal('1');
    expect(await textOf(p, '#queue-running')).to.equal('1');
    await release('default/gated-a');
    await waitForText(p, `${keyRow('default/gated-b')} .state`, /^running$/);
    await release('default/gated-b');
    await waitForText(p, `${keyRow('default/gated-b')} .state`, /^done$/);
    expect(await textOf(p, `${keyRow('default/gated-b')} .outcome`)).to.equal('success');
    expect(await waitForText(p, '#queue-running', /^0$/)).to.equal('0');
    // The informer panel: the configmaps store, synced, with both objects (and what the server made on its own).
    const informer = await waitForText(p, '#informers tr[data-resource="configmaps"]', /^configmapsyes\d+/);
    expect(Number(/^configmapsyes(\d+)/.exec(informer)?.[1])).to.be.at.least(2);
  });

  it('shows a failing key with its error and its next retry, and on a click its runs, history and cached object', async () => {
    const p = await start();
    // The controller's now stands still from here: the run fails at t, its retry is due at t + 1 h.
    const t = Date.now();
    clock.pin(t);
    await create('bad');
    await p.fill('#filter', 'bad');
    await waitForText(p, `${keyRow('default/bad')} .state`, /^delayed$/);
    expect(await textOf(p, `${keyRow('default/bad')} .error`)).to.equal('quota exceeded: 3 of 3 widgets in use');
    expect(await textOf(p, `${keyRow('default/bad')} .next`)).to.equal('retry in 1.0 h');
    // 20 minutes later, as a fresh snapshot says: 40 to go.
    clock.pin(t + 20 * 60_000);
    await p.reload();
    await waitForText(p, '#status', 'live');
    await p.fill('#filter', 'bad');
    expect(await waitForText(p, `${keyRow('default/bad')} .next`, /^retry in/)).to.equal('retry in 40 min 0 s');
    expect(await textOf(p, `${keyRow('default/bad')} .outcome`)).to.equal('error');

    await p.click(keyRow('default/bad'));
    const runs = await waitForText(p, '#detail-runs tbody', 'quota exceeded');
    expect(runs).to.contain('Added configmaps default/bad');
    expect(await textOf(p, '#detail-history')).to.match(/delayed for 1\.0 h \(error\)/);
    const cached = JSON.parse(await waitForText(p, '#detail-object', '"bad"')) as KubeObject;
    expect(cached.metadata).to.deep.include({ name: 'bad', namespace: 'default' });
  });

  it("answers 404 naming an unknown key on runController's server, and serves no live view unless asked", async () => {
    await start();
    const base = running?.liveView as string;
    const res = await fetch(`${base}api/key?key=default/never`);
    expect(res.status).to.equal(404);
    expect(((await res.json()) as { error: string }).error).to.contain('no key "default/never" in the live view');

    const plain = await runController<KubeObject>({
      name: 'plain',
      kubeConfig: api.kubeConfig(),
      for: configmaps,
      health: { port: 0, host: '127.0.0.1' },
      handleSignals: false,
      logger: silentLogger,
      reconcile: () => {},
    });
    try {
      expect(plain.liveView).to.equal(undefined);
      // The live view is not the health server's: the running one's health server has no such path either.
      expect((await fetch(`${running?.health?.url}/debug/rxkube/`)).status).to.equal(404);
      expect((await fetch(`${plain.health?.url}/debug/rxkube/`)).status).to.equal(404);
    } finally {
      plain.stop();
      await plain.done;
    }
  });
});

describe('runController with a live view', () => {
  it('serves it on a listener of its own on loopback, also without the health server, and not on the health server', async () => {
    // Nothing listens at the API server's address: the controller retries its list meanwhile, and the view shows it.
    const running = await runController<KubeObject>({ name: 'nohealth', kubeConfig: kubeConfigFor('http://127.0.0.1:1'), for: configmaps, health: false, liveView: { port: 0 }, handleSignals: false, logger: silentLogger, reconcile: () => {} });
    try {
      expect(running.health).to.equal(undefined);
      expect(running.liveView).to.match(/^http:\/\/127\.0\.0\.1:\d+\/debug\/rxkube\/$/);
      const state = await fetch(`${running.liveView}api/state`);
      expect(state.status).to.equal(200);
      expect(((await state.json()) as { controller?: string; informers: unknown[] }).informers).to.be.an('array');
    } finally {
      running.stop();
      await running.done.catch(() => {});
    }
    // Stopped, it listens no more.
    const after = await fetch(`${running.liveView}api/state`).then((r) => r.status, (err: unknown) => (err as Error).message);
    expect(after).to.equal('fetch failed');
  });

  it('rejects a bad live-view listener option before it starts anything', async () => {
    const error = await runController<KubeObject>({ name: 'badtoken', kubeConfig: kubeConfigFor('http://127.0.0.1:1'), for: configmaps, health: false, liveView: { port: 0, token: 'too-short' }, handleSignals: false, logger: silentLogger, reconcile: () => {} }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((error as Error).message).to.equal('live view: token must be a string of at least 16 characters (a random one: openssl rand -hex 32), got 9 characters');
  });
});
