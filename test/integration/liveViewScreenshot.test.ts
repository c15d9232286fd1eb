import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';

const root = new URL('../..', import.meta.url).pathname;
const running = new Set<ChildProcess>();

function screenshotScript(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'scripts/liveViewScreenshot.ts'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(proc);
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => {
      running.delete(proc);
      resolve({ code, out });
    });
  });
}

describe('npm run docs:liveview', function () {
  this.timeout(120_000);
  after(() => {
    for (const proc of running) proc.kill('SIGKILL');
  });

  it('uses the Chromium the tests use (RXKUBE_CHROMIUM), and when it is missing fails saying so, after stopping the job it started', async () => {
    const { code, out } = await screenshotScript({ RXKUBE_CHROMIUM: '/nonexistent/chromium' });
    expect(code).to.not.equal(0);
    expect(out).to.contain('chromium not found at /nonexistent/chromium');
    // The script exits only after its finally awaited the job's exit: reaching here means the job is gone.
    expect(out).to.not.contain('saved ');
  });
});
