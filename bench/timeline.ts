/**
 * The timeline's cost on the `bench:storm` workload: its throughput phase
 * (triggers over 100 keys through `reconcileByKey`, no-op reconcile,
 * concurrency 4), wired as `controller()` wires it: the controller's
 * metrics observer on the queue, each trigger told to the timeline with its
 * cause through `triggerKeys` (as `wiring.ts` does for a primary delta),
 * each run given its client and recorder through `runParts`. Three
 * contenders, measured in the same run on the same keys (median of the
 * rounds):
 *
 * - `metrics only`: the queue as `controller()` wired it before the
 *   timeline (the reference): a plain `map` from delta to key;
 * - `timeline, no subscriber`: the timeline's hooks in place, nobody
 *   reading (target: the same rate);
 * - `timeline, 1 subscriber`: every entry built and delivered to one
 *   subscriber that counts them (target: under 10 % slower than no subscriber).
 *
 * Run: npm run bench:timeline. TIMELINE_TRIGGERS (default 1,000,000) and
 * TIMELINE_ROUNDS (default 5) make it shorter.
 */
import { from, map, type OperatorFunction } from 'rxjs';
import { exponentialFailureRateLimiter, reconcileByKey, silentLogger, type Delta, type KubeObject } from 'rxkube';
import type { WorkqueueObserver } from '../src/operators/workqueueObserver.js';
import { memoryClient, memoryRecorder } from 'rxkube/testing';
import { Registry } from 'prom-client';
import { runParts } from '../src/observe/timelineClient.js';
import { TimelineHub } from '../src/observe/timelineHub.js';
import { timelineObserver } from '../src/observe/timelineQueue.js';
import { triggerKeys } from '../src/controller/wiring.js';
import { controllerMetrics } from '../src/sinks/metrics/controllerMetrics.js';
import { asyncScheduler } from 'rxjs';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) console.warn('run with --expose-gc for steadier figures (npm run bench:timeline does)');

const triggers = Number(process.env['TIMELINE_TRIGGERS'] ?? 1_000_000);
const rounds = Number(process.env['TIMELINE_ROUNDS'] ?? 5);
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const rate = (perSecond: number) => (perSecond >= 1e6 ? `${fmt(perSecond / 1e6, 2)} M` : `${fmt(perSecond / 1e3, 0)} k`);

// The deltas of 100 ConfigMaps, reused: the bench measures the queue and the timeline, not making deltas.
const deltas: Delta[] = Array.from({ length: 100 }, (_, i) => {
  const object: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `key-${i}`, namespace: 'ns', resourceVersion: String(i) } };
  return { type: 'Updated', key: `ns/key-${i}`, object, old: object };
});
const input = Array.from({ length: triggers }, (_, i) => deltas[i % 100] as Delta);
const client = memoryClient();
const own = { client, recorder: memoryRecorder() };

type Mode = 'metrics only' | 'timeline, no subscriber' | 'timeline, 1 subscriber';
const modes: Mode[] = ['metrics only', 'timeline, no subscriber', 'timeline, 1 subscriber'];

/** One pass of the workload; returns the outcomes and the entries its subscriber got. */
function pass(mode: Mode): { outcomes: number; entries: number; seconds: number } {
  const scheduler = asyncScheduler;
  const metrics = controllerMetrics({ controller: 'bench', registry: new Registry(), maxConcurrentReconciles: 4, scheduler, clock: () => scheduler.now() });
  const hub = new TimelineHub('bench', scheduler, silentLogger, () => () => undefined);
  let entries = 0;
  const subscription = mode === 'timeline, 1 subscriber' ? hub.timeline.subscribe(() => entries++) : undefined;
  const observer: WorkqueueObserver = mode === 'metrics only' ? metrics.observer : timelineObserver(hub, metrics.observer);
  const traced = mode !== 'metrics only';
  let outcomes = 0;
  let parts = 0;
  // CPU time, not wall time: on a busy machine the wall clock counts the time others had the core.
  const start = process.cpuUsage();
  const toKeys: OperatorFunction<Delta, string> = traced
    ? triggerKeys(
        hub,
        (delta: Delta) => delta.key,
        (delta, key) => hub.trigger(key, 'for', 'configmaps', delta),
      )
    : map((delta) => delta.key);
  from(input)
    .pipe(
      toKeys,
      reconcileByKey(
        (key) => {
          if (traced && runParts(hub, key, own).client !== client) parts++;
        },
        { concurrency: 4, logger: silentLogger, observer, rateLimiter: exponentialFailureRateLimiter(5, 1000), scheduler },
      ),
    )
    .subscribe(() => outcomes++);
  const used = process.cpuUsage(start);
  const seconds = (used.user + used.system) / 1e6;
  subscription?.unsubscribe();
  if (mode === 'timeline, 1 subscriber' && parts !== outcomes) throw new Error(`${parts} traced runs of ${outcomes}`);
  return { outcomes, entries, seconds };
}

for (const mode of modes) pass(mode); // warm-up
const perSecond = new Map<Mode, number[]>(modes.map((m) => [m, []]));
let entriesPerPass = 0;
for (let r = 0; r < rounds; r++) {
  for (const mode of modes) {
    gc?.();
    const { outcomes, entries, seconds } = pass(mode);
    if (outcomes !== triggers) throw new Error(`${mode}: ${outcomes} outcomes for ${triggers} triggers`);
    if (mode === 'timeline, 1 subscriber') entriesPerPass = entries;
    perSecond.get(mode)?.push(triggers / seconds);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const reference = median(perSecond.get('metrics only') ?? []);
const idle = median(perSecond.get('timeline, no subscriber') ?? []);
const one = median(perSecond.get('timeline, 1 subscriber') ?? []);
console.log(`timeline: ${fmt(triggers)} triggers over 100 keys, no-op reconcile, concurrency 4, as controller() wires the queue (per CPU second, median of ${rounds})`);
console.log(`  metrics only               ${rate(reference).padStart(8)} keys/s`);
console.log(`  timeline, no subscriber    ${rate(idle).padStart(8)} keys/s   ${fmt((idle / reference) * 100, 1)} % of metrics only`);
console.log(`  timeline, 1 subscriber     ${rate(one).padStart(8)} keys/s   ${fmt((one / idle) * 100, 1)} % of no subscriber (${fmt(entriesPerPass)} entries a pass, ${fmt(entriesPerPass / triggers, 1)} per trigger)`);
const slower = (1 - one / idle) * 100;
console.log(`  target: one subscriber under 10 % slower than none: ${fmt(slower, 1)} % slower, ${slower < 10 ? 'met' : 'NOT met'}`);
