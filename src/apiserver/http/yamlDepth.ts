import { Lexer, Parser } from 'yaml';

/**
 * How deep a YAML body nests, found before the YAML parser builds it. The
 * parser's composer is recursive: a body nested some 850 levels deep
 * overflows its stack, and near the overflow V8 may abort the whole process
 * (a regular expression compiled with no stack left fails as "out of
 * memory", which no `catch` sees). The lexer and the CST parser of the
 * same package keep their own stacks, so this reads the depth without
 * recursion: first the lexer, which stops as soon as the brackets open and
 * the block indicators on one line (`- - - x`) already say too deep (at most
 * the true depth, so it refuses nothing the tree would allow), then the
 * exact depth of the concrete syntax tree.
 */

/** How deep a YAML body may nest: a third of what the parser's stack allows, beyond any real object. */
export const maxYamlDepth = 300;

const collections = new Set(['block-map', 'block-seq', 'flow-collection']);

/** Whether the YAML text `text` nests collections more than `max` levels deep. */
export function yamlNestsDeeperThan(text: string, max: number): boolean {
  let flow = 0;
  let indicators = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '[' || token === '{') flow += 1;
    else if (token === ']' || token === '}') flow = Math.max(0, flow - 1);
    // Outside brackets each of these on one line opens a collection inside the last (`- - x`); inside, brackets do.
    else if (flow === 0 && (token === '-' || token === '?' || token === ':')) indicators += 1;
    else if (token === '\n' || token === '\r\n') indicators = 0;
    if (flow + indicators > max) return true;
  }
  const pending: [unknown, number][] = [];
  for (const token of new Parser().parse(text)) pending.push([token, 0]);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, outer] = next;
    const depth = collections.has((node as { type?: unknown }).type as string) ? outer + 1 : outer;
    if (depth > max) return true;
    for (const child of Object.values(node as object)) if (child !== null && typeof child === 'object') pending.push([child, depth]);
  }
  return false;
}
