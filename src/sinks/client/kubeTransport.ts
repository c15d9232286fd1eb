import { HttpMethod, IsomorphicFetchHttpLibrary, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { Observable, retry, timer, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';
import type { Logger } from '../../logger.js';
import type { RequestObserver } from '../../types.js';
import { errorFromResponse, KubeApiError, type RequestDescription } from './errors.js';

/**
 * How the sinks' client reaches an API server: one request at a time, as a
 * cold Observable. `kubeClient`'s verbs, conflict retries and Retry-After
 * handling are written once, over this; what carries the request is either
 * HTTP (`httpTransport`, through `@kubernetes/client-node`'s auth and fetch)
 * or, in `rxkube/testing`, the embedded API server's own request handling
 * in process. Leader election's Lease reads and writes go through the same
 * transport as every other write.
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
  /** The HTTP method. */
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path below the cluster's server URL, starting with `/`. */
  path: string;
  /** Query parameters; undefined ones are left out. */
  query?: Record<string, string | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  /** Default `application/json` when there is a body. */
  contentType?: string;
  /** What the request does, for error messages and request records. */
  describe: RequestDescription;
}

/** How requests reach the API server: over HTTP with a kubeconfig's credentials, or in process (the memory client). */
export interface KubeTransport {
  /**
   * Sends one request when subscribed: emits the parsed JSON body
   * (undefined for an empty one) and completes, or errors with a
   * `KubeApiError`. Unsubscribing aborts the request. Never retries.
   */
  send<T>(request: KubeRequest): Observable<T>;
}

const userAgent = 'rxkube';

/**
 * A transport as it is, or the HTTP one for a kubeconfig (told apart by
 * shape: a second copy of client-node defeats `instanceof`), which tells
 * `requests` of each request it sends.
 */
export function transportFor(server: KubeConfig | KubeTransport, requests?: RequestObserver): KubeTransport {
  return typeof (server as Partial<KubeTransport>).send === 'function'
    ? (server as KubeTransport)
    : httpTransport(server as KubeConfig, requests === undefined ? {} : { requests });
}

export interface HttpTransportOptions {
  /**
   * Told of every request sent (for client-go's `rest_client_*` metrics),
   * and of its answer once the body has been read: its HTTP status, or 0
   * when none came. Only here, where the status is known: the transport's
   * callers see a body or a `KubeApiError`, not whether a write was answered
   * 200 or 201.
   */
  requests?: RequestObserver;
}

/** The HTTP transport: the kubeconfig signs each request (tokens, exec plugins, client certificates, CA, proxy) and client-node's fetch sends it. */
export function httpTransport(kubeConfig: KubeConfig, options: HttpTransportOptions = {}): KubeTransport {
  const http = new IsomorphicFetchHttpLibrary();

  const serverUrl = (): string => {
    const cluster = kubeConfig.getCurrentCluster();
    if (cluster === null || typeof cluster.server !== 'string' || cluster.server === '') {
      throw new Error('the kubeconfig has no current cluster with a server URL');
    }
    return cluster.server.replace(/\/+$/, '');
  };

  const sendOnce = async (request: KubeRequest, signal: AbortSignal): Promise<unknown> => {
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
    context.setSignal(signal);
    let status = 0;
    let text: string;
    let retryAfter: string | undefined;
    const answered = options.requests?.request({ method: request.method, host: url.host, timed: true });
    try {
      const response = await http.send(context).toPromise();
      status = response.httpStatusCode;
      retryAfter = response.headers['retry-after'];
      text = await response.body.text();
      answered?.(status);
    } catch (err) {
      // No answer (0, which client-go counts as `<error>`), or one whose body broke off (its status, as client-go counts the head).
      answered?.(status);
      throw new KubeApiError(request.describe, {
        code: 0,
        message: `no response from ${url.origin}: ${err instanceof Error ? err.message : String(err)}`,
        cause: err,
      });
    }
    return parseAnswer(request.describe, status, text, retryAfter);
  };

  return {
    send: <T>(request: KubeRequest) =>
      new Observable<T>((subscriber) => {
        const abort = new AbortController();
        sendOnce(request, abort.signal).then(
          (value) => {
            subscriber.next(value as T);
            subscriber.complete();
          },
          (err: unknown) => {
            // After an unsubscribe the abort's own rejection has nobody to go to.
            if (abort.signal.aborted) return;
            // A kubeconfig that names no server, or credentials that cannot be had (an exec plugin failing): no
            // request left, so no Status, but the same kind of error as every other failure of a request.
            subscriber.error(
              err instanceof KubeApiError
                ? err
                : new KubeApiError(request.describe, { code: 0, message: `cannot send the request: ${err instanceof Error ? err.message : String(err)}`, cause: err }),
            );
          },
        );
        return () => abort.abort();
      }),
  };
}

/** What an answer means: its parsed JSON body for a 2xx, else the `KubeApiError` its Status describes. */
export function parseAnswer(describe: RequestDescription, status: number, text: string, retryAfter: string | undefined): unknown {
  if (status >= 200 && status < 300) {
    if (text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new KubeApiError(describe, {
        code: status,
        reason: 'Unknown',
        message: `the server answered HTTP ${status} with a body that is not JSON: ${text.slice(0, 200)}`,
        cause: err,
      });
    }
  }
  throw errorFromResponse(describe, status, text, retryAfter);
}

/** How a request answered 429 Too Many Requests is resent after its `Retry-After`. */
export interface ThrottleRetryOptions {
  /** The clock of the waits. */
  scheduler: SchedulerLike;
  /** Where each resend is logged. */
  logger: Logger;
  /** How many times one request is resent (default 5). */
  maxThrottleRetries?: number;
  /** The longest `Retry-After` honoured, in seconds; longer ones are cut to it (default 30). */
  maxRetryAfterSeconds?: number;
}

function throttled(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && err.retryAfterSeconds !== undefined && (err.code === 429 || err.code >= 500);
}

/**
 * Resends a request the server answered 429, or a 5xx, with a `Retry-After`,
 * after waiting it out on the scheduler, as client-go does whatever the
 * verb: the server said when to come back. Anything else passes through.
 */
export function retryThrottled<T>(request: KubeRequest, options: ThrottleRetryOptions): MonoTypeOperatorFunction<T> {
  const maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? 30;
  return retry({
    count: options.maxThrottleRetries ?? 5,
    delay: (err: unknown, retries: number) => {
      if (!throttled(err)) throw err;
      const seconds = Math.min(err.retryAfterSeconds ?? 0, maxRetryAfterSeconds);
      // The first wait of a request is news to a person (a server under load); the ones after it, detail.
      const fields = { ...request.describe, code: err.code, retryAfterSeconds: seconds, retry: retries };
      if (retries === 1) options.logger.warn(fields, 'server asked to retry later');
      else options.logger.debug(fields, 'server asked to retry later');
      return timer(seconds * 1000, options.scheduler);
    },
  });
}
