import { expect } from 'chai';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { userProject, type UserProject } from './userProject.js';

describe('rxkube as a dependency: the README quickstart, from a packed tarball', function () {
  this.timeout(600_000);
  let project: UserProject;
  before(async () => {
    project = await userProject();
  });

  it('packs a working dist/, installs with one copy of rxjs and client-node, compiles strictly, converges on the embedded server and passes its tests', async () => {
    const { dir: app, packed } = project;
    // 1. `npm pack` of a clean clone builds dist/ (prepack).
    for (const entry of ['dist/index.js', 'dist/index.d.ts', 'dist/testing/index.js', 'dist/testing/index.d.ts', 'dist/apiserver/index.js', 'dist/apiserver/index.d.ts', 'dist/cli.js']) {
      expect(packed, `the tarball holds ${entry}`).to.include(entry);
    }

    // 2. The README's install commands and files (the harness followed them).
    expect(project.blocks.find((b) => b.language === 'sh')?.code, 'the README\'s install commands').to.contain('npm install rxkube ');
    expect(project.blocks.filter((b) => b.file !== undefined).map((b) => b.file)).to.include.members(['tsconfig.json', 'src/greeter.ts', 'src/main.ts', 'src/greeter.test.ts', 'src/greeter.integration.test.ts']);

    // 3. One copy each of what rxkube and the project share: rxkube's own folder holds no second one.
    const nested = await readdir(join(app, 'node_modules/rxkube/node_modules')).catch(() => [] as string[]);
    expect(nested.filter((name) => name === 'rxjs' || name === '@kubernetes')).to.deep.equal([]);
    const copies = await project.sh('npm ls rxjs @kubernetes/client-node --all --parseable');
    expect(copies.trim().split('\n').filter((line) => line.startsWith('/')).sort()).to.deep.equal([
      join(app, 'node_modules/@kubernetes/client-node'),
      join(app, 'node_modules/rxjs'),
    ]);
    const tsconfig = JSON.parse(await readFile(join(app, 'tsconfig.json'), 'utf8')) as { compilerOptions: { strict: boolean; skipLibCheck: boolean } };
    expect(tsconfig.compilerOptions).to.include({ strict: true, skipLibCheck: false });

    // 4. What the README says next: build and start (on the embedded server, until it converges), build and test.
    const started = await project.sh('npm run build && npm start', 120_000);
    expect(started).to.contain('converged: default/web says "hello, web"');
    // A test deleted from src/ is gone from dist/ at the next build, not run from its old output.
    const stale = join(app, 'src/deleted.test.ts');
    await writeFile(stale, "import { it } from 'node:test';\nit('was deleted', () => {\n  throw new Error('a deleted test ran');\n});\n");
    await project.sh('npm run build');
    await rm(stale);
    const tested = await project.sh('npm run build && npm test', 120_000);
    expect(tested).to.match(/# pass 2\n/);
    expect(tested).to.match(/# fail 0\n/);
  });
});
