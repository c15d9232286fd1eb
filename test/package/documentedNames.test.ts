import { expect } from 'chai';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { codeBlocks } from '../support/markdown.js';
import { root } from './packaging.js';
import { userProject, type UserProject } from './userProject.js';

/** The documents a user reads. */
async function documents(): Promise<string[]> {
  const docs = (await readdir(join(root, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', 'examples/README.md', ...docs];
}

/** Every name the documents' code blocks import from rxkube's entries, by entry. */
async function documentedImports(): Promise<Map<string, Set<string>>> {
  const byEntry = new Map<string, Set<string>>();
  for (const doc of await documents()) {
    for (const block of codeBlocks(doc, await readFile(join(root, doc), 'utf8'))) {
      for (const [, names = '', entry = ''] of block.code.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'(rxkube(?:\/[a-z]+)?)'/g)) {
        const set = byEntry.get(entry) ?? new Set<string>();
        for (const name of names.split(',').map((n) => n.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0] as string)) if (name !== '') set.add(name);
        byEntry.set(entry, set);
      }
    }
  }
  return byEntry;
}

/** The names issue 36 found in the published .d.ts but not importable, and the CRD helpers every user rewrote. */
const userNeeds = ['isConditionTrue', 'isConditionFalse', 'removeCondition', 'setOwnerReference', 'isControlledBy', 'ObjectTarget', 'ObjectRef', 'installCrd', 'uninstallCrd', 'CrdWaitOptions'];

describe('the names the docs import, in a user\'s project (from the packed tarball)', function () {
  this.timeout(600_000);
  let project: UserProject;
  before(async () => {
    project = await userProject();
  });

  it('compile, strict and with library types checked: every name the docs import from rxkube, rxkube/testing, rxkube/apiserver and rxkube/webhooks, and those a controller needs', async () => {
    const byEntry = await documentedImports();
    expect([...byEntry.keys()]).to.include.members(['rxkube', 'rxkube/testing', 'rxkube/apiserver']);
    const main = byEntry.get('rxkube') ?? new Set<string>();
    for (const name of userNeeds) main.add(name);
    byEntry.set('rxkube', main);
    const dir = join(project.dir, 'documented');
    await mkdir(dir, { recursive: true });
    // `import type` takes values and types alike, and emits nothing: the test is that each name resolves.
    const lines = [...byEntry].map(([entry, names]) => `import type { ${[...names].sort().join(', ')} } from '${entry}';`);
    await writeFile(join(dir, 'names.ts'), `${lines.join('\n')}\n`);
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.json', compilerOptions: { noEmit: true, rootDir: '.' }, include: ['names.ts'] }));
    const compiled = await project.run('npx tsc -p documented/tsconfig.json');
    expect(compiled.stdout + compiled.stderr, lines.join('\n')).to.equal('');
    expect(compiled.code).to.equal(0);
  });

  it('rxkube/package.json resolves (it is in exports), with the version packed', async () => {
    const version = await project.sh('node -e "console.log(require(\'rxkube/package.json\').version)"');
    const ours = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(version.trim()).to.equal(ours.version);
  });
});
