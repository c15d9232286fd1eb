import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as OTLP/HTTP's JSON encoding carries it, with its attributes made plain (`{ key: value }`). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  events: { name: string; attributes: Record<string, unknown> }[];
  status: { code?: number; message?: string } | undefined;
  /** The resource's `service.name`. */
  service: unknown;
}

interface OtlpKeyValue {
  key: string;
  value: Record<string, unknown>;
}

/** An OTLP AnyValue as a plain value (ints arrive as strings or numbers). */
function plain(value: Record<string, unknown>): unknown {
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  return value;
}

const attributesOf = (list: OtlpKeyValue[] | undefined): Record<string, unknown> => Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));

/**
 * A receiver of OTLP/HTTP traces on loopback (`POST /v1/traces`, JSON
 * only: `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), keeping every span it
 * gets. Answers anything else 415 or 404, so a wrong protocol shows.
 */
export async function otlpReceiver(): Promise<{ endpoint: string; spans: ReceivedSpan[]; requests: string[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      if (req.method !== 'POST' || req.url !== '/v1/traces') return res.writeHead(404).end();
      if (!String(req.headers['content-type']).startsWith('application/json')) return res.writeHead(415).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans: { spans: Record<string, unknown>[] }[] }[];
      };
      for (const rs of body.resourceSpans) {
        const service = attributesOf(rs.resource?.attributes)['service.name'];
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              traceId: s.traceId as string,
              spanId: s.spanId as string,
              parentSpanId: (s.parentSpanId as string | undefined) || undefined,
              name: s.name as string,
              kind: s.kind as number,
              attributes: attributesOf(s.attributes as OtlpKeyValue[]),
              links: ((s.links ?? []) as { traceId: string; spanId: string; attributes?: OtlpKeyValue[] }[]).map((l) => ({ traceId: l.traceId, spanId: l.spanId, attributes: attributesOf(l.attributes) })),
              events: ((s.events ?? []) as { name: string; attributes?: OtlpKeyValue[] }[]).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
              status: s.status as ReceivedSpan['status'],
              service,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The environment that points a process's OpenTelemetry SDK at `endpoint` over OTLP/HTTP JSON, exporting soon after each span. */
export function otlpEnv(endpoint: string): NodeJS.ProcessEnv {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' };
}
