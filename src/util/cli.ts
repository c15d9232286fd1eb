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
