import { pino } from 'pino';

/** Fields first, message second, as pino and bunyan take them. */
export type LogFn = (fieldsOrMessage: Record<string, unknown> | string, message?: string) => void;

/**
 * What rxkube logs through. A pino logger fits as it is; so does anything
 * else with these four methods. Every part takes one in its options.
 */
export interface Logger {
  /** Detail for debugging: every reconcile, the stack of repeated failures. */
  debug: LogFn;
  /** What a person running the controller wants to see: start-up, shutdown, leadership. */
  info: LogFn;
  /** Something went wrong and will be retried or worked around. */
  warn: LogFn;
  /** Something went wrong that needs a person. */
  error: LogFn;
}

const ignore: LogFn = () => {};

/** A logger that drops everything, for tests and for callers that log elsewhere. */
export const silentLogger: Logger = Object.freeze({ debug: ignore, info: ignore, warn: ignore, error: ignore });

/**
 * The default: pino writing JSON lines to stderr at `RXKUBE_LOG_LEVEL`
 * (default `info`). A new one per call, so no logger is shared between
 * callers that did not ask for it.
 */
export function createDefaultLogger(bindings: Record<string, unknown> = {}): Logger {
  const level = process.env.RXKUBE_LOG_LEVEL ?? 'info';
  return pino({ level, base: { lib: 'rxkube', ...bindings } }, pino.destination(2));
}

/**
 * The default of each part's `logger` option: `createDefaultLogger(bindings)`,
 * made when the part first logs, so that a part that never logs (most
 * operators in a healthy pipeline) opens no stderr stream of its own.
 */
export function defaultLogger(bindings: Record<string, unknown>): Logger {
  let made: Logger | undefined;
  const logger = (): Logger => (made ??= createDefaultLogger(bindings));
  return {
    debug: (fields, message) => logger().debug(fields, message),
    info: (fields, message) => logger().info(fields, message),
    warn: (fields, message) => logger().warn(fields, message),
    error: (fields, message) => logger().error(fields, message),
  };
}
