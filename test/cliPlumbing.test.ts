import { expect } from 'chai';
import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import ts from 'typescript';

const src = new URL('../src', import.meta.url).pathname;

/** The error classes and the `{ out, err }` interfaces a source text declares, by name. */
function plumbingOf(file: string, text: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) && node.heritageClauses?.some((h) => h.types.some((t) => t.expression.getText() === 'Error'))) found.push(`${file}: class ${node.name?.text ?? '(anonymous)'}`);
    if (ts.isInterfaceDeclaration(node)) {
      const members = node.members.map((m) => (m.name !== undefined && ts.isIdentifier(m.name) ? m.name.text : ''));
      if (members.includes('out') && members.includes('err')) found.push(`${file}: interface ${node.name.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS));
  return found;
}

/** The rxkube subcommands share one usage error and one I/O interface (src/util/cli.ts), so each says and exits alike. */
describe('the CLI commands\' plumbing', () => {
  it('is declared once: every command file (src/cli.ts, */cli.ts, *Command.ts) uses src/util/cli.ts\'s UsageError and CliIo', async () => {
    const files = (await readdir(src, { withFileTypes: true, recursive: true }))
      .filter((e) => e.isFile() && (e.name === 'cli.ts' || e.name.endsWith('Command.ts')))
      .map((e) => relative(src, join(e.parentPath, e.name)));
    expect(files).to.include.members(['cli.ts', 'apiserver/cli.ts', 'deploy/manifestsCommand.ts', 'deploy/runCommand.ts', 'testing/replay/replayCommand.ts', 'util/cli.ts']);
    const declared: string[] = [];
    for (const file of files) declared.push(...plumbingOf(file, await readFile(join(src, file), 'utf8')));
    expect(declared).to.deep.equal(['util/cli.ts: interface CliIo', 'util/cli.ts: class UsageError']);
  });
});
