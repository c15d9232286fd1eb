import { expect } from 'chai';
import { chmod, chown, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writePrivateFile } from '../../src/util/privateFile.js';

const modeOf = async (path: string): Promise<string> => ((await stat(path)).mode & 0o777).toString(8);

describe('writePrivateFile: files that hold objects or credentials', () => {
  let dir: string;
  let umask: number;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-private-'));
    umask = process.umask(0o022);
  });
  afterEach(async () => {
    process.umask(umask);
    await rm(dir, { recursive: true, force: true });
  });

  it('creates the file 0600 under a umask of 022', async () => {
    await writePrivateFile(join(dir, 'new'), 'token: x\n');
    expect(await modeOf(join(dir, 'new'))).to.equal('600');
  });

  it('makes an existing 0644 file 0600 and replaces what it held', async () => {
    const path = join(dir, 'kubeconfig');
    await writeFile(path, 'a much longer earlier content than the new one\n');
    await chmod(path, 0o644);
    await writePrivateFile(path, 'new\n');
    expect(await modeOf(path)).to.equal('600');
    expect(await readFile(path, 'utf8')).to.equal('new\n');
  });

  it('refuses a symbolic link, leaving its target as it was', async () => {
    const target = join(dir, 'target');
    await writeFile(target, 'theirs\n');
    await symlink(target, join(dir, 'link'));
    let error: Error | undefined;
    await writePrivateFile(join(dir, 'link'), 'secret\n').catch((err: Error) => (error = err));
    expect(error?.message).to.equal(`${join(dir, 'link')} is a symbolic link; not following it to write what only its owner may read`);
    expect(await readFile(target, 'utf8')).to.equal('theirs\n');
  });

  it('refuses a file another user owns, leaving it as it was', async function () {
    // Only root can give a file to another user; as anyone else, the test has no such file to try.
    if (process.getuid?.() !== 0) this.skip();
    const path = join(dir, 'theirs');
    await writeFile(path, 'theirs\n');
    await chmod(path, 0o666);
    await chown(path, 65534, 65534);
    let error: Error | undefined;
    await writePrivateFile(path, 'secret\n').catch((err: Error) => (error = err));
    expect(error?.message).to.equal(`${path} belongs to another user (uid 65534); not writing over it`);
    expect(await readFile(path, 'utf8')).to.equal('theirs\n');
    expect(await modeOf(path)).to.equal('666');
  });
});
