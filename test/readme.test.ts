import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { codeBlocks, documentationPages } from './support/markdown.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;

describe('the TypeScript in the README and docs/', function () {
  this.timeout(180_000);
  let documents: string[];
  before(async () => {
    documents = await documentationPages(root);
  });

  it('marks every block that is not a whole module as a fragment, and names the quickstart\'s and the tutorial\'s files', async () => {
    const blocks = (await Promise.all(documents.map(async (doc) => codeBlocks(doc, await readFile(join(root, doc), 'utf8'))))).flat();
    const typescript = blocks.filter((b) => b.language === 'ts' || b.language === 'typescript');
    // The one fragment: the builder's sentence in docs/concepts.md, whose names are the podautoscaler example's.
    expect(typescript.filter((b) => b.fragment).map((b) => b.document)).to.deep.equal(['docs/concepts.md']);
    expect(typescript.filter((b) => b.file !== undefined && b.document === 'README.md').map((b) => b.file)).to.deep.equal([
      'src/greeter.ts',
      'src/main.ts',
      'src/greeter.test.ts',
      'src/greeter.integration.test.ts',
    ]);
    expect(typescript.filter((b) => b.file !== undefined && b.document === 'docs/tutorial.md').length, 'the tutorial\'s files').to.be.at.least(5);
    expect(typescript.filter((b) => !b.fragment).length).to.be.at.least(20);
  });

  it('type-check, every block that is not marked a fragment, under strict TypeScript', async () => {
    // Inside the project, so that the blocks resolve rxkube (through tsconfig's paths) and its dependencies.
    const dir = await mkdtemp(join(root, '.build-test-readme-'));
    try {
      const files: string[] = [];
      for (const doc of documents) {
        const blocks = codeBlocks(doc, await readFile(join(root, doc), 'utf8')).filter((b) => (b.language === 'ts' || b.language === 'typescript') && !b.fragment);
        for (const block of blocks) {
          // The quickstart's and the tutorial's files import one another by name; the other blocks are modules of their own.
          const name = block.file ?? `${doc.replace(/\W/g, '_')}_line_${block.line}.ts`;
          const path = join(dir, doc.replace(/\W/g, '_'), name);
          await mkdir(dirname(path), { recursive: true });
          await writeFile(path, block.code);
          files.push(path);
        }
      }
      await writeFile(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          extends: join(root, 'tsconfig.json'),
          // A snippet may leave a name unused; everything else is as strict as the project's own code (test/package checks the quickstart with skipLibCheck off).
          compilerOptions: { noEmit: true, noUnusedLocals: false, noUnusedParameters: false },
          include: [],
          files,
        }),
      );
      await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { cwd: root }).catch((err: { stdout?: string }) => {
        // Name the README line, not the temporary file.
        throw new Error(`a documentation block does not compile:\n${(err.stdout ?? String(err)).replaceAll(`${dir}/`, '')}`);
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
