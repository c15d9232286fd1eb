import { expect } from 'chai';
import { spawn } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { describeBrowser, launchChromium } from '../test/support/chromium.js';
import { waitForText } from '../test/support/pageText.js';

const root = new URL('..', import.meta.url).pathname;
const main = new URL('./main.ts', import.meta.url).pathname;

describeBrowser("the main job's live view", function () {
  let browser: Browser | undefined;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  it('is printed at start, and shows the podautoscaler, its informers and its keys being reconciled while the workload runs', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.KUBECONFIG;
    const job = spawn(process.execPath, ['--import', 'tsx', main, '--pace', '300'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => job.on('exit', (code) => resolve(code)));
    let out = '';
    job.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    job.stderr.resume();
    const page = await (browser as Browser).newPage();
    try {
      const start = Date.now();
      while (!/live view: (http\S+)/.test(out)) {
        if (Date.now() - start > 60_000 || job.exitCode !== null) throw new Error(`the main job printed no live view address:\n${out}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const url = /live view: (http:\/\/127\.0\.0\.1:\d+\/debug\/rxkube\/)/.exec(out)?.[1];
      expect(url, 'the printed address').to.be.a('string');
      await page.goto(url as string);
      await waitForText(page, '#status', 'live');
      expect(await waitForText(page, '#controller', 'podautoscaler')).to.equal('podautoscaler');
      await waitForText(page, '#informers tr[data-resource="podautoscalers.autoscaling.rxkube.dev"]', /^podautoscalers\.autoscaling\.rxkube\.devyes/);
      await waitForText(page, '#informers', 'deployments.apps');
      // Keys of the demo's namespace, reconciled to the end.
      await waitForText(page, '#keys tbody', /demo\/\S+done/);
      expect(await waitForText(page, '#key-count', / keys/)).to.match(/^\d+ keys/);
    } finally {
      await page.close();
      if (job.exitCode === null) job.kill('SIGINT');
      await exited;
    }
  });
});
