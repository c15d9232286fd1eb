import { setMaxListeners } from 'node:events';
import { isNotFound, KubeApiError, kubeClient, runController, type EventRecorder, type KubeClient, type ReconcileOutcome, type RunningController } from 'rxkube';
import type { Registry } from 'prom-client';
import { connectTo, kubeconfigPaths, type Cluster } from '../support/cluster.js';
import { usageText, type OptionSpec, type ParsedOptions } from '../support/cli.js';
import { exampleLogger, logFormats, logLevels, type LogFormat } from '../support/logging.js';
import { exampleRecorder } from '../support/recorder.js';
import { podAutoscalerOptions } from '../podautoscaler/controller.js';
import { installPodAutoscalerCrd } from '../podautoscaler/crd.js';
import { autoscalerRef } from '../podautoscaler/manifests.js';
import type { PodAutoscaler } from '../podautoscaler/types.js';
import { catalogText, exampleCatalog } from './catalog.js';
import { createDisplay, type Display } from './display.js';
import { recordingLogger } from './recordingLogger.js';
import { steps } from './script.js';
import { checkWebhooks, registerWebhooks, type WebhookReport } from './webhookChecks.js';
import { selfSignedCertificates } from 'rxkube/webhooks';
import { podAutoscalerWebhooks } from '../podautoscaler/webhooks.js';
import { describeProblem, problems, stateReader, type ClusterState, type Problem } from './state.js';

/** The main job's command line. */
export const demoOptionSpecs = {
  kubeconfig: { kind: 'string', value: 'path', help: 'the cluster to run on (default: KUBECONFIG, else the embedded API server; never ~/.kube/config)' },
  pace: { kind: 'integer', value: 'ms', help: 'pause between the steps of the workload (default 900)' },
  'step-timeout': { kind: 'integer', value: 'ms', min: 1, help: 'how long a step may take to converge (default 15000)' },
  'metrics-port': { kind: 'integer', value: 'n', help: 'port of /metrics (default 0: any free port)' },
  'log-format': { kind: 'choice', value: 'json|pretty', choices: logFormats, help: 'also write the controller\'s logs to stderr, as JSON lines or pretty (default: none; the summary counts them)' },
  'log-level': { kind: 'choice', value: 'level', choices: logLevels, help: 'the lowest level written with --log-format (default info)' },
  record: { kind: 'string', value: 'path', help: 'record the controller\'s timeline to this file, for npx rxkube replay (JSON lines, rotated by size, Secrets redacted)' },
  replicas: { kind: 'integer', value: 'n', min: 1, help: 'run n sharded replicas in this process and stop one halfway (default 1: one unsharded controller)' },
} as const satisfies Record<string, OptionSpec>;

/** The main job's usage text (`npm start -- --help`). */
export const demoUsage = usageText(
  'npm start -- [options]      (or: npx tsx examples/main.ts [options])',
  'Runs the podautoscaler example controller on the embedded API server (or on the cluster\nof --kubeconfig, in a namespace of its own), drives a scripted workload, and ends with a\nsummary: exit code 0 when every object converged, 1 when not, 2 for a bad command line,\n130 when interrupted (Ctrl-C).',
  demoOptionSpecs,
) + `\n${catalogText()}`;

export interface DemoOptions {
  /** What the command line said (see `demoOptionSpecs`). */
  options: ParsedOptions;
  env: NodeJS.ProcessEnv;
  out: NodeJS.WriteStream;
  /** Aborted by Ctrl-C: the job stops the controller, cleans up and resolves `interrupted`. */
  signal?: AbortSignal;
}

/** How the main job ended. */
export type DemoOutcome = 'converged' | 'not converged' | 'interrupted';

interface StepResult {
  title: string;
  ms: number;
  converged: boolean;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * The main job: runs the podautoscaler controller against the cluster asked
 * for (or the embedded API server when none was), drives the scripted
 * workload in a namespace of its own, waits for convergence after each
 * step while showing progress, and ends with a summary. Resolves true when
 * every object converged.
 */
export async function runDemo({ options, env, out, signal }: DemoOptions): Promise<DemoOutcome> {
  const started = Date.now();
  const pace = (options.pace as number | undefined) ?? 900;
  const stepTimeout = (options['step-timeout'] as number | undefined) ?? 15_000;
  const metricsPort = (options['metrics-port'] as number | undefined) ?? 0;
  const kubeconfig = options.kubeconfig as string | undefined;
  const cluster = await connectTo(kubeconfig !== undefined ? [kubeconfig] : kubeconfigPaths([], env));
  const display = createDisplay(out);
  const namespace = cluster.embedded ? 'demo' : `rxkube-demo-${Math.random().toString(36).slice(2, 8)}`;
  const client = kubeClient(cluster.kubeConfig, { fieldManager: 'rxkube-demo' });
  const format = options['log-format'] as LogFormat | undefined;
  const logger = recordingLogger(
    format === undefined ? undefined : exampleLogger({ controller: 'podautoscaler' }, { format, level: (options['log-level'] as string | undefined) ?? 'info' }),
  );
  const recorder = exampleRecorder(cluster.kubeConfig, 'podautoscaler', `rxkube-demo-${process.pid}`, logger);
  const counts = { total: 0, success: 0, error: 0 };
  const stop = new AbortController();
  // Every request of a burst listens to it.
  setMaxListeners(200, stop.signal);
  const interrupt = () => stop.abort();
  const interrupted = () => signal?.aborted === true;
  if (signal?.aborted) stop.abort();
  else signal?.addEventListener('abort', interrupt, { once: true });
  let running: RunningController<PodAutoscaler> | undefined;
  const results: StepResult[] = [];
  let final: ClusterState | undefined;
  let left: string[] = ['the demo did not get to check'];
  let metricsText = '';
  let webhookReport: WebhookReport | undefined;
  let controllerFailure: string | undefined;
  let watchTypeGone: ReturnType<typeof setInterval> | undefined;

  try {
    display.line(`rxkube main job: the podautoscaler controller on ${cluster.where}, namespace "${namespace}"`);
    display.line(`other examples: ${exampleCatalog.slice(1).map((e) => e.name).join(', ')} (npm start -- --help says how to run them)`);
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, { signal: stop.signal });
    await installPodAutoscalerCrd(client, { signal: stop.signal });
    // Only the embedded server can call back into this process: a real cluster gets no webhooks.
    const certs = cluster.embedded === undefined ? undefined : await selfSignedCertificates({ ipAddresses: ['127.0.0.1'] });
    running = await runController({
      ...podAutoscalerOptions(cluster.kubeConfig, { namespace, concurrency: 4, logger, recorder }),
      ...(certs !== undefined ? { webhooks: { tls: certs, port: 0, host: '127.0.0.1', ...podAutoscalerWebhooks() } } : {}),
      health: { port: metricsPort, host: '127.0.0.1' },
      liveView: { port: 0 },
      ...(options.record !== undefined ? { record: options.record as string } : {}),
      // Ctrl-C is the caller's (it comes as `signal`): the job cleans up, then says it was interrupted.
      handleSignals: false,
      onOutcome: (outcome: ReconcileOutcome) => {
        counts.total++;
        if (outcome.result === 'success') counts.success++;
        if (outcome.result === 'error' || outcome.result === 'dropped') counts.error++;
      },
    });
    // A controller that stops (or fails) stops the script too; an interrupt stops the controller.
    // Its failure is the summary's to report: a handler here keeps it from being an unhandled rejection, which would kill the job.
    void running.done.then(
      () => stop.abort(),
      (err: unknown) => {
        controllerFailure = err instanceof Error ? err.message : String(err);
        stop.abort();
      },
    );
    const controllerRun = running;
    stop.signal.addEventListener('abort', () => controllerRun.stop(), { once: true });
    // A controller whose resource type is gone (its CRD deleted) waits, unready, for it to come back
    // (docs/dynamic-watches.md); this job's script cannot go on without it, and says why.
    watchTypeGone = setInterval(() => {
      const gone = controllerRun.controller.notReady().find((line) => line.includes('not served'));
      if (gone === undefined || controllerFailure !== undefined) return;
      controllerFailure = gone;
      stop.abort();
    }, 100);
    display.line(`metrics: ${running.health?.url}/metrics   (Ctrl-C stops)`);
    display.line(`live view: ${running.liveView}   (open it in a browser while the job runs)`);
    if (certs !== undefined) await registerWebhooks(client, running, certs.caBundle, stop.signal);
    const read = stateReader(cluster.kubeConfig, namespace);
    const registry = running.controller.registry;

    for (const [i, step] of steps.entries()) {
      if (stop.signal.aborted) break;
      const stepStart = Date.now();
      await step.run(client, namespace, stop.signal);
      let state: ClusterState | undefined;
      let waiting: Problem[] = [{ object: 'the cluster', message: 'not read yet' }];
      while (!stop.signal.aborted && Date.now() - stepStart < stepTimeout) {
        state = await read(stop.signal);
        waiting = problems(state);
        display.progress({
          step: i + 1,
          steps: steps.length,
          title: step.title,
          elapsed: Date.now() - stepStart,
          reconciles: counts,
          queueDepth: await gauge(registry, 'workqueue_depth'),
          activeWorkers: await gauge(registry, 'controller_runtime_active_workers'),
          state,
          problems: waiting,
        });
        if (waiting.length === 0) break;
        await sleep(50, stop.signal);
      }
      const ms = Date.now() - stepStart;
      const converged = waiting.length === 0;
      results.push({ title: step.title, ms, converged });
      display.line(`[${String(i + 1).padStart(2)}/${steps.length}] ${step.title}: ${converged ? `converged in ${ms} ms` : `NOT converged after ${ms} ms`} (reconciles so far ${counts.total})`);
      if (!converged) break;
      if (i < steps.length - 1) await sleep(pace, stop.signal);
    }
    if (certs !== undefined && !stop.signal.aborted) {
      webhookReport = await checkWebhooks(client, namespace, stop.signal);
      // "legacy" is a PodAutoscaler like the others: give the controller the time of a step to report it.
      const checked = Date.now();
      while (!stop.signal.aborted && Date.now() - checked < stepTimeout && problems(await read(stop.signal)).length > 0) await sleep(50, stop.signal);
    }
    // Read even when the controller ended the job early: the summary says what it left behind. Only Ctrl-C cuts it short.
    final = await read(signal);
    left = [...problems(final).map(describeProblem), ...(webhookReport?.problems ?? [])];
    // Only Ctrl-C and the controller's end abort `stop`.
    if (stop.signal.aborted) left.push(interrupted() ? 'the demo was interrupted' : STOPPED_EARLY);
    if (results.length < steps.length && left.length === 0) left = [`only ${results.length} of ${steps.length} steps ran`];
    metricsText = await (await fetch(`${running.health?.url}/metrics`)).text();
  } catch (err) {
    if (!interrupted()) left = [...(left[0] === 'the demo did not get to check' ? [] : left), `the demo failed: ${err instanceof Error ? err.message : String(err)}`];
  } finally {
    clearInterval(watchTypeGone);
    signal?.removeEventListener('abort', interrupt);
    display.close();
    await cleanUp(cluster, client, namespace, running, final, recorder);
  }
  if (interrupted()) return 'interrupted';
  if (controllerFailure !== undefined) left = [...left.filter((problem) => problem !== STOPPED_EARLY), `the controller failed: ${controllerFailure}`];

  const converged = left.length === 0;
  summary(display, {
    cluster,
    results,
    counts,
    final,
    left,
    metricsText,
    webhookReport,
    logger,
    seconds: (Date.now() - started) / 1000,
    converged,
  });
  return converged ? 'converged' : 'not converged';
}

const STOPPED_EARLY = 'the controller stopped before the job ended';

function unlessNotFound(err: unknown): void {
  if (!(err instanceof KubeApiError && isNotFound(err))) throw err;
}

async function gauge(registry: Registry, name: string): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return 0;
  const { values } = await metric.get();
  return values.reduce((sum, v) => sum + v.value, 0);
}

/**
 * On the embedded server: stop the controller and the server. On a real
 * cluster: delete the demo's autoscalers while the controller still runs
 * (their finalizers need it), then stop it and delete the namespace.
 */
async function cleanUp(
  cluster: Cluster,
  client: KubeClient,
  namespace: string,
  running: RunningController<PodAutoscaler> | undefined,
  final: ClusterState | undefined,
  recorder: EventRecorder,
): Promise<void> {
  try {
    if (cluster.embedded === undefined) {
      const names = (final?.autoscalers ?? []).map((pa) => pa.metadata.name as string);
      // One already gone (or its whole resource: the CRD deleted) needs no removing.
      await Promise.all(names.map((name) => client.remove(autoscalerRef(namespace, name)).catch(unlessNotFound)));
      // A controller that has ended removes no finalizer: its store stays as it was.
      let ended = false;
      void running?.done.then(() => (ended = true), () => (ended = true));
      const deadline = Date.now() + 10_000;
      while (running !== undefined && !ended && Date.now() < deadline && (running.controller.store.size > 0)) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    running?.stop();
    // A failure of the controller is reported in the summary (see `controllerFailure`).
    await running?.done.catch(() => undefined);
  } finally {
    await recorder.close();
    if (cluster.embedded === undefined) await client.remove({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => undefined);
    await cluster.close();
  }
}

interface SummaryInput {
  cluster: Cluster;
  results: StepResult[];
  counts: { total: number; success: number; error: number };
  final: ClusterState | undefined;
  left: string[];
  metricsText: string;
  webhookReport: WebhookReport | undefined;
  logger: ReturnType<typeof recordingLogger>;
  seconds: number;
  converged: boolean;
}

function summary(display: Display, s: SummaryInput): void {
  const slowest = [...s.results].sort((a, b) => b.ms - a.ms)[0];
  const scraped = /controller_runtime_reconcile_total\{controller="podautoscaler",result="success"\} (\d+)/.exec(s.metricsText)?.[1];
  const lines = [
    '',
    'Summary',
    `  cluster:     ${s.cluster.where}`,
    `  steps:       ${s.results.filter((r) => r.converged).length}/${steps.length} converged` +
      (slowest ? ` (slowest: "${slowest.title}" in ${slowest.ms} ms)` : ''),
    `  reconciles:  ${s.counts.total} (${s.counts.success} ok, ${s.counts.error} failed and retried)` +
      (scraped !== undefined ? `; /metrics said ${scraped} successful` : ''),
    `  objects:     ${s.final?.autoscalers.length ?? '?'} PodAutoscalers, ${s.final?.deployments.length ?? '?'} Deployments`,
    `  controller:  ${s.logger.errors} errors, ${s.logger.warnings} warnings logged` + (s.logger.lastError ? ` (last: ${s.logger.lastError})` : ''),
    ...(s.webhookReport === undefined
      ? [`  webhooks:    ${s.cluster.embedded === undefined ? 'not registered (a real cluster cannot call back into this process)' : 'not checked'}`]
      : s.webhookReport.lines.map((line) => `  webhooks:    ${line}`)),
    `  time:        ${s.seconds.toFixed(1)} s`,
  ];
  for (const problem of s.left.slice(0, 10)) lines.push(`  not converged: ${problem}`);
  if (s.left.length > 10) lines.push(`  … and ${s.left.length - 10} more`);
  lines.push(
    s.converged
      ? '  result:      CONVERGED: every object reached the state the controller should give it'
      : `  result:      NOT CONVERGED: ${s.left.length} problem(s)`,
  );
  for (const line of lines) display.line(line);
}
