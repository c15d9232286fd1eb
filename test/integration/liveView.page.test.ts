import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { Subject } from 'rxjs';
import { silentLogger } from 'rxkube';
import { startHealthServer, type HealthServer } from '../../src/sinks/metrics/healthServer.js';
import { liveView, type LiveView } from '../../src/observe/liveView/liveView.js';
import type { TimelineEntry } from '../../src/observe/timeline.js';
import type { KubeObject } from '../../src/types.js';
import { describeBrowser, launchChromium } from '../support/chromium.js';
import { keyRow, textOf, waitForText } from '../support/pageText.js';
import { pinnedClock } from '../support/pinnedClock.js';

/** The page itself, in headless Chromium, fed a synthetic timeline (the real controller's is in liveView.controller.test.ts). */
describeBrowser('the live view page in Chromium (a synthetic timeline)', function () {
  let browser: Browser | undefined;
  let page: Page | undefined;
  let server: HealthServer | undefined;
  let view: LiveView | undefined;
  let timeline: Subject<TimelineEntry>;
  const objects = new Map<string, KubeObject>();
  const pageErrors: string[] = [];
  let clock: ReturnType<typeof pinnedClock>;

  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  const serve = async (port = 0) => {
    const mounted = view as LiveView;
    server = await startHealthServer({ port, host: '127.0.0.1', logger: silentLogger, mounts: { [mounted.path]: (req, res) => mounted.handle(req, res) } });
    return server;
  };

  beforeEach(async () => {
    base = Date.now();
    timeline = new Subject<TimelineEntry>();
    objects.clear();
    clock = pinnedClock();
    view = liveView({ timeline, stores: { widgets: { get size() { return objects.size; }, get: (key) => objects.get(key) } }, primary: 'widgets' }, { logger: silentLogger, scheduler: clock.scheduler });
    await serve();
    page = await (browser as Browser).newPage();
    pageErrors.length = 0;
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });
  afterEach(async () => {
    await page?.close();
    view?.close();
    await server?.close();
    expect(pageErrors, 'errors in the page').to.deep.equal([]);
  });

  // Scheduler time is wall time here unless a test pins it (clock.pin): countdowns are against it, so each test starts its own.
  let base = Date.now();
  const at = (n: number) => base + n;
  const run = (key: string, n: number, result: 'success' | 'error', error?: string): TimelineEntry[] => [
    { type: 'trigger', at: at(n), controller: 'widgets', key, cause: { via: 'for', resource: 'widgets', delta: 'Updated', objectKey: key } },
    { type: 'queue', at: at(n), controller: 'widgets', key, state: 'waiting' },
    // A traced run's start carries its trace ID (docs/tracing.md).
    { type: 'run-start', at: at(n + 1), controller: 'widgets', key, attempt: 1, traceId: `${String(n).padStart(4, '0')}f92f3577b34da6a3ce929d0e0e4736` },
    { type: 'run-end', at: at(n + 3), controller: 'widgets', key, attempt: 1, duration: 2, result, ...(error !== undefined ? { error } : {}) },
    result === 'error'
      ? { type: 'queue', at: at(n + 3), controller: 'widgets', key, state: 'delayed', delay: 3_600_000, reason: 'error' }
      : { type: 'queue', at: at(n + 3), controller: 'widgets', key, state: 'idle' },
  ];
  const open = async () => {
    await (page as Page).goto(`${server?.url}/debug/rxkube/`);
    await waitForText(page as Page, '#status', 'live');
  };

  it('shows the informers and the queue, and of 1000 keys puts only the first 200 matches in the DOM, filtered in the page', async () => {
    timeline.next({ type: 'informer', at: at(0), controller: 'widgets', resource: 'widgets', event: 'Restart' });
    timeline.next({ type: 'informer', at: at(1), controller: 'widgets', resource: 'widgets', event: 'Synced', resourceVersion: '4711' });
    timeline.next({ type: 'informer', at: at(2), controller: 'widgets', resource: 'widgets', event: 'Failure', error: 'watch: 500 Internal Server Error' });
    for (let i = 0; i < 1000; i++) for (const e of run(`ns/w-${String(i).padStart(4, '0')}`, i * 10, 'success')) timeline.next(e);
    timeline.next({ type: 'queue', at: at(20_000), controller: 'widgets', key: 'ns/w-0007', state: 'waiting' });
    await open();
    const p = page as Page;
    expect(await waitForText(p, '#key-count', '1000 keys')).to.equal('1000 keys, showing the first 200');
    expect(await p.locator('#keys tbody tr:not([hidden])').count()).to.equal(200);
    expect(await textOf(p, '#informers tr[data-resource="widgets"]')).to.match(/^widgetsyes\d+47110\s*1watch: 500 Internal Server Error/);
    expect(await textOf(p, '#queue-depth')).to.equal('1');
    expect(await textOf(p, '#queue-running')).to.equal('0');

    await p.fill('#filter', 'w-09');
    expect(await waitForText(p, '#key-count', 'match')).to.equal('1000 keys, 100 match');
    expect(await p.locator('#keys tbody tr:not([hidden])').count()).to.equal(100);
    await p.fill('#filter', 'w-0999');
    await waitForText(p, '#key-count', '1 match');
    expect(await textOf(p, keyRow('ns/w-0999'))).to.contain('done');
    await p.fill('#filter', '');
    await p.selectOption('#state-filter', 'waiting');
    expect(await waitForText(p, '#key-count', 'match')).to.equal('1000 keys, 1 match');
    expect(await textOf(p, `${keyRow('ns/w-0007')} .state`)).to.equal('waiting');
  });

  it('shows a failing key with its error and its next retry, and its detail (runs, history, cached object) on a click', async () => {
    objects.set('ns/bad', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'bad', namespace: 'ns' }, spec: { size: 3 } } as KubeObject);
    // The view's now 25 min 30 s after the run ended, and the page's clock stands still: the countdown is one exact text.
    clock.pin(at(3) + 25 * 60_000 + 30_000);
    await (page as Page).clock.setFixedTime(Date.now());
    await open();
    for (const e of run('ns/bad', 0, 'error', 'quota exceeded for widgets')) timeline.next(e);
    const p = page as Page;
    expect(await waitForText(p, `${keyRow('ns/bad')} .error`, 'quota exceeded')).to.equal('quota exceeded for widgets');
    expect(await textOf(p, `${keyRow('ns/bad')} .state`)).to.equal('delayed');
    expect(await textOf(p, `${keyRow('ns/bad')} .next`)).to.equal('retry in 34 min 30 s');

    await p.click(keyRow('ns/bad'));
    await waitForText(p, '#detail-runs tbody', 'quota exceeded');
    expect(await textOf(p, '#detail-key')).to.equal('ns/bad');
    const runRow = await textOf(p, '#detail-runs tbody tr');
    expect(runRow).to.contain('Updated widgets ns/bad');
    expect(runRow).to.contain('error');
    // The next retry: an hour after the run ended.
    expect(runRow).to.contain(new Date(at(3) + 3_600_000).toISOString().slice(11, 23));
    expect(await textOf(p, '#detail-history')).to.contain('queue    delayed for 1.0 h (error)');
    // The run links to its trace: its trace ID in the run's row and in the history.
    const traceId = (await textOf(p, '#detail-runs tbody tr .trace')).trim();
    expect(traceId).to.match(/^\d{4}f92f3577b34da6a3ce929d0e0e4736$/);
    expect(await textOf(p, '#detail-history')).to.contain(`run      attempt 1 trace ${traceId}`);
    expect(JSON.parse(await textOf(p, '#detail-object'))).to.deep.equal(objects.get('ns/bad'));
  });

  it("says on the page when a key it was asked for is unknown (the server's 404 message)", async () => {
    const p = page as Page;
    await p.goto(`${server?.url}/debug/rxkube/?key=ns/none`);
    expect(await waitForText(p, '#detail-error', 'no key')).to.contain('no key "ns/none" in the live view');
  });

  it('reconnects when the server goes away and comes back, and shows the state from a fresh snapshot', async () => {
    for (const e of run('ns/before', 0, 'success')) timeline.next(e);
    await open();
    const p = page as Page;
    await waitForText(p, '#key-count', '1 keys');
    const port = (server as HealthServer).port;
    await server?.close();
    await waitForText(p, '#status', /reconnecting|disconnected/);
    for (const e of run('ns/after', 100, 'success')) timeline.next(e);
    await serve(port);
    await waitForText(p, '#status', /^live$/);
    await waitForText(p, '#key-count', '2 keys');
    expect(await textOf(p, `${keyRow('ns/after')} .state`)).to.equal('done');
    expect(await p.evaluate(() => (globalThis as unknown as { rxkubeLiveView: { snapshots: number } }).rxkubeLiveView.snapshots)).to.equal(2);
  });
});
