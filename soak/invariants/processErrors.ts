import type { Violations } from '../violations.js';

/**
 * Counts unhandled rejections and uncaught exceptions while installed (a
 * listener keeps an uncaught exception from ending the process, so the soak
 * can report it). Returns the uninstaller.
 */
export function watchProcessErrors(violations: Violations): () => void {
  const describe = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ''}`.slice(0, 2_000) : String(err));
  const onRejection = (reason: unknown) => violations.record('unhandled-rejection', describe(reason));
  const onException = (err: unknown) => violations.record('uncaught-exception', describe(err));
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}
