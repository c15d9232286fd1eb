import { ProxyTracerProvider, trace, type Tracer, type TracerProvider } from '@opentelemetry/api';
import type { Observable } from 'rxjs';
import type { KubeClient } from '../../sinks/client/kubeClient.js';
import type { Lister } from '../../store/store.js';
import type { TimelineEntry } from '../timeline.js';
import type { ObjectKey } from '../../types.js';
import { RunTracer, type RunSpans } from './runTracer.js';
import { SpanClient } from './spanClient.js';

/** The instrumentation scope of rxkube's spans. */
export const TRACER_NAME = 'rxkube';

/** How a controller traces its runs (docs/tracing.md). */
export interface TracingOptions {
  /**
   * Where the spans go. Default: OpenTelemetry's global provider
   * (`trace.getTracerProvider()`), as read when the controller starts:
   * while no SDK is registered there, the controller makes no span and
   * pays nothing per run, so register the SDK before starting controllers.
   */
  tracerProvider?: TracerProvider;
  /**
   * Carry the run's trace context across controllers: a create, or a
   * `createOrUpdate` that writes, stamps the `rxkube.io/traceparent`
   * annotation (W3C `traceparent`) on the object, and a run triggered by an
   * object that carries it links to the run that wrote it. Off by default.
   */
  annotate?: boolean;
}

/**
 * The tracer of `options`, or undefined when it would make nothing: the
 * global provider with no SDK registered behind it (OpenTelemetry's
 * `ProxyTracerProvider` without a delegate), so that an untraced
 * controller allocates no span, no context and no wrapper per run.
 */
export function tracerOf(options: TracingOptions | undefined): Tracer | undefined {
  const provider = options?.tracerProvider ?? trace.getTracerProvider();
  if (provider instanceof ProxyTracerProvider && provider.getDelegateTracer(TRACER_NAME) === undefined) return undefined;
  return provider.getTracer(TRACER_NAME);
}

/** What a controller's run hands its tracing: its timeline, where the hub takes its `RunSpans`, its stores and clock. */
export interface TraceRunsOptions {
  readonly controller: string;
  readonly tracing: TracingOptions | undefined;
  readonly timeline: Observable<TimelineEntry>;
  readonly attach: (spans: RunSpans | undefined) => void;
  readonly stores: Readonly<Record<string, Lister>>;
  /** The clock spans are timed on (ms since the epoch; the controller's measuring clock, sub-ms in real time). */
  readonly now: () => number;
}

/** A controller's tracing while it runs: each run's client, and the end. */
export interface RunTracing {
  /** The client the run of `key` gets: `client`, each call a child span of the run's. */
  client(key: ObjectKey, client: KubeClient): KubeClient;
  /** Stops reading the timeline; spans under way stay as they are. */
  stop(): void;
}

/**
 * Starts tracing a controller's runs, or returns undefined when no SDK would
 * record them (`tracerOf`): then nothing reads the timeline for tracing, and
 * runs go as if tracing did not exist.
 */
export function traceRuns(options: TraceRunsOptions): RunTracing | undefined {
  const tracer = tracerOf(options.tracing);
  if (tracer === undefined) return undefined;
  const runs = new RunTracer(options.controller, tracer, options.stores, options.now);
  options.attach(runs);
  const subscription = options.timeline.subscribe((entry) => runs.entry(entry));
  const annotate = options.tracing?.annotate === true;
  return {
    client: (key, client) => new SpanClient(client, { tracer, parent: () => runs.spanOf(key), now: options.now, annotate }),
    stop: () => {
      subscription.unsubscribe();
      options.attach(undefined);
    },
  };
}
