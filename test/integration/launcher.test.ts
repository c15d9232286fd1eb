import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);

/**
 * The `rxkube` launcher (bin/rxkube.js) in a tree of its own, whose build
 * and sources each say which of them ran: it must run the build only when
 * that is at least as new as every source, never a stale one.
 */
describe('the rxkube launcher: the build when it is current, the sources otherwise', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-launcher-'));
    await mkdir(join(dir, 'bin'));
    await mkdir(join(dir, 'src', 'nested'), { recursive: true });
    await copyFile(join(root, 'bin/rxkube.js'), join(dir, 'bin/rxkube.js'));
    await writeFile(join(dir, 'package.json'), '{"type":"module"}');
    // A checkout: an installed package ships no tsconfig.json.
    await writeFile(join(dir, 'tsconfig.json'), '{}');
    await writeFile(join(dir, 'src/cli.ts'), "export async function runCli(args: string[]): Promise<number> { console.log('src', args.join(' ')); return 0; }\n");
    await writeFile(join(dir, 'src/nested/other.ts'), 'export const other = 1;\n');
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  const withBuild = async () => {
    await mkdir(join(dir, 'dist'));
    await writeFile(join(dir, 'dist/cli.js'), "export async function runCli(args) { console.log('dist', args.join(' ')); return 0; }\n");
  };
  /** Sets a file's modification time, in seconds since the epoch. */
  const at = (path: string, seconds: number) => utimes(join(dir, path), seconds, seconds);
  const launch = async (withTsx: boolean) => {
    if (withTsx) await symlink(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    return run(process.execPath, [join(dir, 'bin/rxkube.js'), 'a', 'b'], { cwd: dir, timeout: 30_000 });
  };

  it('runs the build of an installed package whatever its file times (npm writes src/ after dist/), and says nothing', async () => {
    await withBuild();
    await rm(join(dir, 'tsconfig.json'));
    await at('dist/cli.js', 500_000_000);
    const { stdout, stderr } = await launch(true);
    expect(stdout).to.equal('dist a b\n');
    expect(stderr).to.equal('');
  });

  it('runs the build of a checkout when no source is newer', async () => {
    await withBuild();
    for (const file of ['dist/cli.js', 'src/cli.ts', 'src/nested/other.ts']) await at(file, 500_000_000);
    expect((await launch(true)).stdout).to.equal('dist a b\n');
  });

  it('runs the sources through tsx when one of them, however deep, is newer than the build', async () => {
    await withBuild();
    await at('dist/cli.js', 500_000_000);
    await at('src/cli.ts', 400_000_000);
    await at('src/nested/other.ts', 600_000_000);
    expect((await launch(true)).stdout).to.equal('src a b\n');
  });

  it('runs the sources through tsx when there is no build (a clean clone)', async () => {
    expect((await launch(true)).stdout).to.equal('src a b\n');
  });

  it('runs a stale build with a warning that says so when tsx is not installed', async () => {
    await withBuild();
    await at('dist/cli.js', 500_000_000);
    const { stdout, stderr } = await launch(false);
    expect(stdout).to.equal('dist a b\n');
    expect(stderr).to.contain('is older than').and.to.contain('npm run build');
  });

  it('fails with a message naming what is missing when there is neither a build nor tsx', async () => {
    const failed = await launch(false).then(
      () => undefined,
      (err: unknown) => err as { code: number; stderr: string },
    );
    expect(failed?.code).to.equal(1);
    expect(failed?.stderr).to.contain('no build at').and.to.contain('tsx is not installed');
  });
});
