import type { IncomingMessage } from 'node:http';
import type { RequestOptions } from 'node:https';
import { canSendDirectly } from './directGet.js';
import { KubeConfigError, requestTarget, sendGet } from './http.js';
import { describeError } from './listWatchFaults.js';
import type { HttpSettings } from './listWatchTransport.js';

/** How sending a GET of the collection went: its response (any status), or why there is none. */
export type Opened =
  | { kind: 'ok'; response: IncomingMessage }
  /** The request failed before a response came: refused, reset, aborted, credentials that could not be loaded. */
  | { kind: 'error'; reason: string }
  /** The kubeconfig names no server: no retry can fix it. */
  | { kind: 'misconfigured'; message: string };

/**
 * A watch to be sent by `directGet` (not sent yet): where, with which
 * options, and what to tell `http.requests` once its head came (0: none).
 */
export interface DirectWatch {
  kind: 'direct';
  url: URL;
  options: RequestOptions;
  answered: (status: number) => void;
}

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
 * elsewhere, page by page. A watch that `directGet` can send is not sent
 * here: it comes back as `direct`, for the watch's reader to send.
 */
export async function openCollection(http: HttpSettings, query: URLSearchParams, verb: 'list', signal: AbortSignal): Promise<Opened>;
export async function openCollection(http: HttpSettings, query: URLSearchParams, verb: 'watch', signal: AbortSignal): Promise<Opened | DirectWatch>;
export async function openCollection(http: HttpSettings, query: URLSearchParams, verb: 'list' | 'watch', signal: AbortSignal): Promise<Opened | DirectWatch> {
  const host = http.requests === undefined ? undefined : serverHost(http);
  const answered = host === undefined ? undefined : http.requests?.request({ method: 'GET', host, timed: verb === 'list' });
  try {
    const { url, options } = await requestTarget(http.kubeConfig, http.path, query, http.accept?.[verb] ?? 'application/json');
    if (verb === 'watch' && canSendDirectly(options)) return { kind: 'direct', url, options, answered: (status) => answered?.(status) };
    // List pages share kept connections; a watch holds its own for minutes, and is aborted, not read to its end, so its socket is never put back for reuse.
    const response = await sendGet(url, options, signal, verb === 'list' ? http.agent : undefined);
    answered?.(response.statusCode ?? 0);
    return { kind: 'ok', response };
  } catch (err) {
    answered?.(0);
    return failedToOpen(err, verb);
  }
}

/** Why a request got no response, as `Opened` says it. */
export function failedToOpen(err: unknown, verb: 'list' | 'watch'): Extract<Opened, { kind: 'error' | 'misconfigured' }> {
  if (err instanceof KubeConfigError) return { kind: 'misconfigured', message: err.message };
  return { kind: 'error', reason: `${verb} request failed: ${describeError(err)}` };
}

/** An AbortController that also aborts when the source stops; `release` forgets the link. */
export function requestAbort(stop: AbortSignal): { controller: AbortController; release: () => void } {
  const controller = new AbortController();
  const onStop = () => controller.abort();
  stop.addEventListener('abort', onStop, { once: true });
  return { controller, release: () => stop.removeEventListener('abort', onStop) };
}
