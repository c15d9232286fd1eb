/**
 * Apply bodies are YAML, but client-node and kubectl send JSON, which YAML 1.2 reads the same
 * way; the YAML parser takes some hundred times as long as JSON.parse over it, and was most of
 * the cost of an apply. This reads such a body with JSON.parse, but only where the YAML parser
 * (core schema, unique keys) is known to give the same value:
 * - the body is a JSON object (it starts with `{`), and JSON.parse takes it;
 * - no key repeats in any object (the YAML parser refuses those, JSON.parse keeps the last);
 * - it has no carriage return (YAML reads a lone one as a line break where JSON does not);
 * - it nests at most `maxDepth` levels (past that, the YAML parser's own limits decide).
 * Anything else is left to the YAML parser (undefined), which answers as it always did.
 */
export function parseJsonAsYaml(text: string, maxDepth: number): { value: unknown } | undefined {
  if (text.includes('\r') || text.trimStart()[0] !== '{') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  const keys = keysParsed(value, maxDepth);
  if (keys === undefined || keys !== keysWritten(text)) return undefined;
  return { value };
}

/** The keys of every object in a parsed value; undefined past `maxDepth` levels. */
function keysParsed(value: unknown, maxDepth: number): number | undefined {
  let count = 0;
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    if (depth > maxDepth) return undefined;
    const children = Array.isArray(node) ? node : Object.values(node);
    if (!Array.isArray(node)) count += children.length;
    for (const child of children) if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
  }
  return count;
}

/** The keys written in a JSON text (that JSON.parse took): the strings followed by a colon. */
function keysWritten(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) !== 34) continue;
    let end = i + 1;
    for (let c = text.charCodeAt(end); c !== 34; c = text.charCodeAt(end)) end += c === 92 ? 2 : 1;
    let after = end + 1;
    while (after < text.length && isJsonSpace(text.charCodeAt(after))) after++;
    if (text.charCodeAt(after) === 58) count++;
    i = end;
  }
  return count;
}

function isJsonSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13;
}
