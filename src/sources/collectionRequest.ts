import type { IncomingMessage } from 'node:http';
import { KubeConfigError, getStream } from './http.js';
import { describeError } from './listWatchFaults.js';
import type { HttpSettings } from './listWatchTransport.js';

/** How sending a GET of the collection went: its response (any status), or why there is none. */
export type Opened =
  | { kind: 'ok'; response: IncomingMessage }
  /** The request failed before a response came: refused, reset, aborted, credentials that could not be loaded. */
  | { kind: 'error'; reason: string }
  /** The kubeconfig names no server: no retry can fix it. */
  | { kind: 'misconfigured'; message: string };

/** Sends a GET of the collection with `query`, and waits for the response's head. */
export async function openCollection(
  http: HttpSettings,
  query: URLSearchParams,
  verb: 'list' | 'watch',
  signal: AbortSignal,
): Promise<Opened> {
  try {
    return { kind: 'ok', response: await getStream(http.kubeConfig, http.path, query, signal, http.accept?.[verb]) };
  } catch (err) {
    if (err instanceof KubeConfigError) return { kind: 'misconfigured', message: err.message };
    return { kind: 'error', reason: `${verb} request failed: ${describeError(err)}` };
  }
}

/** An AbortController that also aborts when the source stops; `release` forgets the link. */
export function requestAbort(stop: AbortSignal): { controller: AbortController; release: () => void } {
  const controller = new AbortController();
  const onStop = () => controller.abort();
  stop.addEventListener('abort', onStop, { once: true });
  return { controller, release: () => stop.removeEventListener('abort', onStop) };
}
