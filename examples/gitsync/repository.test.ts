import { expect } from 'chai';
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { annotatedTag } from 'isomorphic-git';
import { serveGitOverHttp } from './gitHttpServer.js';
import { isManifestFile } from './manifests.js';
import { gitdirOf, readFolder, resolveRevision, RevisionError } from './repository.js';
import { initWorkTree, type WorkTree } from './workTree.js';

describe('examples/gitsync repository reading', () => {
  let dir: string;
  let repo: WorkTree;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gitsync-repo-'));
    repo = await initWorkTree(join(dir, 'repo'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const gitdir = () => join(repo.dir, '.git');

  it('reads the files of a folder at a commit, the subfolders only with recurse, whatever the work tree holds now', async () => {
    const first = await repo.commit({ 'deploy/a.yaml': 'a: 1\n', 'deploy/sub/b.yml': 'b: 1\n', 'deploy/notes.txt': 'x', 'top.json': '{}' }, 'first');
    await repo.commit({ 'deploy/a.yaml': 'a: 2\n' }, 'second');
    fs.writeFileSync(join(repo.dir, 'deploy/a.yaml'), 'uncommitted\n');
    const flat = await readFolder(gitdir(), first, 'deploy', false, isManifestFile);
    expect(flat).to.deep.equal([{ path: 'deploy/a.yaml', text: 'a: 1\n' }]);
    const deep = await readFolder(gitdir(), first, './deploy/', true, isManifestFile);
    expect(deep.map((f) => f.path)).to.deep.equal(['deploy/a.yaml', 'deploy/sub/b.yml']);
    expect((await readFolder(gitdir(), first, '.', false, isManifestFile)).map((f) => f.path)).to.deep.equal(['top.json']);
    const err = await readFolder(gitdir(), first, 'deploy/a.yaml', false, isManifestFile).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RevisionError).with.property('reason', 'PathNotFound');
  });

  it('resolves branches, HEAD, lightweight and annotated tags, full and abbreviated commit ids', async () => {
    const first = await repo.commit({ 'a.yaml': '1' }, 'first');
    await repo.tag('light');
    await annotatedTag({ fs, dir: repo.dir, ref: 'annotated', message: 'release', tagger: { name: 't', email: 't@example.invalid' } });
    const second = await repo.commit({ 'a.yaml': '2' }, 'second');
    expect(await resolveRevision(gitdir(), 'main', false)).to.equal(second);
    expect(await resolveRevision(gitdir(), 'HEAD', false)).to.equal(second);
    expect(await resolveRevision(gitdir(), 'light', false)).to.equal(first);
    expect(await resolveRevision(gitdir(), 'annotated', false)).to.equal(first);
    expect(await resolveRevision(gitdir(), first, false)).to.equal(first);
    expect(await resolveRevision(gitdir(), first.slice(0, 7).toUpperCase(), false)).to.equal(first);
    const err = await resolveRevision(gitdir(), 'nope', false).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RevisionError).with.property('reason', 'RevisionNotFound');
    expect(await resolveRevision(gitdir(), 'deadbee', false).catch((e: unknown) => (e as Error).message)).to.equal('revision "deadbee" is no branch, tag or commit of the repository');
  });

  it('clones a repository named by URL once, and fetches it at every read so that its branch moves on', async () => {
    const server = await serveGitOverHttp(dir);
    try {
      const first = await repo.commit({ 'deploy/a.yaml': 'a: 1\n' }, 'first');
      const url = `${server.url}/repo/.git`;
      const cache = join(dir, 'cache');
      const cloned = await gitdirOf(url, cache);
      expect(cloned.remote).to.equal(true);
      expect(cloned.gitdir.startsWith(cache)).to.equal(true);
      expect(await resolveRevision(cloned.gitdir, 'main', true)).to.equal(first);
      const second = await repo.commit({ 'deploy/a.yaml': 'a: 2\n' }, 'second');
      const fetched = await gitdirOf(url, cache);
      expect(fetched.gitdir).to.equal(cloned.gitdir);
      expect(await resolveRevision(fetched.gitdir, 'main', true)).to.equal(second);
      expect(await readFolder(fetched.gitdir, second, 'deploy', false, isManifestFile)).to.deep.equal([{ path: 'deploy/a.yaml', text: 'a: 2\n' }]);
      expect(await resolveRevision(fetched.gitdir, first.slice(0, 8), true)).to.equal(first);
      const missing = await gitdirOf(`${server.url}/nothing/.git`, cache).catch((e: unknown) => e);
      expect(missing).to.be.instanceOf(RevisionError).with.property('reason', 'RepositoryUnreadable');
      expect(fs.readdirSync(cache), 'a failed clone leaves nothing behind').to.deep.equal([cloned.gitdir.slice(cache.length + 1)]);
    } finally {
      await server.close();
    }
  });

  it('says a local path that is no repository is unreadable', async () => {
    const err = await gitdirOf(join(dir, 'none'), join(dir, 'cache')).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RevisionError).with.property('reason', 'RepositoryUnreadable');
    expect((err as Error).message).to.equal(`${join(dir, 'none')} is no Git repository (no ${join(dir, 'none', 'HEAD')})`);
  });
});
