/**
 * What tracing costs on the `bench:storm` workload's throughput phase
 * (triggers over 100 keys through `reconcileByKey`, no-op reconcile,
 * concurrency 4), wired as `controller()` wires it (as `bench:timeline`
 * does): the metrics observer and the timeline's hooks on the queue, each
 * trigger told to the timeline through `triggerKeys`, each run given its
 * client and recorder through `runParts` and its context through
 * `reconcileContext`. Three contenders, interleaved in the same run on the
 * same keys (median of the rounds, per CPU second):
 *
 * - `before tracing`: the run's context as before issue 39 (no tracing
 *   check, no `ctx.cause`): the reference;
 * - `no SDK`: as `controller()` runs now with no OpenTelemetry SDK
 *   registered (`traceRuns` finds none and returns undefined; each run
 *   checks it and asks the hub for its cause). Target: within 2 %;
 * - `SDK, no-op exporter`: an SDK `BasicTracerProvider` with a
 *   `BatchSpanProcessor` as sdk-node configures it (its default queue of
 *   2,048 spans, exported every 5 s: within one synchronous pass it fills,
 *   and the rest are dropped, as they would be by a process making spans
 *   faster than it exports them) over an exporter that drops everything: a
 *   span per run with its links and attributes, the timeline read by the
 *   tracer, each run's client wrapped. Target: within 10 %;
 * - `SDK, sampled out`: the same with `AlwaysOffSampler`: everything but
 *   the recording of spans, to say where the time goes.
 *
 * Run: npm run bench:tracing. TRACING_TRIGGERS (default 1,000,000) and
 * TRACING_ROUNDS (default 5) make it shorter.
 */
import { AlwaysOffSampler, BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { KubeConfig } from '@kubernetes/client-node';
import { asyncScheduler, from, type OperatorFunction } from 'rxjs';
import { exponentialFailureRateLimiter, reconcileByKey, silentLogger, type Delta, type KubeObject, type ObjectKey, type ReconcileContext } from 'rxkube';
import { memoryClient, memoryRecorder } from 'rxkube/testing';
import { Registry } from 'prom-client';
import { runParts } from '../src/observe/timelineClient.js';
import { TimelineHub } from '../src/observe/timelineHub.js';
import { timelineObserver } from '../src/observe/timelineQueue.js';
import { reconcileContext, triggerKeys, wire } from '../src/controller/wiring.js';
import { InformerFactory } from '../src/informers/informerFactory.js';
import { traceRuns } from '../src/observe/tracing/controllerTracing.js';
import { controllerMetrics } from '../src/sinks/metrics/controllerMetrics.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) console.warn('run with --expose-gc for steadier figures (npm run bench:tracing does)');

const triggers = Number(process.env['TRACING_TRIGGERS'] ?? 1_000_000);
const rounds = Number(process.env['TRACING_ROUNDS'] ?? 5);
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const rate = (perSecond: number) => (perSecond >= 1e6 ? `${fmt(perSecond / 1e6, 2)} M` : `${fmt(perSecond / 1e3, 0)} k`);

const deltas: Delta[] = Array.from({ length: 100 }, (_, i) => {
  const object: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `key-${i}`, namespace: 'ns', resourceVersion: String(i) } };
  return { type: 'Updated', key: `ns/key-${i}`, object, old: object };
});
const input = Array.from({ length: triggers }, (_, i) => deltas[i % 100] as Delta);
const client = memoryClient();
const own = { client, recorder: memoryRecorder() };
// The controller's wiring, for the stores and the primary store reconcileContext reads (nothing is subscribed).
const wiring = wire({ name: 'bench', kubeConfig: new KubeConfig(), for: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' }, reconcile: () => undefined }, new InformerFactory(new KubeConfig(), { logger: silentLogger }));

/** An exporter that drops every span: what the SDK costs, not what exporting does. */
class DroppingExporter implements SpanExporter {
  exported = 0;
  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.exported += spans.length;
    done({ code: 0 }); // ExportResultCode.SUCCESS
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

type Mode = 'before tracing' | 'no SDK' | 'SDK, no-op exporter' | 'SDK, sampled out';
const modes: Mode[] = (process.env['TRACING_MODES']?.split(',') as Mode[] | undefined) ?? ['before tracing', 'no SDK', 'SDK, no-op exporter', 'SDK, sampled out'];

/** One pass; returns the outcomes, the spans started and the CPU seconds. */
function pass(mode: Mode): { outcomes: number; spans: number; seconds: number; exporter: DroppingExporter | undefined; provider: BasicTracerProvider | undefined } {
  const scheduler = asyncScheduler;
  const metrics = controllerMetrics({ controller: 'bench', registry: new Registry(), maxConcurrentReconciles: 4, scheduler, clock: () => scheduler.now() });
  const hub = new TimelineHub('bench', scheduler, silentLogger, () => () => undefined);
  const exporter = mode.startsWith('SDK') ? new DroppingExporter() : undefined;
  const sampler = mode === 'SDK, sampled out' ? { sampler: new AlwaysOffSampler() } : {};
  const provider = exporter === undefined ? undefined : new BasicTracerProvider({ ...sampler, spanProcessors: [new BatchSpanProcessor(exporter)] });
  let spans = 0;
  const start = process.cpuUsage();
  // With no provider given, traceRuns reads the global one: no SDK is registered in this process.
  const tracing = mode === 'before tracing' ? undefined : traceRuns({ controller: 'bench', tracing: provider === undefined ? undefined : { tracerProvider: provider }, timeline: hub.timeline, attach: (s) => (hub.tracer = s), stores: wiring.stores, now: () => scheduler.now() });
  if (mode === 'no SDK' && tracing !== undefined) throw new Error('an SDK is registered globally: the no-SDK figures would be wrong');
  const toKeys: OperatorFunction<Delta, string> = triggerKeys(
    hub,
    (delta: Delta) => delta.key,
    (delta, key) => hub.trigger(key, 'for', 'configmaps', delta),
  );
  const logger = silentLogger;
  const reconcile =
    mode === 'before tracing'
      ? (key: ObjectKey, ctx: ReconcileContext) => {
          const parts = runParts(hub, key, own);
          return noop(reconcileContext(ctx, wiring, { client: parts.client, recorder: parts.recorder, logger, scheduler, cause: undefined }));
        }
      : (key: ObjectKey, ctx: ReconcileContext) => {
          const parts = runParts(hub, key, own);
          const runClient = tracing === undefined ? parts.client : tracing.client(key, parts.client);
          if (runClient !== client) spans++;
          return noop(reconcileContext(ctx, wiring, { client: runClient, recorder: parts.recorder, logger, scheduler, cause: hub.causeOf(key) }));
        };
  let outcomes = 0;
  from(input)
    .pipe(toKeys, reconcileByKey(reconcile, { concurrency: 4, logger: silentLogger, observer: timelineObserver(hub, metrics.observer), rateLimiter: exponentialFailureRateLimiter(5, 1000), scheduler }))
    .subscribe(() => outcomes++);
  tracing?.stop();
  const used = process.cpuUsage(start);
  return { outcomes, spans, seconds: (used.user + used.system) / 1e6, exporter, provider };
}

let sink = 0;
/** The reconcile: reads its context as a reconcile would, and returns at once. */
function noop(ctx: { key: string; cause?: unknown }): void {
  if (ctx.cause !== undefined) sink++;
}

for (const mode of modes) await pass(mode).provider?.shutdown(); // warm-up
const perSecond = new Map<Mode, number[]>(modes.map((m) => [m, []]));
let spansPerPass = 0;
let exportedPerPass = 0;
for (let r = 0; r < rounds; r++) {
  for (const mode of modes) {
    gc?.();
    const { outcomes, spans, seconds, exporter, provider } = pass(mode);
    if (outcomes !== triggers) throw new Error(`${mode}: ${outcomes} outcomes for ${triggers} triggers`);
    perSecond.get(mode)?.push(triggers / seconds);
    if (provider !== undefined) {
      await provider.shutdown(); // exports what the batch holds, outside the measured time
      if (mode === 'SDK, no-op exporter') {
        spansPerPass = spans;
        exportedPerPass = exporter?.exported ?? 0;
      }
    }
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const before = median(perSecond.get('before tracing') ?? []);
const none = median(perSecond.get('no SDK') ?? []);
const sdk = median(perSecond.get('SDK, no-op exporter') ?? []);
const sampledOut = median(perSecond.get('SDK, sampled out') ?? []);
console.log(`tracing: ${fmt(triggers)} triggers over 100 keys, no-op reconcile, concurrency 4, as controller() wires the queue (per CPU second, median of ${rounds} interleaved rounds)`);
console.log(`  before tracing          ${rate(before).padStart(8)} keys/s`);
console.log(`  no SDK                  ${rate(none).padStart(8)} keys/s   ${fmt((none / before) * 100, 1)} % of before tracing`);
console.log(`  SDK, no-op exporter     ${rate(sdk).padStart(8)} keys/s   ${fmt((sdk / before) * 100, 1)} % of before tracing (${fmt(spansPerPass)} runs traced a pass, ${fmt(exportedPerPass)} spans exported)`);
console.log(`  SDK, sampled out        ${rate(sampledOut).padStart(8)} keys/s   ${fmt((sampledOut / before) * 100, 1)} % of before tracing (the tracing around the spans: the timeline read, the run's client wrapped, no span recorded)`);
const slowerNone = (1 - none / before) * 100;
const slowerSdk = (1 - sdk / before) * 100;
console.log(`  target: no SDK within 2 %: ${fmt(slowerNone, 1)} % slower, ${slowerNone <= 2 ? 'met' : 'NOT met'}`);
console.log(`  target: SDK within 10 %: ${fmt(slowerSdk, 1)} % slower, ${slowerSdk <= 10 ? 'met' : 'NOT met'}`);
if (sink < 0) console.log(sink);
