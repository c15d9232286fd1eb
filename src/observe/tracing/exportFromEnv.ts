/** What `exportTracesFromEnv` started: the OpenTelemetry Node SDK, registered globally, until `shutdown`. */
export interface TraceExport {
  /** Flushes the spans not yet exported and stops the SDK; call it before the process exits. Never rejects: a failure is handed to `onError`. */
  shutdown(): Promise<void>;
}

/** Where `exportTracesFromEnv` reads, and what it names the service. */
export interface TraceExportOptions {
  /** The environment to read (default `process.env`); the SDK itself reads `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** `service.name` of the spans, unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` says it. */
  serviceName?: string;
  /** Told of a failure to flush at shutdown (default: ignored; the process is ending). */
  onError?: (error: unknown) => void;
}

/**
 * Whether OpenTelemetry's standard environment asks for traces: an
 * `OTEL_TRACES_EXPORTER` other than `none`, or an OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`);
 * never with `OTEL_SDK_DISABLED=true`.
 */
export function tracesWanted(env: NodeJS.ProcessEnv): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  // The SDK reads `none` beside another exporter as the default one.
  if (exporters.length > 0) return !exporters.every((name) => name === 'none');
  return (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').trim() !== '' || (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? '').trim() !== '';
}

/**
 * For a program's entry (`rxkube run`, the main job), never for a library:
 * when the environment asks for traces (`tracesWanted`), loads the
 * OpenTelemetry Node SDK (`@opentelemetry/sdk-node`, imported only then)
 * and starts it as configured by the standard variables
 * (`OTEL_TRACES_EXPORTER`, `OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_PROTOCOL` with `http/protobuf`, `http/json` or
 * `grpc`, `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, ...), traces only: no
 * metrics, logs or instrumentations of its own. Controllers started after
 * it trace their runs. Resolves to undefined when nothing is asked for.
 */
export async function exportTracesFromEnv(options: TraceExportOptions = {}): Promise<TraceExport | undefined> {
  const env = options.env ?? process.env;
  if (!tracesWanted(env)) return undefined;
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const named = (env.OTEL_SERVICE_NAME ?? '') !== '' || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    ...(options.serviceName !== undefined && !named ? { serviceName: options.serviceName } : {}),
    instrumentations: [],
    logRecordProcessors: [],
  });
  sdk.start();
  let stopped: Promise<void> | undefined;
  return {
    shutdown: () =>
      (stopped ??= sdk.shutdown().catch((err: unknown) => {
        options.onError?.(err);
      })),
  };
}
