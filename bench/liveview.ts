/**
 * The live view under load: 10,000 keys, then 500 timeline entries a
 * second for 20 s, into a view served over HTTP and watched by a page in
 * headless Chromium (Debian's /usr/bin/chromium).
 *
 * Measured in the page: renders (at most one per animation frame, and the
 * server batches deltas every 250 ms), the time of each render (p50, p95,
 * max) and of handling each message (JSON.parse and applying it), long
 * tasks (> 50 ms, from the browser's own PerformanceObserver), and how
 * long a filter over all keys takes to show. Measured in Node: the fold's
 * cost per entry and the bytes the event stream sends per second.
 * Printed as ratios to the references of the same run: a frame's 16.7 ms,
 * the 250 ms batch interval, and the wall time of the load.
 *
 * Sizes: LIVEVIEW_KEYS (10000), LIVEVIEW_RATE (entries/s, 500),
 * LIVEVIEW_SECONDS (20); LIVEVIEW_ORDER sets the list's order. Run: npm run bench:liveview
 */
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { Subject } from 'rxjs';
import { silentLogger } from 'rxkube';
import { startHealthServer } from '../src/sinks/metrics/healthServer.js';
import { LiveModel } from '../src/observe/liveView/liveModel.js';
import { liveView } from '../src/observe/liveView/liveView.js';
import type { TimelineEntry } from '../src/observe/timeline.js';

const keys = Number(process.env.LIVEVIEW_KEYS ?? 10_000);
const rate = Number(process.env.LIVEVIEW_RATE ?? 500);
const seconds = Number(process.env.LIVEVIEW_SECONDS ?? 20);
/** The list's order during the load (`recent`, `key`, `attempt`; default: the page's own). */
const order = process.env.LIVEVIEW_ORDER;
const chromiumPath = '/usr/bin/chromium';
if (!existsSync(chromiumPath)) {
  console.error(`bench:liveview needs Debian's chromium at ${chromiumPath}: apt-get update && apt-get install -y chromium`);
  process.exit(1);
}

const controller = 'bench';
const keyName = (i: number) => `ns-${i % 50}/object-${String(i).padStart(6, '0')}`;

/** Each key goes round: triggered and waiting, running, then done (or, one in ten, failed and delayed). */
function* lifecycle(now: () => number): Generator<TimelineEntry> {
  const phase = new Uint8Array(keys);
  let n = 0;
  for (;;) {
    const i = Math.floor(Math.random() * keys);
    const key = keyName(i);
    const at = now();
    n++;
    switch (phase[i]) {
      case 0:
        yield { type: 'trigger', at, controller, key, cause: { via: 'for', resource: 'objects', delta: 'Updated', objectKey: key } };
        yield { type: 'queue', at, controller, key, state: 'waiting' };
        break;
      case 1:
        yield { type: 'run-start', at, controller, key, attempt: 1 };
        break;
      default: {
        const failed = n % 10 === 0;
        yield { type: 'run-end', at, controller, key, attempt: 1, duration: 3 + (n % 40), result: failed ? 'error' : 'success', ...(failed ? { error: 'conflict: the object has been modified' } : {}) };
        yield failed ? { type: 'queue', at, controller, key, state: 'delayed', delay: 5000, reason: 'error' } : { type: 'queue', at, controller, key, state: 'idle' };
      }
    }
    phase[i] = ((phase[i] as number) + 1) % 3;
  }
}

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number);
};
const f = (n: number, d = 1) => n.toFixed(d);

// The fold alone, with nobody watching: its cost per entry.
{
  const model = new LiveModel();
  const source = lifecycle(() => 0);
  const entries: TimelineEntry[] = [];
  for (let i = 0; i < 200_000; i++) entries.push(source.next().value as TimelineEntry);
  // The reference: the least any fold by key does, one Map.set per entry, measured on the same entries.
  const bare = new Map<string, TimelineEntry>();
  const r0 = performance.now();
  for (const e of entries) if ('key' in e && e.key !== undefined) bare.set(e.key, e);
  const refMs = performance.now() - r0;
  const t0 = performance.now();
  for (const e of entries) model.apply(e);
  const ms = performance.now() - t0;
  console.log(`fold: ${entries.length} entries in ${f(ms)} ms = ${f((ms * 1000) / entries.length, 2)} µs/entry (${f(entries.length / ms / 1000, 2)} M entries/s; at ${rate}/s that is ${f((rate * ms) / entries.length / 10, 4)} % of a core)`);
  console.log(`fold: ${f(ms / refMs, 1)}× a bare Map.set per entry (${f(refMs, 1)} ms)`);
}

const timeline = new Subject<TimelineEntry>();
const view = liveView({ timeline }, { logger: silentLogger });
const server = await startHealthServer({ port: 0, host: '127.0.0.1', logger: silentLogger, mounts: { [view.path]: (req, res) => view.handle(req, res) } });
const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
try {
  // Every key once, before the page opens: its snapshot holds them all.
  const now = () => Date.now();
  for (let i = 0; i < keys; i++) {
    const key = keyName(i);
    timeline.next({ type: 'trigger', at: now(), controller, key, cause: { via: 'for', resource: 'objects', delta: 'Added', objectKey: key } });
    timeline.next({ type: 'queue', at: now(), controller, key, state: 'idle' });
  }
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.addInitScript(() => {
    type Frame = { duration: number; startTime: number; styleAndLayoutStart: number };
    const w = globalThis as unknown as { longTasks: number[]; styleLayoutMs: number[]; PerformanceObserver: typeof PerformanceObserver };
    w.longTasks = [];
    w.styleLayoutMs = [];
    new w.PerformanceObserver((list) => {
      for (const entry of list.getEntries()) w.longTasks.push(entry.duration);
    }).observe({ type: 'longtask', buffered: true } as unknown as { type: 'mark' });
    // Long animation frames say how much of a slow frame was style and layout rather than script.
    new w.PerformanceObserver((list) => {
      for (const entry of list.getEntries() as unknown as Frame[]) w.styleLayoutMs.push(entry.styleAndLayoutStart > 0 ? entry.startTime + entry.duration - entry.styleAndLayoutStart : 0);
    }).observe({ type: 'long-animation-frame', buffered: true } as unknown as { type: 'mark' });
  });
  const opened = performance.now();
  await page.goto(`${server.url}/debug/rxkube/`);
  await page.waitForFunction((n) => ((globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }).document.getElementById('key-count').textContent ?? '').startsWith(`${n} keys`), keys, { timeout: 60_000 });
  const firstRender = performance.now() - opened;
  if (order !== undefined) await page.selectOption('#order', order);

  type Stats = { renders: number; renderMs: number; maxRenderMs: number; recentRenderMs: number[]; messages: number; messageMs: number };
  const stats = () =>
    page.evaluate(() => {
      const w = globalThis as unknown as { rxkubeLiveView: Stats; longTasks: number[]; styleLayoutMs: number[] };
      return { ...w.rxkubeLiveView, longTasks: [...w.longTasks], styleLayoutMs: [...w.styleLayoutMs] };
    });
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

  // The reference: the same page, open as long, with no events (only its once-a-second clock), on the same machine now.
  const idleStart = await stats();
  const idleT0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const idleWall = performance.now() - idleT0;
  const idleEnd = await stats();
  const idleLong = idleEnd.longTasks.slice(idleStart.longTasks.length);

  const before = await stats();

  // A second reader of the stream, in Node, to count what it sends.
  const abort = new AbortController();
  let bytes = 0;
  const counting = fetch(`${server.url}/debug/rxkube/events`, { signal: abort.signal }).then(async (res) => {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  }).catch(() => {});

  const source = lifecycle(now);
  const tickMs = 10;
  let sent = 0;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.floor(((performance.now() - started) / 1000) * rate) - sent;
      for (let i = 0; i < due; i++) timeline.next(source.next().value as TimelineEntry);
      sent += Math.max(0, due);
      if (performance.now() - started >= seconds * 1000) {
        clearInterval(timer);
        resolve();
      }
    }, tickMs);
  });
  const wall = performance.now() - started;
  const after = await stats();
  abort.abort();
  await counting;

  const renders = after.renders - before.renders;
  const renderMs = after.renderMs - before.renderMs;
  const messages = after.messages - before.messages;
  const messageMs = after.messageMs - before.messageMs;
  const recent = after.recentRenderMs.slice(-Math.min(renders, 1000));
  const longTasks = after.longTasks.slice(before.longTasks.length);
  const longMs = sum(longTasks);
  const styleLayout = sum(after.styleLayoutMs.slice(before.styleLayoutMs.length));

  const filterStart = performance.now();
  await page.fill('#filter', 'object-00099');
  await page.waitForFunction(() => ((globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }).document.getElementById('key-count').textContent ?? '').includes('match'), undefined, { timeout: 30_000 });
  const filterMs = performance.now() - filterStart;

  console.log(`load: ${keys} keys, ${sent} entries in ${f(wall / 1000)} s (${f(sent / (wall / 1000), 0)}/s), list ordered ${await page.inputValue('#order')}`);
  console.log(`page: first render of ${keys} keys ${f(firstRender, 0)} ms after navigation`);
  console.log(`page: ${renders} renders for ${messages} messages (${f(messages / (wall / 1000), 1)} messages/s; the server batches every 250 ms)`);
  console.log(`page: render p50 ${f(pct(recent, 50), 2)} ms, p95 ${f(pct(recent, 95), 2)} ms, max ${f(after.maxRenderMs, 2)} ms, mean ${f(renderMs / Math.max(1, renders), 2)} ms`);
  console.log(`page: message handling (parse + apply) mean ${f(messageMs / Math.max(1, messages), 2)} ms`);
  console.log(`page: long tasks (> 50 ms) during the load: ${longTasks.length}, ${f(longMs, 0)} ms in all, longest ${f(Math.max(0, ...longTasks), 0)} ms`);
  console.log(`page: of the slow frames' time, ${f(styleLayout, 0)} ms was the browser's style and layout, not script`);
  console.log(`page, idle reference (same page, no events, ${f(idleWall / 1000)} s): long tasks ${idleLong.length}, ${f(sum(idleLong), 0)} ms in all`);
  console.log(`page: filter over ${keys} keys shown in ${f(filterMs, 0)} ms (typing to text on screen, through playwright)`);
  console.log(`stream: ${f(bytes / 1024 / (wall / 1000), 1)} KiB/s to one page`);
  console.log('ratios:');
  console.log(`  render p95 / one frame (16.7 ms):           ${f(pct(recent, 95) / 16.7, 3)}`);
  console.log(`  page busy (render + messages) / wall time:  ${f((renderMs + messageMs) / wall, 4)}`);
  console.log(`  long-task time / wall time:                 ${f(longMs / wall, 4)} (idle reference ${f(sum(idleLong) / idleWall, 4)})`);
  console.log(`  mean render / batch interval (250 ms):      ${f(renderMs / Math.max(1, renders) / 250, 4)}`);
} finally {
  await browser.close();
  view.close();
  await server.close();
}
