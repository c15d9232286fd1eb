import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { documentationPages } from './support/markdown.js';
import { headingAnchors, markdownLinks } from './support/markdownLinks.js';

const root = new URL('..', import.meta.url).pathname;

describe('the documentation\'s links', () => {
  it('finds links outside code and GitHub\'s anchors of headings', () => {
    const text = '# A `b` c\n## Choices\n## Choices\n```\n[not](a link)\n```\nsee [x](y.md#choices-1) and `[z](w)` ![p](q.png)';
    expect(markdownLinks('t.md', text).map((l) => l.target)).to.deep.equal(['y.md#choices-1', 'q.png']);
    expect([...headingAnchors(text)]).to.deep.equal(['a-b-c', 'choices', 'choices-1']);
  });

  it('leads to a file that exists and, after a #, to a heading of it', async () => {
    const broken: string[] = [];
    for (const page of await documentationPages(root)) {
      const text = await readFile(join(root, page), 'utf8');
      for (const link of markdownLinks(page, text)) {
        if (/^[a-z]+:/i.test(link.target)) continue; // another site: not checked here (nothing outside is reachable)
        const [path, anchor] = link.target.split('#') as [string, string | undefined];
        const file = path === '' ? join(root, page) : join(root, dirname(page), path);
        const where = `${page}:${link.line} → ${link.target}`;
        if (!existsSync(file)) {
          broken.push(`${where} (no file ${relative(root, file)})`);
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md') && !headingAnchors(await readFile(file, 'utf8')).has(anchor)) {
          broken.push(`${where} (no heading "#${anchor}" in ${relative(root, file)})`);
        }
      }
    }
    expect(broken, 'broken links').to.deep.equal([]);
  });
});
