import { config, type Observable } from 'rxjs';
import type { RunHelpers } from 'rxjs/testing';
import { testScheduler } from '../support/objects.js';

/**
 * Runs `body` in virtual time and returns whatever RxJS would have thrown
 * into the event loop meanwhile: what an observer's callback throws goes to
 * `reportUnhandledError`, which throws it from a `setTimeout` (an uncaught
 * exception, and the stream goes on as if nothing happened). In run mode
 * that timeout is on the virtual clock, so it fires before `run` returns,
 * and `config.onUnhandledError` takes the error instead of the process.
 */
export function unhandledErrorsOf(body: (helpers: RunHelpers) => void): unknown[] {
  const unhandled: unknown[] = [];
  const previous = config.onUnhandledError;
  config.onUnhandledError = (err) => unhandled.push(err);
  try {
    testScheduler().run(body);
  } finally {
    config.onUnhandledError = previous;
  }
  return unhandled;
}

/** The error `observable` ends with, once the virtual clock has run; undefined until then or if it does not error. */
export function errorOf(observable: Observable<unknown>): { error?: unknown } {
  const holder: { error?: unknown } = {};
  observable.subscribe({ error: (err: unknown) => (holder.error = err) });
  return holder;
}
