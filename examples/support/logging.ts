import { pino } from 'pino';
import pretty from 'pino-pretty';
import type { Logger } from 'rxkube';
import { UsageError } from './cli.js';
import { flag } from './cluster.js';

/** How the example programs write their logs to stderr: pino's JSON lines, or `pino-pretty`'s one readable line per entry. */
export type LogFormat = 'json' | 'pretty';

/** The log formats, for a `choice` option of the command line. */
export const logFormats: readonly LogFormat[] = ['json', 'pretty'];

/** The log levels, lowest first. */
export const logLevels = ['debug', 'info', 'warn', 'error'] as const;

/**
 * A logger for an example program: `format` (default `json`) to stderr at
 * `level` (default `RXKUBE_LOG_LEVEL`, else `info`). Pretty lines are
 * written synchronously, so that the last ones before an exit are not lost.
 */
export function exampleLogger(bindings: Record<string, unknown>, settings: { format?: LogFormat; level?: string } = {}): Logger {
  const level = settings.level ?? process.env.RXKUBE_LOG_LEVEL ?? 'info';
  const options = { level, base: { lib: 'rxkube', ...bindings } };
  if (settings.format === 'pretty') {
    return pino(options, pretty({ destination: 2, sync: true, singleLine: true, colorize: process.stderr.isTTY === true, ignore: 'pid,hostname,lib' }));
  }
  return pino(options, pino.destination(2));
}

/**
 * The logger an example controller's program asks for on its command line:
 * `--log-format json|pretty` (default json) and `--log-level` (default
 * `RXKUBE_LOG_LEVEL`, else info). A value it does not know stops the program
 * with a message naming it.
 */
export function loggerFromArgs(argv: readonly string[], bindings: Record<string, unknown>): Logger {
  const format = flag(argv, 'log-format');
  const level = flag(argv, 'log-level');
  if (format !== undefined && !(logFormats as readonly string[]).includes(format)) {
    throw new UsageError(`--log-format must be one of ${logFormats.join(', ')}, got ${JSON.stringify(format)}`);
  }
  if (level !== undefined && !(logLevels as readonly string[]).includes(level)) {
    throw new UsageError(`--log-level must be one of ${logLevels.join(', ')}, got ${JSON.stringify(level)}`);
  }
  return exampleLogger(bindings, { ...(format !== undefined ? { format: format as LogFormat } : {}), ...(level !== undefined ? { level } : {}) });
}
