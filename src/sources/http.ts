import type { KubeConfig } from '@kubernetes/client-node';
import * as http from 'node:http';
import * as https from 'node:https';
import type { KeepAliveAgent } from './keepAliveAgent.js';

/** A kubeconfig that names no server to talk to: no retry can fix it. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

/**
 * Sends a GET made by `requestTarget` over node:http(s), with the TLS
 * material, credentials and proxy agent that `KubeConfig` gives for its
 * current context, and waits for its response's head: the kubeconfig's
 * auth, without the fetch layers on top. (A watch goes by `directGet`
 * instead, unless the kubeconfig names a proxy.)
 *
 * Why not client-node's own `Watch` or fetch: bench/watch.ts measures the
 * direct request against them; the direct request hands us raw Buffers we
 * split and parse once, where `Watch` goes through node-fetch and readline
 * (a string per chunk and per line) and swallows lines it cannot parse.
 *
 * Credentials are applied per request (`requestTarget`), so a token that
 * an exec plugin refreshes is picked up by the next request.
 */
export function sendGet(url: URL, options: https.RequestOptions, signal: AbortSignal, agent?: KeepAliveAgent): Promise<http.IncomingMessage> {
  agent?.apply(options);
  signal.throwIfAborted();
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const request = send(url, { ...options, signal }, resolve);
    request.on('error', reject);
    request.end();
  });
}

/**
 * Where a GET of `path` goes, and its options as the kubeconfig's current
 * context gives them (TLS material, credentials, the agent: a proxy's, if
 * the cluster names one).
 */
export async function requestTarget(kubeConfig: KubeConfig, path: string, query: URLSearchParams, accept: string): Promise<{ url: URL; options: https.RequestOptions }> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new KubeConfigError('the kubeconfig has no current cluster: set a current context with a cluster');
  const base = new URL(cluster.server);
  const url = new URL(`${base.pathname.replace(/\/$/, '')}${path}`, base);
  url.search = query.toString();
  const options: https.RequestOptions = { method: 'GET', headers: { Accept: accept } };
  await kubeConfig.applyToHTTPSOptions(options);
  return { url, options };
}

/**
 * Reads a whole (error) response body, up to `limit` bytes (then the rest is
 * dropped and `truncated` set); list answers are never read this way, they
 * are parsed as they stream (listPageRequest.ts). `onChunk` is told of each
 * chunk as it arrives, for an idle limit.
 */
async function readBody(response: http.IncomingMessage, limit: number, onChunk?: () => void): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of response) {
    onChunk?.();
    const buffer = chunk as Buffer;
    if (size + buffer.length > limit) {
      truncated = true;
      response.destroy();
      break;
    }
    chunks.push(buffer);
    size += buffer.length;
  }
  return { body: Buffer.concat(chunks, size), truncated };
}

/** What a failed response said: its Status body if it had one, its HTTP status otherwise. */
export interface FailedResponse {
  code: number;
  reason: string;
  message: string;
  retryAfterSeconds: number | undefined;
  /**
   * A 504 that says the version asked for is newer than the server's own
   * (client-go's `isTooLargeResourceVersionError`): the server went back in
   * time, and only a fresh list helps.
   */
  tooLargeResourceVersion?: boolean;
}

/**
 * client-go's test: a 504 Timeout whose Status has a `ResourceVersionTooLarge`
 * cause, or (older servers) says "Too large resource version".
 */
export function isTooLargeResourceVersion(code: number, status: { message?: unknown; details?: unknown }): boolean {
  if (code !== 504) return false;
  const causes = (status.details as { causes?: unknown } | undefined)?.causes;
  if (Array.isArray(causes) && causes.some((c) => (c as { reason?: unknown } | null)?.reason === 'ResourceVersionTooLarge')) return true;
  return typeof status.message === 'string' && status.message.includes('Too large resource version');
}

export async function readFailure(response: http.IncomingMessage, onChunk?: () => void): Promise<FailedResponse> {
  const { body } = await readBody(response, FAILURE_BODY_LIMIT, onChunk).catch(() => ({ body: Buffer.alloc(0) }));
  return failureOf(response.statusCode ?? 0, response.headers['retry-after'], body);
}

/** How much of a failed response's body is read for its message. */
export const FAILURE_BODY_LIMIT = 1024 * 1024;

/** A failed response from its status, its Retry-After header and (up to `FAILURE_BODY_LIMIT` of) its body. */
export function failureOf(code: number, retryAfterHeader: string | undefined, body: Buffer): FailedResponse {
  const retryAfter = Number(retryAfterHeader);
  let reason = http.STATUS_CODES[code] ?? 'Unknown';
  let message = body.toString('utf8').slice(0, 500) || reason;
  let tooLarge = false;
  try {
    const status = JSON.parse(body.toString('utf8')) as { reason?: unknown; message?: unknown; details?: unknown };
    if (typeof status.reason === 'string' && status.reason !== '') reason = status.reason;
    if (typeof status.message === 'string' && status.message !== '') message = status.message;
    tooLarge = isTooLargeResourceVersion(code, status);
  } catch {
    // Not a Status body (a proxy's HTML page, say): the raw text is the message.
  }
  const failure: FailedResponse = { code, reason, message, retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined };
  if (tooLarge) failure.tooLargeResourceVersion = true;
  return failure;
}
