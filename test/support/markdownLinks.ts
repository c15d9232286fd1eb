/** A link of a Markdown document: `[text](target)` or `![alt](target)`, outside code. */
export interface MarkdownLink {
  document: string;
  line: number;
  target: string;
}

/** The inline links of `text`, skipping fenced code blocks and code spans (where brackets are code, not links). */
export function markdownLinks(document: string, text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  let fenced = false;
  text.split('\n').forEach((raw, index) => {
    if (raw.startsWith('```')) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    const line = raw.replace(/`[^`]*`/g, '');
    for (const match of line.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push({ document, line: index + 1, target: match[1] as string });
  });
  return links;
}

/**
 * The anchors GitHub gives the headings of `text`: lower case, punctuation
 * but `-` and `_` dropped, spaces as `-`, a repeated one suffixed `-1`, `-2`.
 */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (heading === null) continue;
    const slug = (heading[1] as string)
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}
