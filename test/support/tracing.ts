import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** An SDK tracer provider whose spans end up in memory, for a test to read (not registered globally). */
export function inMemoryTracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return {
    provider,
    exporter,
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    runs: (controller: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === `reconcile ${controller}`),
    childrenOf: (run: ReadableSpan): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.parentSpanContext?.spanId === run.spanContext().spanId),
  };
}
