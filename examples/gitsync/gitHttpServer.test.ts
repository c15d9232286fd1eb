import { expect } from 'chai';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveGitOverHttp } from './gitHttpServer.js';

describe('examples/gitsync serveGitOverHttp', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'git-http-test-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 500 once, with why, when git http-backend cannot be started, and goes on serving', async () => {
    const git = join(dir, 'no-such-git');
    const server = await serveGitOverHttp(dir, { git });
    try {
      for (const init of [{ method: 'GET' }, { method: 'POST', body: Buffer.alloc(1 << 20, 'x'), headers: { 'content-type': 'application/x-git-upload-pack-request' } }]) {
        const res = await fetch(`${server.url}/repo/.git/info/refs?service=git-upload-pack`, init);
        expect(res.status, init.method).to.equal(500);
        expect(await res.text(), init.method).to.equal(`git http-backend: spawn ${git} ENOENT`);
      }
    } finally {
      await server.close();
    }
  });

  it('answers what a backend that exits before reading the request body said, and goes on serving', async () => {
    const git = join(dir, 'refusing-git');
    await writeFile(git, "#!/bin/sh\nprintf 'Status: 403 Forbidden\\r\\nContent-Type: text/plain\\r\\n\\r\\nrefused'\n");
    await chmod(git, 0o755);
    const server = await serveGitOverHttp(dir, { git });
    try {
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${server.url}/repo/.git/git-upload-pack`, { method: 'POST', body: Buffer.alloc(4 << 20, 'x'), headers: { 'content-type': 'application/x-git-upload-pack-request' } });
        expect(res.status).to.equal(403);
        expect(await res.text()).to.equal('refused');
      }
    } finally {
      await server.close();
    }
  });
});
