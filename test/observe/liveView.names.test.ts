import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';

const root = new URL('../..', import.meta.url).pathname;

async function exportedNames(dir: string): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.ts') || f.endsWith('.md'))) {
    const text = await readFile(`${dir}${file}`, 'utf8');
    for (const m of text.matchAll(/^export (?:declare )?(?:interface|type|class|function|const|enum) ([A-Za-z_$][\w$]*)/gm)) names.set(m[1] as string, file);
  }
  return names;
}

describe("the live view's internal names", () => {
  it('reuse no name of the public API, so an editor never offers the wrong RunRecord', async () => {
    const publicNames = await exportedNames(`${root}api/`);
    const internal = await exportedNames(`${root}src/observe/liveView/`);
    // It must have read both sides, or the check below could not fail.
    expect(publicNames.has('RunRecord')).to.equal(true);
    expect(internal.has('LiveRunRecord')).to.equal(true);
    // A name the root index re-exports from this very file is the same declaration made public, not a clash.
    const index = await readFile(`${root}src/index.ts`, 'utf8');
    const sameDeclaration = (name: string, file: string): boolean =>
      new RegExp(`export (?:type )?\\{[^}]*\\b${name}\\b[^}]*\\} from '\\./observe/liveView/${file.replace(/\.ts$/, '')}\\.js'`).test(index);
    const clashes = [...internal].filter(([name, file]) => publicNames.has(name) && !sameDeclaration(name, file)).map(([name, file]) => `${name} (${file}, public in ${publicNames.get(name)})`);
    expect(clashes).to.deep.equal([]);
  });
});
