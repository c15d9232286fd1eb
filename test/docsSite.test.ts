import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;

describe('the documentation site (npm run docs)', function () {
  this.timeout(180_000);
  let out: string;
  before(async () => {
    out = await mkdtemp(join(tmpdir(), 'rxkube-site-'));
  });
  after(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('builds with TypeDoc, with no warning (a broken link, a public type left out of the reference) and every page of docs/', async () => {
    // typedoc.json treats a warning as an error: any warning fails the build, and so this test, naming it.
    await run(process.execPath, [join(root, 'node_modules/typedoc/bin/typedoc'), '--out', out], { cwd: root, maxBuffer: 16 * 1024 * 1024 }).catch(
      (err: { stdout?: string; stderr?: string }) => {
        throw new Error(`npm run docs failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
      },
    );
    const pages = await readdir(join(out, 'documents'));
    const docs = (await readdir(join(root, 'docs'))).filter((name) => name.endsWith('.md'));
    expect(pages.length, `the site's documents (${pages.join(', ')})`).to.be.at.least(docs.length);
    expect(await readdir(out)).to.include.members(['index.html', 'modules.html']);
  });
});
