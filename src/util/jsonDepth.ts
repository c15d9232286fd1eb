/**
 * How deep parsed JSON nests, found without recursion: `JSON.parse` reads
 * any depth, but the code that then walks the value (copies, merges,
 * `JSON.stringify` of a message) is recursive and would overflow its stack
 * on a body nested 100,000 levels deep. Kube's decoder stops at 10,000
 * levels; a server here refuses past its own, lower limit before anything
 * recursive sees the value.
 */

/** Whether `value` holds arrays or objects nested more than `max` levels deep (the value itself is level 1). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(node)) if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
  }
  return false;
}
