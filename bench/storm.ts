/**
 * The workqueue benchmark: `reconcileByKey` under a storm of triggers, and
 * its raw throughput.
 *
 * 1. Storm (real time): 100,000 triggers over 100 keys, in 100 batches of
 *    1,000 every 10 ms, while each reconcile takes 10 ms, at concurrency 4.
 *    A workqueue runs about `concurrency × wall time / 10 ms` reconciles
 *    (the workers are never idle while triggers pile up), plus one final run
 *    of each key still dirty at the end: hundreds, not 100,000. It also
 *    checks that no update was lost: each key's last run started after its
 *    last trigger.
 * 2. Throughput: 1,000,000 triggers over 100 keys through a no-op
 *    (synchronous) reconcile at concurrency 4, against references measured
 *    in the same run on the same keys: a bare Map-based dedupe loop (the
 *    floor), a plain `mergeMap(…, 4)` (no per-key guarantees at all), and
 *    `groupBy` releasing idle keys + `exhaustMap` (the composition the
 *    operator is not built from; it also drops triggers). Median of 5 rounds.
 *    Target: at least 500,000 keys/s through reconcileByKey.
 *    And the same triggers carrying priorities (`{ key, priority }`, half
 *    low, half normal, as `controller()` sends an initial list and changes):
 *    what priorities cost on the path where no key waits.
 * 3. Memory: 100,000 distinct keys through a promise reconcile; the queue's
 *    state must be empty afterwards and the heap back where it was. Then the
 *    same 100,000 keys queued with priorities (every other one low, so two
 *    lanes and every take compares their heads), against bare keys (one
 *    lane), in 5 interleaved rounds: what priorities cost where keys wait.
 *    Goal: at most 5 % (medians).
 *
 * Peak heap is sampled during each phase (heapUsed). Run: npm run bench:storm
 */
import { Observable, exhaustMap, from, groupBy, lastValueFrom, mergeMap, of } from 'rxjs';
import { LOW_PRIORITY, NORMAL_PRIORITY, silentLogger, reconcileByKey, type KeyTrigger } from 'rxkube';
import { type WorkqueueInspector } from '../src/operators/reconcileByKey.js';
import { ownWritesCost } from './stormOwnWrites.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) console.warn('run with --expose-gc for steadier figures (npm run bench:storm does)');

const MB = 1024 * 1024;
let peakHeap = 0;
const sampleHeap = (): void => {
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
};
const resetHeap = (): number => {
  gc?.();
  peakHeap = 0;
  sampleHeap();
  return peakHeap;
};
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const rate = (perSecond: number) => (perSecond >= 1e6 ? `${fmt(perSecond / 1e6, 2)} M` : `${fmt(perSecond / 1e3, 0)} k`);

async function storm(): Promise<void> {
  const keys = 100;
  const triggers = 100_000;
  const batches = 100;
  const batchEveryMs = 10;
  const workMs = 10;
  const concurrency = 4;
  const lastTrigger = new Map<string, number>();
  const lastStart = new Map<string, number>();
  let runs = 0;
  const reconcile = (key: string) => {
    runs++;
    lastStart.set(key, performance.now());
    sampleHeap();
    return new Promise<void>((resolve) => setTimeout(resolve, workMs));
  };
  const input = new Observable<string>((subscriber) => {
    let batch = 0;
    const perBatch = triggers / batches;
    const timer = setInterval(() => {
      for (let i = 0; i < perBatch; i++) {
        const key = `ns/key-${(batch * perBatch + i) % keys}`;
        lastTrigger.set(key, performance.now());
        subscriber.next(key);
      }
      sampleHeap();
      if (++batch === batches) {
        clearInterval(timer);
        subscriber.complete();
      }
    }, batchEveryMs);
    return () => clearInterval(timer);
  });
  const base = resetHeap();
  const start = performance.now();
  await lastValueFrom(input.pipe(reconcileByKey(reconcile, { concurrency, logger: silentLogger })), {
    defaultValue: undefined,
  });
  const wall = performance.now() - start;
  const outcomes = runs;
  const capacity = (concurrency * wall) / workMs;
  const lost = [...lastTrigger].filter(([key, at]) => (lastStart.get(key) ?? -1) < at).length;
  console.log(`storm: ${fmt(triggers)} triggers over ${keys} keys in ${batches} batches, reconcile ${workMs} ms, concurrency ${concurrency}`);
  console.log(`  wall time                ${fmt(wall)} ms`);
  console.log(`  reconciles run           ${fmt(outcomes)}  (workers' capacity: ${concurrency} × wall / ${workMs} ms = ${fmt(capacity)}; ${fmt(outcomes / capacity, 2)} of it)`);
  console.log(`  triggers per reconcile   ${fmt(triggers / outcomes, 1)}  (a plain mergeMap would run all ${fmt(triggers)}: ${fmt((triggers * workMs) / concurrency / 1000)} s)`);
  console.log(`  lost updates             ${lost}  (keys whose last run started before their last trigger)`);
  console.log(`  peak heap                ${fmt(peakHeap / MB, 1)} MB  (${fmt((peakHeap - base) / MB, 1)} MB above the start)`);
}

type Contender = (keys: readonly string[], noop: (key: string) => void) => number;

/** One trigger object per key and priority, made once: what a controller's wiring would send, without the bench's allocations. */
const prioritized = new Map<string, readonly [KeyTrigger, KeyTrigger]>();
const withPriorities = (keys: readonly string[]): KeyTrigger[] =>
  keys.map((key, i) => {
    let pair = prioritized.get(key);
    if (pair === undefined) prioritized.set(key, (pair = [{ key, priority: LOW_PRIORITY }, { key, priority: NORMAL_PRIORITY }]));
    return pair[i & 1] as KeyTrigger;
  });
const prioritizedKeys = new Map<readonly string[], KeyTrigger[]>();

/** `triggers` through `reconcileByKey` with a no-op reconcile at concurrency 4: the runs it made. */
function throughReconcileByKey(triggers: readonly KeyTrigger[], noop: (key: string) => void): number {
  let n = 0;
  from(triggers)
    .pipe(
      reconcileByKey(
        (key) => {
          noop(key);
        },
        { concurrency: 4, logger: silentLogger },
      ),
    )
    .subscribe(() => {
      if ((++n & 0xffff) === 0) sampleHeap();
    });
  return n;
}

const contenders: [string, Contender][] = [
  ['reconcileByKey', (keys, noop) => throughReconcileByKey(keys, noop)],
  [
    'with priorities',
    (keys, noop) => {
      let triggers = prioritizedKeys.get(keys);
      if (triggers === undefined) prioritizedKeys.set(keys, (triggers = withPriorities(keys)));
      return throughReconcileByKey(triggers, noop);
    },
  ],
  [
    'mergeMap(…, 4)',
    (keys, noop) => {
      let n = 0;
      from(keys)
        .pipe(
          mergeMap((key) => {
            noop(key);
            return of(key);
          }, 4),
        )
        .subscribe(() => n++);
      return n;
    },
  ],
  [
    'Map dedupe loop',
    (keys, noop) => {
      const pending = new Map<string, boolean>();
      let n = 0;
      for (const key of keys) {
        if (pending.has(key)) continue;
        pending.set(key, true);
        noop(key);
        n++;
        pending.delete(key);
      }
      return n;
    },
  ],
  [
    'groupBy+exhaustMap',
    (keys, noop) => {
      let n = 0;
      from(keys)
        .pipe(
          // Each group ends on its first value, after exhaustMap has taken it:
          // with a synchronous reconcile the key is idle again at once.
          groupBy((key) => key, { duration: (group) => group }),
          mergeMap((group) =>
            group.pipe(
              exhaustMap((key) => {
                noop(key);
                return of(key);
              }),
            ),
          ),
        )
        .subscribe(() => n++);
      return n;
    },
  ],
];

function throughput(): void {
  const triggers = 1_000_000;
  const keys = Array.from({ length: triggers }, (_, i) => `ns/key-${i % 100}`);
  let calls = 0;
  const noop = () => {
    calls++;
  };
  const warm = keys.slice(0, 100_000);
  for (const [, run] of contenders) run(warm, noop);
  const rounds = 5;
  const perSecond = new Map<string, number[]>();
  const base = resetHeap();
  let peakOfOperator = 0;
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of contenders) {
      gc?.();
      peakHeap = 0;
      const start = process.hrtime.bigint();
      const n = run(keys, noop);
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      sampleHeap();
      if (name === 'reconcileByKey') peakOfOperator = Math.max(peakOfOperator, peakHeap);
      if (name === 'with priorities') peakHeap = 0;
      if (n !== triggers) throw new Error(`${name} produced ${n} outcomes for ${triggers} triggers`);
      perSecond.set(name, [...(perSecond.get(name) ?? []), triggers / seconds]);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const ours = median(perSecond.get('reconcileByKey') ?? []);
  console.log(`throughput: ${fmt(triggers)} triggers over 100 keys, no-op reconcile, concurrency 4 (median of ${rounds})`);
  for (const [name] of contenders) {
    const theirs = median(perSecond.get(name) ?? []);
    const ratio =
      name === 'reconcileByKey'
        ? ''
        : name === 'with priorities'
          ? `costs ${fmt((ours / theirs - 1) * 100, 1)} % against bare keys (each trigger a { key, priority } object)`
          : `reconcileByKey at ${fmt(ours / theirs, 2)}× its rate`;
    console.log(`  ${name.padEnd(20)} ${rate(theirs).padStart(8)} keys/s   ${ratio}`);
  }
  console.log(`  target ≥ 500 k keys/s through reconcileByKey: ${ours >= 500_000 ? 'met' : 'NOT met'}`);
  console.log(`  peak heap during reconcileByKey ${fmt(peakOfOperator / MB, 1)} MB  (${fmt((peakOfOperator - base) / MB, 1)} MB above the start)`);
  if (calls === 0) throw new Error('no reconcile ran');
}

async function distinctKeys(): Promise<void> {
  const n = 100_000;
  const keys = Array.from({ length: n }, (_, i) => `ns/object-${i}`);
  const base = resetHeap();
  let inspector: WorkqueueInspector | undefined;
  let peakKeys = 0;
  const start = performance.now();
  await lastValueFrom(
    from(keys as KeyTrigger[]).pipe(
      reconcileByKey(
        async () => {
          peakKeys = Math.max(peakKeys, inspector?.keys ?? 0);
          if (Math.random() < 0.001) sampleHeap();
        },
        { concurrency: 4, logger: silentLogger, inspect: (q) => (inspector = q) },
      ),
    ),
  );
  const wall = performance.now() - start;
  sampleHeap();
  const peak = peakHeap;
  gc?.();
  const after = process.memoryUsage().heapUsed;
  console.log(`memory: ${fmt(n)} distinct keys, promise reconcile, concurrency 4: ${fmt(wall)} ms (${rate((n / wall) * 1000)} keys/s)`);
  console.log(`  queue state: peak ${fmt(peakKeys)} keys, after ${inspector?.keys ?? '?'} keys`);
  console.log(`  heap: peak ${fmt((peak - base) / MB, 1)} MB above the start, after gc ${fmt((after - base) / MB, 1)} MB`);
}

/** 100,000 distinct keys queued at once and drained by a promise reconcile: keys/s. */
async function drain(triggers: readonly KeyTrigger[]): Promise<number> {
  gc?.();
  let runs = 0;
  const start = process.hrtime.bigint();
  await lastValueFrom(from(triggers).pipe(reconcileByKey(async () => void runs++, { concurrency: 4, logger: silentLogger })));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (runs !== triggers.length) throw new Error(`drained ${runs} of ${triggers.length} keys`);
  return triggers.length / seconds;
}

async function queuedWithPriorities(): Promise<void> {
  const n = 100_000;
  const keys = Array.from({ length: n }, (_, i) => `ns/object-${i}`);
  const triggers = withPriorities(keys);
  await drain(keys.slice(0, 10_000));
  await drain(triggers.slice(0, 10_000));
  const rounds = 5;
  const bare: number[] = [];
  const prioritizedRates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    bare.push(await drain(keys));
    prioritizedRates.push(await drain(triggers));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const [a, b] = [median(bare), median(prioritizedRates)];
  const cost = (a / b - 1) * 100;
  console.log(`queued: ${fmt(n)} distinct keys queued at once, promise reconcile, concurrency 4 (median of ${rounds} interleaved rounds)`);
  console.log(`  bare keys (one lane)        ${rate(a).padStart(8)} keys/s`);
  console.log(`  with priorities (two lanes) ${rate(b).padStart(8)} keys/s   costs ${fmt(cost, 1)} %; goal ≤ 5 %: ${cost <= 5 ? 'met' : 'NOT met'}`);
}

await storm();
throughput();
await distinctKeys();
await queuedWithPriorities();
ownWritesCost();
