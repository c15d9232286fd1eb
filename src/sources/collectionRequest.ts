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

/** `host:port` of the kubeconfig's server, for `http.requests`; undefined when it names none (nothing is sent then). */
function serverHost(http: HttpSettings): string | undefined {
  try {
    return new URL(http.kubeConfig.getCurrentCluster()?.server ?? '').host;
  } catch {
    return undefined;
  }
}

/**
 * Sends a GET of the collection with `query`, and waits for the response's
 * head; `http.requests` is told of it, and of the head's status (0 when
 * none came). A list's latency is taken at its head too: the body is read
 * elsewhere, page by page.
 */
export async function openCollection(
  http: HttpSettings,
  query: URLSearchParams,
  verb: 'list' | 'watch',
  signal: AbortSignal,
): Promise<Opened> {
  const host = http.requests === undefined ? undefined : serverHost(http);
  const answered = host === undefined ? undefined : http.requests?.request({ method: 'GET', host, timed: verb === 'list' });
  // List pages share kept connections; a watch holds its own for minutes, and is aborted, not read to its end, so its socket is never put back for reuse.
  try {
    const response = await getStream(http.kubeConfig, http.path, query, signal, http.accept?.[verb], verb === 'list' ? http.agent : undefined);
    answered?.(response.statusCode ?? 0);
    return { kind: 'ok', response };
  } catch (err) {
    answered?.(0);
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
