import type { LogFn, Logger } from '../../logger.js';

/** `logger`, each line with `fields` besides its own (a line's own fields win). */
export function withFields(logger: Logger, fields: Record<string, unknown>): Logger {
  const bound =
    (log: LogFn): LogFn =>
    (fieldsOrMessage, message) =>
      typeof fieldsOrMessage === 'string' ? log(fields, fieldsOrMessage) : log({ ...fields, ...fieldsOrMessage }, message);
  return { debug: bound(logger.debug.bind(logger)), info: bound(logger.info.bind(logger)), warn: bound(logger.warn.bind(logger)), error: bound(logger.error.bind(logger)) };
}
