import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** A fenced code block of a Markdown document. */
export interface CodeBlock {
  document: string;
  /** The line of its opening fence (1-based). */
  line: number;
  /** The first word of the info string (`ts`, `sh`, `json`). */
  language: string;
  /** Marked `fragment`: not a whole module, so not compiled. */
  fragment: boolean;
  /** From `file=path`: the file of the quickstart or the tutorial it is. */
  file: string | undefined;
  code: string;
}

/** The fenced (```) code blocks of `text`, with what their info strings say. */
export function codeBlocks(document: string, text: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i] as string);
    if (open === null) continue;
    const words = (open[2] ?? '').trim().split(/\s+/).filter(Boolean);
    const start = i;
    const code: string[] = [];
    for (i++; i < lines.length && !(lines[i] as string).startsWith('```'); i++) code.push(lines[i] as string);
    if (i === lines.length) throw new Error(`${document}:${start + 1}: a code block that never closes`);
    const file = words.find((w) => w.startsWith('file='))?.slice('file='.length);
    blocks.push({ document, line: start + 1, language: open[1] ?? '', fragment: words.includes('fragment'), file, code: `${code.join('\n')}\n` });
  }
  return blocks;
}

/** The pages a reader follows links through, relative to `root`: the front page, the docs site, the examples' and the soak's pages. */
export async function documentationPages(root: string): Promise<string[]> {
  const docs = (await readdir(join(root, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
  return ['README.md', 'examples/README.md', 'soak/README.md', ...docs].filter((page) => existsSync(join(root, page)));
}
