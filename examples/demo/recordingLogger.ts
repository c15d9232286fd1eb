import type { Logger } from 'rxkube';

/** A logger that keeps count of warnings and errors and the last of them, for a summary instead of a scrolling log. */
export interface RecordingLogger extends Logger {
  readonly warnings: number;
  readonly errors: number;
  readonly lastError: string | undefined;
}

export function recordingLogger(): RecordingLogger {
  let warnings = 0;
  let errors = 0;
  let lastError: string | undefined;
  const text = (fieldsOrMessage: Record<string, unknown> | string, message?: string) =>
    typeof fieldsOrMessage === 'string' ? fieldsOrMessage : `${message ?? ''} ${JSON.stringify(fieldsOrMessage, (_key, value: unknown) => (value instanceof Error ? value.message : value))}`;
  return {
    debug: () => {},
    info: () => {},
    warn: () => void warnings++,
    error: (fieldsOrMessage, message) => {
      errors++;
      lastError = text(fieldsOrMessage, message);
      if (process.env.DEMO_DEBUG) process.stderr.write(`${lastError}\n`);
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
