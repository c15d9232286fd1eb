import type { Logger } from 'rxkube';

/** A logger that keeps count of warnings and errors and the last of them, for a summary instead of a scrolling log. */
export interface RecordingLogger extends Logger {
  readonly warnings: number;
  readonly errors: number;
  readonly lastError: string | undefined;
}

/** With `also`, every entry goes on to it too (`--log-format`); the counts are kept either way. */
export function recordingLogger(also?: Logger): RecordingLogger {
  let warnings = 0;
  let errors = 0;
  let lastError: string | undefined;
  const text = (fieldsOrMessage: Record<string, unknown> | string, message?: string) =>
    typeof fieldsOrMessage === 'string' ? fieldsOrMessage : `${message ?? ''} ${JSON.stringify(fieldsOrMessage, (_key, value: unknown) => (value instanceof Error ? value.message : value))}`;
  return {
    debug: (fieldsOrMessage, message) => also?.debug(fieldsOrMessage, message),
    info: (fieldsOrMessage, message) => also?.info(fieldsOrMessage, message),
    warn: (fieldsOrMessage, message) => {
      warnings++;
      also?.warn(fieldsOrMessage, message);
    },
    error: (fieldsOrMessage, message) => {
      errors++;
      lastError = text(fieldsOrMessage, message);
      if (also !== undefined) also.error(fieldsOrMessage, message);
      else if (process.env.DEMO_DEBUG) process.stderr.write(`${lastError}\n`);
    },
    get warnings() {
      return warnings;
    },
    get errors() {
      return errors;
    },
    get lastError() {
      return lastError;
    },
  };
}
