/**
 * What priorities buy a controller after a restart: the time a fresh edit
 * takes to be reconciled while the initial list is still queued.
 *
 * 100,000 keys are queued at once, as an informer's replay queues them when
 * a controller starts (`LOW_PRIORITY`, as `controller()` gives them), then
 * drained at concurrency 4 by a reconcile of 1 ms. Every 50 ms meanwhile, an
 * object that was already reconciled is edited (a bare key, `NORMAL_PRIORITY`,
 * as a watch event), and the time from its trigger to the end of the run
 * that reconciles it is recorded, until the list has drained. The same
 * triggers go through the same queue three times in one process:
 * - FIFO (`aging: 0`: arrival order, as the queue was before priorities);
 * - priorities with the default aging (one minute);
 * - priorities with an aging shorter than the drain (`BENCH_SHORT_AGING`,
 *   default 5 s), to show the price of the bound: once the list has aged
 *   past normal, an edit waits behind what is left of it again.
 *
 * The reconcile waits 1 ms on a real timer (`timer(1)` on `asyncScheduler`),
 * not in virtual time: in virtual time the priority figure would be exactly
 * one run (1 ms) by construction and say nothing the marble tests do not.
 * On the real clock the figure carries what a user would see on top of the
 * ordering: the queue's own work (100,000 entries in its lanes, the GC they
 * cause), timers that fire late (a 1 ms timer takes 1–1.3 ms in Node.js),
 * and an edit's trigger getting through an event loop busy with 4 workers.
 * The drain rate it reaches is printed with it.
 *
 * Run: npm run bench:priority (BENCH_KEYS=20000 for a short run)
 */
import { asyncScheduler, finalize, lastValueFrom, map, Subject, timer } from 'rxjs';
import { LOW_PRIORITY, reconcileByKey, silentLogger, type KeyTrigger } from 'rxkube';

const KEYS = Number(process.env.BENCH_KEYS ?? 100_000);
const CONCURRENCY = 4;
const WORK_MS = 1;
const EDIT_EVERY_MS = 50;
const SHORT_AGING = Number(process.env.BENCH_SHORT_AGING ?? 5_000);

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ms = (n: number) => (n >= 1000 ? `${fmt(n / 1000, 2)} s` : `${fmt(n, n < 10 ? 2 : 1)} ms`);
const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;

/** A small seeded generator (mulberry32), so that every mode edits the same sequence of picks. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Result {
  name: string;
  drainMs: number;
  runs: number;
  /** Each edit's time to reconcile, ms, sorted. */
  edits: number[];
  /** For each edit, the runs that started between it and the run that reconciled it, sorted. */
  ahead: number[];
  /** CPU time of the process per run, µs. */
  cpuPerRunUs: number;
}

async function scenario(name: string, aging: number): Promise<Result> {
  const keys = Array.from({ length: KEYS }, (_, i) => `default/object-${i}`);
  const list: KeyTrigger[] = keys.map((key) => ({ key, priority: LOW_PRIORITY }));
  const input = new Subject<KeyTrigger>();
  const reconciled: string[] = [];
  const seen = new Set<string>();
  /** Edited keys, with when, and how many runs had started by then: an edit is reconciled by the first run that starts after it. */
  const edited = new Map<string, { at: number; runs: number; started: boolean }>();
  const latencies: number[] = [];
  const ahead: number[] = [];
  const pick = random(20_261_205);
  let runs = 0;
  let listDone = 0;
  let listDrainedAt = 0;
  let editsDone: () => void = () => undefined;
  const allEditsDone = new Promise<void>((resolve) => (editsDone = resolve));
  let editing = true;

  const reconcile = (key: string) => {
    const edit = edited.get(key);
    if (edit !== undefined && !edit.started) {
      edit.started = true;
      ahead.push(runs - edit.runs);
    }
    runs++;
    return timer(WORK_MS, asyncScheduler).pipe(
      map(() => undefined),
      finalize(() => {
        const end = performance.now();
        if (edit?.started === true) {
          edited.delete(key);
          latencies.push(end - edit.at);
          if (!editing && edited.size === 0) editsDone();
        }
        if (!seen.has(key)) {
          seen.add(key);
          reconciled.push(key);
          if (++listDone === KEYS) listDrainedAt = end;
        }
      }),
    );
  };

  (globalThis as { gc?: () => void }).gc?.();
  const out = lastValueFrom(input.pipe(reconcileByKey(reconcile, { concurrency: CONCURRENCY, aging, logger: silentLogger })), { defaultValue: undefined });
  const began = performance.now();
  const cpu = process.cpuUsage();
  for (const trigger of list) input.next(trigger);
  const editor = setInterval(() => {
    if (listDone === KEYS) {
      clearInterval(editor);
      editing = false;
      if (edited.size === 0) editsDone();
      return;
    }
    if (reconciled.length === 0) return;
    const key = reconciled[Math.floor(pick() * reconciled.length)] as string;
    if (edited.has(key)) return;
    edited.set(key, { at: performance.now(), runs, started: false });
    input.next(key);
  }, EDIT_EVERY_MS);
  await allEditsDone;
  input.complete();
  await out;
  const used = process.cpuUsage(cpu);
  return {
    name,
    drainMs: listDrainedAt - began,
    runs,
    edits: latencies.sort((a, b) => a - b),
    ahead: ahead.sort((a, b) => a - b),
    cpuPerRunUs: (used.user + used.system) / runs,
  };
}

const results: Result[] = [];
console.log(`priority: ${fmt(KEYS)} keys queued from an initial list (LOW_PRIORITY), concurrency ${CONCURRENCY}, a reconcile of ${WORK_MS} ms on a real timer, an edit every ${EDIT_EVERY_MS} ms`);
for (const [name, aging] of [
  ['FIFO (aging 0)', 0],
  ['priority (aging 60 s, the default)', 60_000],
  [`priority (aging ${fmt(SHORT_AGING / 1000, 0)} s)`, SHORT_AGING],
] as const) {
  const r = await scenario(name, aging);
  results.push(r);
  const p50 = percentile(r.edits, 50);
  const p99 = percentile(r.edits, 99);
  console.log(`  ${r.name}`);
  console.log(`    list drained           ${ms(r.drainMs)}  ${fmt((r.runs / r.drainMs) * 1000)} runs/s (${CONCURRENCY} workers × 1 ms would be ${fmt((CONCURRENCY / WORK_MS) * 1000)})`);
  console.log(`    fresh edit, p50        ${ms(p50)}  over ${fmt(r.edits.length)} edits`);
  console.log(`    fresh edit, p99        ${ms(p99)}  max ${ms(r.edits.at(-1) as number)}`);
  console.log(
    `    runs ahead of an edit  p50 ${fmt(percentile(r.ahead, 50))}, p99 ${fmt(percentile(r.ahead, 99))}  (at the nominal ${fmt((CONCURRENCY / WORK_MS) * 1000)} runs/s: p99 ${ms((percentile(r.ahead, 99) * WORK_MS) / CONCURRENCY + WORK_MS)})`,
  );
  console.log(`    CPU per run            ${fmt(r.cpuPerRunUs, 1)} µs  (the whole process: queue, timers, bench)`);
}
const [fifo, prio, short] = results as [Result, Result, Result];
const p99 = (r: Result) => percentile(r.edits, 99);
const p50 = (r: Result) => percentile(r.edits, 50);
console.log('  ratios');
console.log(`    fresh edit p50, FIFO / priority   ${fmt(p50(fifo) / p50(prio), 0)}×`);
console.log(`    fresh edit p99, FIFO / priority   ${fmt(p99(fifo) / p99(prio), 0)}×`);
console.log(`    drain time, priority / FIFO       ${fmt(prio.drainMs / fifo.drainMs, 2)}×  (wall time: the machine's load moves it)`);
console.log(`    CPU per run, priority / FIFO      ${fmt(prio.cpuPerRunUs / fifo.cpuPerRunUs, 2)}×`);
console.log(`    goal: p99 < 50 ms with priority   ${p99(prio) < 50 ? 'met' : 'NOT met'} (${ms(p99(prio))}, against ${ms(p99(fifo))} with FIFO)`);
console.log(`    short aging, edit p99             ${ms(p99(short))}  (the list ranks as normal after ${fmt(SHORT_AGING / 1000, 0)} s: later edits wait behind what is left of it)`);
