import { Registry } from 'prom-client';
import { counterOn, histogramOn } from './metricRegistry.js';

/** client-go's `rest_client_request_duration_seconds` buckets (component-base's restclient metrics). */
export const restClientDurationBuckets: readonly number[] = [0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0];

/** What `restClientMetrics` is told of a request (a `RequestObserver`'s `ObservedRequest`, by shape: metrics import no client). */
export interface RestRequest {
  /** The HTTP method, labelled `method` on the counter and `verb` on the histogram. */
  method: string;
  /** `host:port` of the API server, the `host` label. */
  host: string;
  /** Whether its latency goes in the histogram: false for a watch, whose answer never ends. */
  timed: boolean;
}

/** client-go's `rest_client_*` metrics, fed through `request` (a `RequestObserver`). */
export interface RestClientMetrics {
  /** The registry the metrics are in; expose it on the metrics endpoint. */
  readonly registry: Registry;
  /** A request is sent; call what it returns once with the answer's HTTP status, or 0 when none came. Never throws. */
  request(request: RestRequest): (code: number) => void;
}

/** Where `restClientMetrics` registers, and the clock it times requests with. */
export interface RestClientMetricsOptions {
  /** Default: a new one, never prom-client's global registry. */
  registry?: Registry;
  /** What request latency is measured with, in ms (default `Date.now`; a controller passes its high-resolution clock). */
  clock?: () => number;
}

/**
 * client-go's REST client metrics, as controller-runtime and component-base
 * register them, fed by a `RequestObserver` that the sinks' transport and
 * list-watch sources call for every request they send:
 *
 * | metric | type | labels | when it moves |
 * | --- | --- | --- | --- |
 * | `rest_client_requests_total` | counter | `code` (the HTTP status, `<error>` when no answer came), `method`, `host` | every answer, of every request: reads, writes, lists, watches, Leases, Events, each retry of one |
 * | `rest_client_request_duration_seconds` | histogram (client-go's buckets) | `verb` (the HTTP method, as client-go labels it), `host` | every answer of a request read to its end; not watches, as client-go observes none for them |
 *
 * `host` is the server's `host:port`, as client-go takes it from the
 * client's base URL.
 */
export function restClientMetrics(options: RestClientMetricsOptions = {}): RestClientMetrics {
  const registry = options.registry ?? new Registry();
  const clock = options.clock ?? Date.now;
  const requests = counterOn(registry, 'rest_client_requests_total', 'Number of HTTP requests, partitioned by status code, method, and host.', [
    'code',
    'method',
    'host',
  ]);
  const duration = histogramOn(
    registry,
    'rest_client_request_duration_seconds',
    'Request latency in seconds. Broken down by verb, and host.',
    ['verb', 'host'],
    restClientDurationBuckets,
  );
  return {
    registry,
    request: ({ method, host, timed }) => {
      const start = clock();
      let answered = false;
      return (code) => {
        if (answered) return;
        answered = true;
        requests.inc({ code: code > 0 ? String(code) : '<error>', method, host });
        if (timed) duration.observe({ verb: method, host }, Math.max(0, clock() - start) / 1000);
      };
    },
  };
}
