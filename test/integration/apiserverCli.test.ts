import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
const bin = join(root, 'bin/rxkube.js');

/** `rxkube` as a user runs it (`npx rxkube …`), in its own process. */
function rxkube(args: string[], children: Set<ChildProcess>, whenOutput?: (out: string, proc: ChildProcess) => void) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
    const proc = spawn(process.execPath, [bin, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(proc);
    let out = '';
    let err = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      whenOutput?.(out, proc);
    });
    proc.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => {
      children.delete(proc);
      resolve({ code, out, err });
    });
  });
}

describe('rxkube apiserver, in its own process', function () {
  this.timeout(90_000);
  const children = new Set<ChildProcess>();
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'rxkube-cli-'))));
  afterEach(async () => {
    for (const proc of children) proc.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('--help prints its usage and exits 0', async () => {
    const { code, out } = await rxkube(['apiserver', '--help'], children);
    expect(code).to.equal(0);
    expect(out).to.match(/^usage: rxkube apiserver \[options\]/);
  });

  it('exits 2 naming an unknown option or a bad value', async () => {
    const [unknown, bad] = await Promise.all([rxkube(['apiserver', '--bogus'], children), rxkube(['apiserver', '--port', '80a'], children)]);
    expect(unknown.code).to.equal(2);
    expect(unknown.err.split('\n')[0]).to.contain("rxkube apiserver: Unknown option '--bogus'");
    expect(bad.code).to.equal(2);
    expect(bad.err.split('\n')[0]).to.equal('rxkube apiserver: --port must be a non-negative integer, got "80a"');
  });

  it('says in one line that the kubeconfig cannot be written where asked, and exits 1', async () => {
    const { code, err } = await rxkube(['apiserver', '--port', '0', '--kubeconfig', join(dir, 'missing', 'kubeconfig')], children);
    expect(code).to.equal(1);
    expect(err.trimEnd().split('\n').filter((l) => !l.startsWith('{'))).to.deep.equal([
      `rxkube: cannot write the kubeconfig to ${join(dir, 'missing', 'kubeconfig')}: ENOENT: no such file or directory, open '${join(dir, 'missing', 'kubeconfig')}'`,
    ]);
  });

  it('on Ctrl-C stops the server, prints "interrupted" and exits 130', async () => {
    let url: string | undefined;
    const { code, err } = await rxkube(['apiserver', '--port', '0', '--kubeconfig', join(dir, 'kubeconfig')], children, (out, proc) => {
      if (url === undefined && out.includes('press Ctrl-C to stop')) {
        url = /listening on (\S+)/.exec(out)?.[1];
        proc.kill('SIGINT');
      }
    });
    expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(err.trimEnd().split('\n').filter((l) => !l.startsWith('{'))).to.deep.equal(['interrupted']);
    expect(code).to.equal(130);
  });
});
