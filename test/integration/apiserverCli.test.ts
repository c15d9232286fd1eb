import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

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
    expect(unknown.err.split('\n')[0]).to.equal('rxkube apiserver: unknown option --bogus');
    expect(bad.code).to.equal(2);
    expect(bad.err.split('\n')[0]).to.equal('rxkube apiserver: --port must be a non-negative integer, got "80a"');
    const cidr = await rxkube(['apiserver', '--service-cluster-ip-range', '10.0.0.0'], children);
    expect([cidr.code, cidr.err.split('\n')[0]]).to.deep.equal([
      2,
      'rxkube apiserver: --service-cluster-ip-range: invalid service CIDR "10.0.0.0": expected an IPv4 CIDR with a prefix from /8 to /30, such as 10.0.0.0/24',
    ]);
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

  it('--feature-gates ShardedListAndWatch=false serves as a server without the gate; an unknown gate exits 2', async () => {
    const selector = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
    const shardInfoOf = (gates: string[]) =>
      new Promise<unknown>((resolve, reject) => {
        rxkube(['apiserver', '--port', '0', '--kubeconfig', join(dir, `kubeconfig-${gates.length}`), ...gates], children, (out, proc) => {
          const url = /listening on (\S+)/.exec(out)?.[1];
          if (url === undefined || !out.includes('press Ctrl-C to stop') || proc.killed) return;
          fetch(`${url}/api/v1/configmaps?${new URLSearchParams({ shardSelector: selector }).toString()}`)
            .then((r) => r.json() as Promise<{ metadata: { shardInfo?: unknown } }>)
            .then((list) => resolve(list.metadata.shardInfo), reject)
            .finally(() => proc.kill('SIGINT'));
        }).catch(reject);
      });
    const [on, off, unknown] = await Promise.all([
      shardInfoOf([]),
      shardInfoOf(['--feature-gates', 'ShardedListAndWatch=false']),
      rxkube(['apiserver', '--feature-gates', 'WatchList=true'], children),
    ]);
    expect(on).to.deep.equal({ selector });
    expect(off).to.equal(undefined);
    expect(unknown.code).to.equal(2);
    expect(unknown.err.split('\n')[0]).to.equal('rxkube apiserver: --feature-gates: unknown feature gate "WatchList" (known: ShardedListAndWatch)');
  });

  it('writes its kubeconfig by default into a new 0700 directory of a random name, the file 0600, and removes both when it stops', async () => {
    const umask = process.umask(0o022);
    let path: string | undefined;
    let modes: string[] = [];
    try {
      const { code } = await rxkube(['apiserver', '--port', '0'], children, (out, proc) => {
        const written = /kubeconfig written to (\S+)/.exec(out)?.[1];
        if (path !== undefined || written === undefined || !out.includes('press Ctrl-C to stop')) return;
        path = written;
        void Promise.all([stat(dirname(written)), stat(written)]).then((s) => {
          modes = s.map((st) => (st.mode & 0o777).toString(8));
          proc.kill('SIGINT');
        });
      });
      expect(code).to.equal(130);
    } finally {
      process.umask(umask);
    }
    expect(path).to.match(new RegExp(`^${tmpdir()}/rxkube-apiserver-[A-Za-z0-9]{6}/kubeconfig$`));
    expect(modes).to.deep.equal(['700', '600']);
    expect(await stat(dirname(path as string)).catch(() => 'gone')).to.equal('gone');
  });

  it('--rbac over an existing 0644 kubeconfig leaves it 0600, with the admin token in it', async () => {
    const path = join(dir, 'kubeconfig');
    await writeFile(path, 'an earlier kubeconfig\n');
    await chmod(path, 0o644);
    let seen: { mode: string; text: string } | undefined;
    await rxkube(['apiserver', '--port', '0', '--rbac', '--kubeconfig', path], children, (out, proc) => {
      if (seen !== undefined || !out.includes('press Ctrl-C to stop')) return;
      seen = { mode: '', text: '' };
      void Promise.all([stat(path), readFile(path, 'utf8')]).then(([st, text]) => {
        seen = { mode: (st.mode & 0o777).toString(8), text };
        proc.kill('SIGINT');
      });
    });
    expect(seen?.mode).to.equal('600');
    expect(seen?.text).to.match(/token: \S+/);
  });
});
