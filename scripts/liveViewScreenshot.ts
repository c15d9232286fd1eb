/**
 * The screenshot in docs/liveview.md of the live view (docs/liveview.png): runs the
 * main job (`npm start`), opens the live view it prints in headless
 * Chromium (the tests' launchChromium(): Debian's, or RXKUBE_CHROMIUM) while the workload runs, opens
 * the detail of a key that failed at least once (else the busiest one),
 * and saves the page. Run: npm run docs:liveview
 */
import { spawn } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../test/support/chromium.js';

const root = new URL('..', import.meta.url).pathname;
const output = `${root}docs/liveview.png`;
const job = spawn(process.execPath, ['--import', 'tsx', 'examples/main.ts', '--pace', '1500'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
const exited = new Promise<number | null>((resolve) => job.on('exit', (code) => resolve(code)));
let out = '';
job.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));

const until = async (what: string, test: () => boolean, ms = 120_000): Promise<void> => {
  const start = Date.now();
  while (!test()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}; the job said:\n${out}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

// Launched inside the try: when Chromium is missing or fails to start, the job is still stopped.
let browser: Browser | undefined;
try {
  browser = await launchChromium();
  await until('the live view address', () => /live view: (http\S+)/.test(out));
  const url = /live view: (http\S+)/.exec(out)?.[1] as string;
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(url);
  // After the burst: many keys, some of them retried.
  await until('step 10 of the workload', () => out.includes('[10/11]'));
  const failed = page.locator('#keys tbody tr:not([hidden])', { has: page.locator('.runs .r-e') }).first();
  const row = (await failed.count()) > 0 ? failed : page.locator('#keys tbody tr:not([hidden])').first();
  await row.click();
  await page.locator('#detail-runs tbody tr').first().waitFor();
  await page.waitForTimeout(300);
  await page.screenshot({ path: output });
  console.log(`saved ${output} (from ${url})`);
} finally {
  await browser?.close();
  job.kill('SIGINT');
  await exited;
}
