import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';

const root = new URL('../..', import.meta.url).pathname;
const fixture = new URL('../fixtures/browserSuiteChild.ts', import.meta.url).pathname;

// Every child still running when the suite ends (a test failed or timed out before it exited) is killed in after().
const running = new Set<ChildProcess>();

function mocha(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [`${root}node_modules/mocha/bin/mocha.js`, fixture], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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

describe('browser suites without Chromium', () => {
  after(() => {
    for (const proc of running) proc.kill('SIGKILL');
  });

  it('fail, saying how to install it, rather than skip silently', async () => {
    const { code, out } = await mocha({ RXKUBE_CHROMIUM: '/nonexistent/chromium', RXKUBE_SKIP_BROWSER: '' });
    expect(code).to.not.equal(0);
    expect(out).to.contain('chromium not found at /nonexistent/chromium');
    expect(out).to.contain('apt-get update && apt-get install -y chromium');
    expect(out).to.contain('0 passed, 1 failed');
  });

  it('are skipped, and counted as skipped, only when RXKUBE_SKIP_BROWSER=1 asks for it', async () => {
    const { code, out } = await mocha({ RXKUBE_CHROMIUM: '/nonexistent/chromium', RXKUBE_SKIP_BROWSER: '1' });
    expect(code).to.equal(0);
    expect(out.trimEnd().split('\n').at(-1)).to.equal('0 passed, 0 failed, 1 skipped');
  });
});
