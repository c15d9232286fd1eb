import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { codeBlocks } from './support/markdown.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;

describe('docs/tutorial.md: the WebApp operator, written out of the page and run', function () {
  this.timeout(180_000);
  let dir: string;
  before(async () => {
    // Inside the repository, so that `rxkube` resolves to this checkout's sources through the tsconfig's paths.
    dir = await mkdtemp(join(root, '.build-test-tutorial-'));
    const blocks = codeBlocks('docs/tutorial.md', await readFile(join(root, 'docs/tutorial.md'), 'utf8')).filter((b) => b.file !== undefined);
    for (const block of blocks) {
      await mkdir(dirname(join(dir, block.file as string)), { recursive: true });
      await writeFile(join(dir, block.file as string), block.code);
    }
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: join(root, 'tsconfig.json'), compilerOptions: { types: ['node'], rootDir: 'src' }, include: ['src'] }),
    );
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('passes its marble and integration tests', async () => {
    const tests = ['src/reconcile.test.ts', 'src/webapp.integration.test.ts'];
    const env = { ...process.env, TSX_TSCONFIG_PATH: join(dir, 'tsconfig.json'), RXKUBE_LOG_LEVEL: 'warn' };
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--test', ...tests], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 }).catch((err: { stdout?: string; stderr?: string }) => {
      throw new Error(`the tutorial's tests failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    });
    expect(stdout).to.match(/^# pass 4$/m);
    expect(stdout).to.match(/^# fail 0$/m);
  });

  it('runs its main program to convergence on the embedded API server', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, TSX_TSCONFIG_PATH: join(dir, 'tsconfig.json'), RXKUBE_LOG_LEVEL: 'warn' };
    delete env.KUBECONFIG; // the embedded API server, never a cluster of the caller's
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: dir, env, timeout: 60_000 });
    expect(stdout).to.contain('0 of 2 replicas available');
    expect(stdout).to.contain('converged: default/shop is Ready, 2 of 2 replicas available');
  });
});
