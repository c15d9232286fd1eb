import type { Registry } from 'prom-client';
import { counterOn, gaugeOn, histogramOn } from '../metrics/metricRegistry.js';

/**
 * The webhook server's metrics under controller-runtime's names, so its
 * dashboards read them: requests by webhook (its path) and HTTP code,
 * latency, requests in flight, and handlers that threw (controller-runtime
 * counts recovered panics; a throw is ours).
 */
export interface WebhookMetrics {
  started(webhook: string): () => void;
  answered(webhook: string, code: number): void;
  panicked(): void;
}

export function webhookMetrics(registry: Registry): WebhookMetrics {
  const requests = counterOn(registry, 'controller_runtime_webhook_requests_total', 'Total number of admission requests by HTTP status code.', ['webhook', 'code']);
  const latency = histogramOn(registry, 'controller_runtime_webhook_latency_seconds', 'Histogram of the latency of processing admission requests', ['webhook'], [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
  ]);
  const inFlight = gaugeOn(registry, 'controller_runtime_webhook_requests_in_flight', 'Current number of admission requests being served.', ['webhook']);
  const panics = counterOn(registry, 'controller_runtime_webhook_panics_total', 'Total number of webhook panics', []);
  return {
    started(webhook) {
      inFlight.inc({ webhook });
      const stop = latency.startTimer({ webhook });
      return () => {
        stop();
        inFlight.dec({ webhook });
      };
    },
    answered(webhook, code) {
      requests.inc({ webhook, code: String(code) });
    },
    panicked() {
      panics.inc();
    },
  };
}
