import { createDefaultLogger } from '../logger.js';
import type { ReconcileOutcome } from '../operators/reconcileByKey.js';
import { startHealthServer, type HealthServer } from '../sinks/metrics/healthServer.js';
import { liveView, type LiveView, type LiveViewOptions } from '../observe/liveView/liveView.js';
import { prepareLiveViewServer, type LiveViewServer, type LiveViewServerOptions } from '../observe/liveView/liveViewServer.js';
import { resourceName, type KubeObject } from '../types.js';
import type { WebhookServer } from '../sinks/webhooks/webhookServer.js';
import { asyncScheduler } from 'rxjs';
import { controller, type Controller, type ControllerOptions } from './controller.js';
import { recordedOptions } from './recordedOptions.js';
import { recordTimeline, type RecordOptions, type TimelineRecording } from '../observe/recording/recordTimeline.js';
import { serveControllerWebhooks, type ControllerWebhooks } from './controllerWebhooks.js';

/** What `runController()` takes: a controller's options, and the health server, signals and outcome hook of a process. */
export interface RunControllerOptions<T extends KubeObject> extends ControllerOptions<T> {
  /**
   * The health server (`/metrics`, `/healthz`, `/readyz`): where to listen
   * (default port 8080 on all interfaces), or `false` for none.
   */
  health?: { port?: number; host?: string } | false;
  /** Shut down gracefully on SIGTERM and SIGINT (default true). */
  handleSignals?: boolean;
  /**
   * Admission and conversion webhooks of the primary kind, served over HTTPS
   * beside the health server (see `webhookPaths` in `rxkube/webhooks`); `/readyz` waits for their
   * serving certificate.
   */
  webhooks?: ControllerWebhooks<T>;
  /** Told of every outcome (the default logs failures; successes at debug). One that throws shuts the controller down, and `done` rejects naming it. */
  onOutcome?: (outcome: ReconcileOutcome) => void;
  /**
   * The live view, a page at `/debug/rxkube/` that shows the informers,
   * the queue and each key's recent runs as they happen (server-sent
   * events), on a listener of its own: `true`, or where it listens (default
   * 127.0.0.1:8081; another `host` opts in to being reached from
   * elsewhere), which `Host` names it answers, its bearer token, how it
   * batches and what it keeps. Off by default. Unlike the health server it
   * binds loopback and checks `Host` (see docs/liveview.md).
   */
  liveView?: boolean | (Omit<LiveViewOptions, 'scheduler' | 'logger'> & Omit<LiveViewServerOptions, 'logger'>);
  /**
   * Record the controller's timeline, every object its informers received
   * included, to this file (newline-delimited JSON, for `replay` and
   * `rxkube replay`): rotated by size (64 MiB, 5 files by default),
   * Secrets' values redacted unless `keepSecrets`. A write error is logged;
   * the controller goes on. `done` settles once the recording is on disk.
   */
  record?: string | RecordOptions;
}

/** A controller that `runController()` started: its parts, and the handles to stop it and wait for it. */
export interface RunningController<T extends KubeObject> {
  /** The running controller. */
  readonly controller: Controller<T>;
  /** The health server, when one was asked for. */
  readonly health: HealthServer | undefined;
  /** The live view's address (`http://127.0.0.1:port/debug/rxkube/`, never with its token), when it was asked for. */
  readonly liveView: string | undefined;
  /** The webhook server, once its certificate is loaded and it listens; undefined without `webhooks`. */
  readonly webhooks: Promise<WebhookServer> | undefined;
  /** Starts a graceful shutdown, as SIGTERM does; called again, ends the grace period at once, as a second SIGTERM does. */
  stop(): void;
  /**
   * Settles when the controller has stopped and everything it opened is
   * closed, the Lease released included (the next replica need not wait
   * for it to expire); rejects with its error.
   */
  readonly done: Promise<void>;
}

/**
 * Runs a controller the way a process wants one: structured logs, a health
 * server with `/metrics` and with `/readyz` true once every store has synced
 * and the replica leads or stands by (503, with the reason, while an
 * informer's source is failing: a 403 being retried names the resource and
 * the server's message), and a graceful shutdown on SIGTERM or
 * SIGINT (in-flight reconciles get the grace period, the lease is released,
 * watches close; a second signal ends the grace period at once). It never
 * exits the process: when `done` settles, nothing
 * it opened is left to keep the event loop alive, so a `main` that awaits
 * `done` ends by itself.
 */
export async function runController<T extends KubeObject>(options: RunControllerOptions<T>): Promise<RunningController<T>> {
  const logger = options.logger ?? createDefaultLogger({ controller: options.name });
  const abort = new AbortController();
  const abortNow = new AbortController();
  const onCallerAbort = (): void => abort.abort();
  const onCallerStopNow = (): void => abortNow.abort();
  const running = controller<T>({ ...options, logger, signal: abort.signal, stopNow: abortNow.signal });
  const onSignal = (signal: NodeJS.Signals) => {
    if (abort.signal.aborted) {
      // The second signal: whoever sent it does not want to wait out the grace period.
      logger.warn({ signal }, 'asked again: aborting reconciles in flight now');
      abortNow.abort();
      return;
    }
    logger.info({ signal }, 'shutting down');
    abort.abort();
  };
  const handleSignals = options.handleSignals !== false;

  const stopWebhooks = new AbortController();
  let view: LiveView | undefined;
  let viewServer: LiveViewServer | undefined;
  let recording: TimelineRecording | undefined;
  let webhooks: Promise<WebhookServer> | undefined;
  let webhookServer: WebhookServer | undefined;
  let health: HealthServer | undefined;
  // The one teardown, for a failed start as for the end of `done`: it undoes whatever part has started.
  const release = async (): Promise<void> => {
    options.signal?.removeEventListener('abort', onCallerAbort);
    options.stopNow?.removeEventListener('abort', onCallerStopNow);
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    view?.close();
    await viewServer?.close();
    await health?.close();
    stopWebhooks.abort();
    await webhooks?.then((server) => server.close(), () => {});
    await recording?.stop();
  };
  try {
    // The live view and the recording check their options first: a bad one rejects before a listener, file or server exists.
    const { host, port, acceptHosts, token, ...viewOptions } = typeof options.liveView === 'object' ? options.liveView : {};
    view = options.liveView
      ? liveView(
          { timeline: running.timeline, stores: running.stores, primary: resourceName(options.for) },
          { ...viewOptions, ...(options.scheduler !== undefined ? { scheduler: options.scheduler } : {}), logger },
        )
      : undefined;
    const viewListener = view === undefined ? undefined : prepareLiveViewServer(view, { host, port, acceptHosts, token, logger });
    // Subscribed before the controller starts: the timeline is hot, and the first lists belong in the recording.
    recording =
      options.record === undefined
        ? undefined
        : recordTimeline(running.timeline, { name: options.name, options: recordedOptions(options) }, typeof options.record === 'string' ? { path: options.record } : options.record, { scheduler: options.scheduler ?? asyncScheduler, logger });

    if (options.signal?.aborted) abort.abort();
    else options.signal?.addEventListener('abort', onCallerAbort, { once: true });
    if (options.stopNow?.aborted) abortNow.abort();
    else options.stopNow?.addEventListener('abort', onCallerStopNow, { once: true });

    webhooks =
      options.webhooks === undefined ? undefined : serveControllerWebhooks(options.for, options.webhooks, { registry: running.registry, logger, signal: stopWebhooks.signal });
    webhooks?.then(
      (server) => (webhookServer = server),
      (error: unknown) => {
        if (!stopWebhooks.signal.aborted) {
          logger.error({ err: error }, 'webhooks: the server did not start; shutting down');
          abort.abort();
        }
      },
    );
    const readyz = {
      synced: () => running.synced(),
      // Failing says why: the resource whose source is retrying (a 403 until RBAC is granted) and its error.
      ready: () => {
        const reasons = running.notReady();
        if (reasons.length > 0) throw new Error(reasons.join('; '));
        return true;
      },
      ...(webhooks !== undefined ? { webhooks: () => webhookServer !== undefined } : {}),
    };
    viewServer = await viewListener?.listen();
    health = options.health === false ? undefined : await startHealthServer({ ...options.health, registry: running.registry, logger, checks: { healthz: () => true, readyz } });
  } catch (err) {
    await release();
    throw err;
  }
  const liveViewUrl = viewServer?.url;

  if (handleSignals) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }

  const onOutcome =
    options.onOutcome ??
    ((outcome: ReconcileOutcome) => {
      if (outcome.result === 'success') logger.debug({ key: outcome.key, ms: outcome.duration }, 'reconciled');
    });

  logger.info({ health: health?.url, ...(liveViewUrl !== undefined ? { liveView: liveViewUrl } : {}) }, 'controller starting');
  const done = new Promise<void>((resolve, reject) => {
    let failure: Error | undefined;
    running.subscribe({
      next: (outcome) => {
        if (failure !== undefined) return;
        try {
          onOutcome(outcome);
        } catch (err) {
          // A broken callback is a bug of the caller's: the controller shuts down, and done says why.
          failure = new Error(`runController: onOutcome threw for "${outcome.key}": ${err instanceof Error ? err.message : String(err)}`, { cause: err });
          logger.error({ err: failure.message }, 'onOutcome threw; shutting down');
          abort.abort();
        }
      },
      error: reject,
      complete: () => (failure === undefined ? resolve() : reject(failure)),
    });
  }).finally(async () => {
    await release();
    logger.info({}, 'controller stopped');
  });
  // Awaited or not, a failure must never surface as an unhandled rejection.
  done.catch(() => {});

  return { controller: running, health, liveView: liveViewUrl, webhooks, stop: () => (abort.signal.aborted ? abortNow.abort() : abort.abort()), done };
}
