import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * What every `rxkube` subcommand shares: where it writes, how it learns to
 * stop, and the error that makes its exit code 2. Here in core, so that the
 * commands of apiserver/, deploy/ and testing/ use one of each.
 */

/** Where a command writes and how it learns that it should stop. */
export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /**
   * Resolves when the process is asked to stop: with the signal that asked
   * (SIGINT/SIGTERM by default), or nothing when the caller stops it.
   */
  untilStopped: () => Promise<NodeJS.Signals | void>;
}

/**
 * A command that cannot run as given (a bad option, a missing file, a module
 * without what it must export): the exit code is 2 and the message names
 * what is wrong.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * The candidate closest to `typed`, for a "did you mean": one that `typed`
 * begins (`--name` for `--namespace`), else the one fewest edits away
 * (insertions, deletions, substitutions, swaps of neighbours), when those
 * edits are at most 3 and leave more than 40% of the longer word alike, as
 * commander's suggestions do. `undefined` when none is close.
 */
export function closest(typed: string, candidates: readonly string[]): string | undefined {
  if (typed === '') return undefined;
  const prefixed = candidates.filter((c) => c.startsWith(typed));
  if (prefixed.length === 1) return prefixed[0];
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(typed, candidate);
    const longer = Math.max(typed.length, candidate.length);
    if (distance > 3 || (longer - distance) / longer <= 0.4) continue;
    if (best === undefined || distance < best.distance) best = { candidate, distance };
  }
  return best?.candidate;
}

/** Optimal string alignment distance: Levenshtein's edits plus the swap of two neighbouring characters. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => (rows[i] as number[])[j] as number;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, at(i - 2, j - 2) + 1);
      (rows[i] as number[])[j] = d;
    }
  }
  return at(a.length, b.length);
}

/**
 * Node's `parseArgs` for a command's options (pass `strict: true`), its
 * errors turned into `UsageError`s in the command's words: an unknown
 * option named, with the known one closest to it ("unknown option
 * --namspace (did you mean --namespace?)"), where parseArgs would print
 * advice about positionals starting with a dash.
 */
export function parseCommandLine<const T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === undefined || !code.startsWith('ERR_PARSE_ARGS')) throw err;
    if (code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError((err as Error).message);
    const typed = /^Unknown option '([^']*)'/.exec((err as Error).message)?.[1] ?? '';
    // Long options only: a short one is one letter, and every letter is one edit from every other.
    const suggestion = typed.startsWith('--') ? closest(typed, Object.keys(config.options ?? {}).map((name) => `--${name}`)) : undefined;
    throw new UsageError(`unknown option ${typed}${suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`}`);
  }
}
