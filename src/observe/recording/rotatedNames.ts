import { basename, dirname, join } from 'node:path';

/** The path of part `n` of the recording at `path`: `path` itself for 0 (the newest), else `path.<n>`. */
export function rotatedPath(path: string, n: number): string {
  return n === 0 ? path : `${path}.${n}`;
}

/**
 * The rotated parts of the recording at `path` among `names` (what its
 * folder holds), newest first: `path.1`, `path.2`, … Only a plain number
 * after the dot counts, so `path.1.bak` or `path.old` is no part.
 */
export function rotatedParts(path: string, names: readonly string[]): { n: number; file: string }[] {
  const base = basename(path);
  return names
    .filter((name) => name.startsWith(`${base}.`) && /^\d+$/.test(name.slice(base.length + 1)))
    .map((name) => ({ n: Number(name.slice(base.length + 1)), file: join(dirname(path), name) }))
    .sort((a, b) => a.n - b.n);
}
