import { HttpMethod, IsomorphicFetchHttpLibrary, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { silentLogger, type Logger } from '../../logger.js';
import { delay } from '../../util/wait.js';
import { errorFromResponse, KubeApiError, type RequestDescription } from './errors.js';

/**
 * The HTTP layer of the sinks' client: one request to the API server,
 * through `@kubernetes/client-node`'s own machinery. The kubeconfig signs
 * each request (`applySecurityAuthentication`: tokens, exec plugins, client
 * certificates, CA, proxy) and client-node's fetch library sends it, so
 * every kind of cluster client-node can reach, this reaches.
 *
 * Why not `KubernetesObjectApi`: measured against the embedded API server,
 * it does create, read, replace and delete any kind through discovery, but
 * (1) it cannot address a subresource, so no `/status` writes; (2) a JSON
 * patch cannot be sent at all, since it takes the request path from the same
 * argument it sends as the body ("Required spec property kind is not set");
 * (3) objects of built-in kinds go through its model serializer, which turns
 * kube's timestamps into `Date`s that print back with milliseconds; (4) an
 * error is an `ApiException` whose Status is a string inside a message. The
 * generated clients share (3) and (4), and are one class per group. A request
 * layer over the kubeconfig is a few dozen lines and serves every resource,
 * subresource and patch type alike, with the Status parsed.
 */

export interface KubeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path below the cluster's server URL, starting with `/`. */
  path: string;
  query?: Record<string, string | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  /** Default `application/json` when there is a body. */
  contentType?: string;
  signal?: AbortSignal;
  /** What the request does, for error messages. */
  describe: RequestDescription;
}

export interface KubeTransportOptions {
  /** Where retry waits happen (default `asyncScheduler`: real time). */
  scheduler?: SchedulerLike;
  logger?: Logger;
  /**
   * How many times one request is resent when the server answers 429, or a
   * 5xx, with a `Retry-After` (default 5). client-go resends in that case
   * only, whatever the verb: the server said when to come back.
   */
  maxThrottleRetries?: number;
  /** The longest `Retry-After` honoured, in seconds; longer ones are cut to it (default 30). */
  maxRetryAfterSeconds?: number;
}

export interface KubeTransport {
  /** Sends the request; resolves with the parsed JSON body (undefined for an empty one), rejects with a `KubeApiError`. */
  request<T>(request: KubeRequest): Promise<T>;
}

const userAgent = 'rxkube';

function retryable(err: KubeApiError): boolean {
  return err.retryAfterSeconds !== undefined && (err.code === 429 || err.code >= 500);
}

export function kubeTransport(kubeConfig: KubeConfig, options: KubeTransportOptions = {}): KubeTransport {
  const scheduler = options.scheduler ?? asyncScheduler;
  const logger = options.logger ?? silentLogger;
  const maxRetries = options.maxThrottleRetries ?? 5;
  const maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? 30;
  const http = new IsomorphicFetchHttpLibrary();

  const serverUrl = (): string => {
    const cluster = kubeConfig.getCurrentCluster();
    if (cluster === null || typeof cluster.server !== 'string' || cluster.server === '') {
      throw new Error('the kubeconfig has no current cluster with a server URL');
    }
    return cluster.server.replace(/\/+$/, '');
  };

  const sendOnce = async (request: KubeRequest): Promise<unknown> => {
    const url = new URL(serverUrl() + request.path);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    const context = new RequestContext(url.toString(), HttpMethod[request.method]);
    context.setHeaderParam('Accept', 'application/json');
    context.setHeaderParam('User-Agent', userAgent);
    if (request.body !== undefined) {
      context.setHeaderParam('Content-Type', request.contentType ?? 'application/json');
      context.setBody(JSON.stringify(request.body));
    }
    await kubeConfig.applySecurityAuthentication(context);
    if (request.signal !== undefined) context.setSignal(request.signal);
    let status: number;
    let text: string;
    let retryAfter: string | undefined;
    try {
      const response = await http.send(context).toPromise();
      status = response.httpStatusCode;
      retryAfter = response.headers['retry-after'];
      text = await response.body.text();
    } catch (err) {
      if (request.signal?.aborted) throw request.signal.reason;
      throw new KubeApiError(request.describe, {
        code: 0,
        message: `no response from ${url.origin}: ${err instanceof Error ? err.message : String(err)}`,
        cause: err,
      });
    }
    if (status >= 200 && status < 300) {
      if (text === '') return undefined;
      try {
        return JSON.parse(text);
      } catch (err) {
        throw new KubeApiError(request.describe, {
          code: status,
          reason: 'Unknown',
          message: `the server answered HTTP ${status} with a body that is not JSON: ${text.slice(0, 200)}`,
          cause: err,
        });
      }
    }
    throw errorFromResponse(request.describe, status, text, retryAfter);
  };

  return {
    async request<T>(request: KubeRequest): Promise<T> {
      for (let retries = 0; ; retries++) {
        try {
          return (await sendOnce(request)) as T;
        } catch (err) {
          if (!(err instanceof KubeApiError) || !retryable(err) || retries >= maxRetries) throw err;
          const seconds = Math.min(err.retryAfterSeconds ?? 0, maxRetryAfterSeconds);
          logger.debug(
            { ...request.describe, code: err.code, retryAfterSeconds: seconds, retry: retries + 1 },
            'server asked to retry later',
          );
          await delay(seconds * 1000, scheduler, request.signal);
        }
      }
    },
  };
}
