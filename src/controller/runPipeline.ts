import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { Observable } from 'rxjs';
import { createDefaultLogger, type Logger } from '../logger.js';
import type { ReconcileOutcome } from '../operators/reconcileByKey.js';
import { startHealthServer, type HealthServer } from '../sinks/metrics/healthServer.js';
import { withProcessMetrics } from '../sinks/metrics/processMetrics.js';

/** What a hand-composed pipeline is given when it starts: the process's cluster, logs, metrics and stop signal. */
export interface PipelineContext {
  /** The pipeline's name: its logs, metrics and manifests carry it. */
  readonly name: string;
  /** The cluster: the pod's ServiceAccount under `rxkube run`. */
  readonly kubeConfig: KubeConfig;
  /** Where the pipeline logs (pino JSON lines on stderr unless the runner was given another). */
  readonly logger: Logger;
  /** The registry `/metrics` serves: hand it to `controllerMetrics`, `sourceMetrics` and `restClientMetrics`. */
  readonly registry: Registry;
  /**
   * Aborted when the pipeline should stop starting work: at the first
   * SIGTERM or SIGINT, or `stop()`. Hand it to `listWatch`'s `signal` and,
   * through `fromEvent(signal, 'abort')`, to `reconcileByKey`'s `stop`: the
   * pipeline then completes once its runs in flight have ended, which is a
   * graceful shutdown. What has not completed after the grace period is
   * unsubscribed.
   */
  readonly signal: AbortSignal;
  /** Says what `/readyz` answers from now on (default: ready while running): the stores synced, a Lease held. */
  ready(check: () => boolean): void;
}

/** A controller composed by hand from rxkube's parts: a function of its context to the Observable of its outcomes. */
export type Pipeline = (context: PipelineContext) => Observable<ReconcileOutcome>;

/** What `runPipeline()` takes. */
export interface RunPipelineOptions {
  /** Its name, in logs and metrics. */
  name: string;
  /** The cluster the pipeline is given. */
  kubeConfig: KubeConfig;
  /** The pipeline: called once, with its context; its outcomes are counted and logged, its completion is the end of the run. */
  pipeline: Pipeline;
  /** Where it logs (default: pino JSON lines on stderr). */
  logger?: Logger;
  /** Where its metrics go (default: a new Registry with the process's metrics, never the global one). */
  registry?: Registry;
  /** The health server (`/metrics`, `/healthz`, `/readyz`): where to listen (default port 8080 on all interfaces, as `runController`), or `false`. */
  health?: { port?: number; host?: string } | false;
  /** How long the pipeline may take to complete after the stop signal before it is unsubscribed (default 30 s). */
  gracePeriod?: number;
  /** Shut down gracefully on SIGTERM and SIGINT (default true); a second signal unsubscribes at once. */
  handleSignals?: boolean;
}

/** A pipeline that `runPipeline()` started. */
export interface RunningPipeline {
  /** The health server, when one was asked for. */
  readonly health: HealthServer | undefined;
  /** Starts a graceful stop, as SIGTERM does; called again, unsubscribes at once. */
  stop(): void;
  /** Settles once the pipeline has completed (or been unsubscribed) and the health server is closed; rejects with its error. */
  readonly done: Promise<void>;
}

/**
 * Runs a hand-composed pipeline the way `runController()` runs a builder
 * controller: structured logs, a health server with `/metrics`, `/healthz`
 * and `/readyz`, and a graceful stop on SIGTERM or SIGINT (the context's
 * `signal` aborts; the pipeline has `gracePeriod` to complete; a second
 * signal unsubscribes it at once). A failed run is logged by the
 * `reconcileByKey` inside the pipeline; an error of the pipeline itself
 * ends it, and `done` rejects with it. It never exits the process.
 */
export async function runPipeline(options: RunPipelineOptions): Promise<RunningPipeline> {
  const { name } = options;
  const logger = options.logger ?? createDefaultLogger({ controller: name });
  const registry = options.registry ?? withProcessMetrics(new Registry());
  const stopping = new AbortController();
  let readiness: () => boolean = () => true;
  const context: PipelineContext = { name, kubeConfig: options.kubeConfig, logger, registry, signal: stopping.signal, ready: (check) => (readiness = check) };
  let health: HealthServer | undefined;
  if (options.health !== false) {
    health = await startHealthServer({ ...options.health, registry, logger, checks: { healthz: () => true, readyz: { running: () => !stopping.signal.aborted && readiness() } } });
  }

  let unsubscribe: () => void = () => {};
  let graceTimer: NodeJS.Timeout | undefined;
  const stop = (): void => {
    if (stopping.signal.aborted) {
      logger.warn({}, 'asked again: stopping the pipeline now');
      unsubscribe();
      return;
    }
    logger.info({ gracePeriodMs: options.gracePeriod ?? 30_000 }, 'shutting down: the pipeline has its grace period to complete');
    stopping.abort();
    graceTimer = setTimeout(() => {
      logger.warn({}, 'the grace period is over: stopping the pipeline now');
      unsubscribe();
    }, options.gracePeriod ?? 30_000);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'signal');
    stop();
  };
  if (options.handleSignals !== false) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }

  logger.info({ health: health?.url }, 'pipeline starting');
  const done = new Promise<void>((resolve, reject) => {
    let settled = false;
    const finish = (error?: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(graceTimer);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      void (health?.close() ?? Promise.resolve()).then(() => {
        logger.info({}, 'pipeline stopped');
        if (error === undefined) resolve();
        else reject(error instanceof Error ? error : new Error(String(error)));
      });
    };
    let outcomes: Observable<ReconcileOutcome>;
    try {
      outcomes = options.pipeline(context);
    } catch (err) {
      finish(new Error(`the pipeline "${name}" threw while it was made: ${err instanceof Error ? err.message : String(err)}`, { cause: err }));
      return;
    }
    const subscription = outcomes.subscribe({
      next: (outcome) => {
        if (outcome.result === 'success') logger.debug({ key: outcome.key, ms: outcome.duration }, 'reconciled');
      },
      error: (err: unknown) => {
        logger.error({ err: err instanceof Error ? err.message : String(err) }, 'the pipeline failed');
        finish(err);
      },
      complete: () => finish(),
    });
    unsubscribe = () => {
      subscription.unsubscribe();
      finish();
    };
  });
  return { health, stop, done };
}
