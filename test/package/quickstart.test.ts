import { expect } from 'chai';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { codeBlocks } from '../support/markdown.js';
import { cleanClone, root, sh, userEnv } from './packaging.js';

describe('rxkube as a dependency: the README quickstart, from a packed tarball', function () {
  this.timeout(600_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-quickstart-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('packs a working dist/, installs with one copy of rxjs and client-node, compiles strictly, converges on the embedded server and passes its tests', async () => {
    const env = userEnv();

    // 1. `npm pack` of a clean clone builds dist/ (prepack).
    const clone = join(dir, 'rxkube');
    await cleanClone(clone);
    const packed = await sh(`npm pack --pack-destination ${JSON.stringify(dir)} --json`, clone, env);
    const [{ filename, files }] = JSON.parse(packed.slice(packed.indexOf('['), packed.lastIndexOf(']') + 1)) as [{ filename: string; files: { path: string }[] }];
    const paths = files.map((f) => f.path);
    for (const entry of ['dist/index.js', 'dist/index.d.ts', 'dist/testing/index.js', 'dist/testing/index.d.ts', 'dist/apiserver/index.js', 'dist/apiserver/index.d.ts', 'dist/cli.js']) {
      expect(paths, `the tarball holds ${entry}`).to.include(entry);
    }
    const tarball = join(dir, filename);

    // 2. The README's commands, in its order, with the tarball in place of the registry's rxkube.
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    // The user's guide: from its heading (the developers' two commands sit above it) to the developers' section.
    const blocks = codeBlocks('README.md', readme.slice(readme.indexOf('\n## Use rxkube in your project'), readme.indexOf('\n## Working on rxkube itself')));
    const app = join(dir, 'my-controller');
    await mkdir(app);
    const [install] = blocks.filter((b) => b.language === 'sh');
    expect(install?.code, 'the README\'s install commands').to.contain('npm install rxkube ');
    for (const line of (install?.code ?? '').split('\n').filter((l) => l.trim() !== '')) {
      const command = line.replace(/\bnpm install rxkube\b/, `npm install ${JSON.stringify(tarball)}`).replace(/\bnpm install\b/, 'npm install --prefer-offline --no-audit --no-fund');
      await sh(command, app, env);
    }
    const written = blocks.filter((b) => b.file !== undefined);
    expect(written.map((b) => b.file)).to.include.members(['tsconfig.json', 'src/greeter.ts', 'src/main.ts', 'src/greeter.test.ts', 'src/greeter.integration.test.ts']);
    for (const block of written) {
      await mkdir(dirname(join(app, block.file as string)), { recursive: true });
      await writeFile(join(app, block.file as string), block.code);
    }

    // 3. One copy each of what rxkube and the project share: rxkube's own folder holds no second one.
    const nested = await readdir(join(app, 'node_modules/rxkube/node_modules')).catch(() => [] as string[]);
    expect(nested.filter((name) => name === 'rxjs' || name === '@kubernetes')).to.deep.equal([]);
    const copies = await sh('npm ls rxjs @kubernetes/client-node --all --parseable', app, env);
    expect(copies.trim().split('\n').filter((line) => line.startsWith('/')).sort()).to.deep.equal([
      join(app, 'node_modules/@kubernetes/client-node'),
      join(app, 'node_modules/rxjs'),
    ]);
    const tsconfig = JSON.parse(await readFile(join(app, 'tsconfig.json'), 'utf8')) as { compilerOptions: { strict: boolean; skipLibCheck: boolean } };
    expect(tsconfig.compilerOptions).to.include({ strict: true, skipLibCheck: false });

    // 4. What the README says next: build and start (on the embedded server, until it converges), build and test.
    await sh('npm run build', app, env);
    const started = await sh('npm start', app, env, 120_000);
    expect(started).to.contain('converged: default/web says "hello, web"');
    const tested = await sh('npm test', app, env, 120_000);
    expect(tested).to.match(/# pass 2\n/);
    expect(tested).to.match(/# fail 0\n/);
  });
});
