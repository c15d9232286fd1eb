/**
 * What read-your-own-writes costs the workqueue (part of `npm run
 * bench:storm`): `reconcileByKey` alone against the same queue inside the
 * controller's hold (`holdOwnWrites`: runs tracked, triggers gated), on
 * the throughput workload of the storm bench (1,000,000 triggers over 100
 * keys, no-op reconcile, concurrency 4). Three contenders, interleaved in
 * each of 5 rounds, medians compared in the same run:
 * - `off`: the queue alone (`readYourWrites: false`);
 * - `on, no writes`: the hold around it, runs that write nothing (what every
 *   controller pays);
 * - `on, each run writes`: every run records a write of its key's object,
 *   and the store shows it before the next trigger (the cache keeping up):
 *   a record, an expectation, a settle per run.
 * The decision rule: on by default if `on, each run writes` costs under 5 %.
 */
import { asyncScheduler, from } from 'rxjs';
import { reconcileByKey, silentLogger } from 'rxkube';
import { holdOwnWrites } from '../src/controller/holdOwnWrites.js';
import { OwnWrites, type OwnWrite } from '../src/controller/ownWrites.js';
import type { Reconciler } from '../src/operators/reconciler.js';
import { Store } from '../src/store/store.js';
import type { StoreEvent } from '../src/store/indexer.js';
import type { KubeObject } from '../src/types.js';

const gc = (globalThis as { gc?: () => void }).gc;
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

type Contender = (keys: readonly string[]) => number;

/** What a run that writes hands over: the write as its answer says, and the event the watch brings back. */
function written(key: string, resourceVersion: string): { write: OwnWrite; event: StoreEvent } {
  const slash = key.indexOf('/');
  const namespace = key.slice(0, slash);
  const name = key.slice(slash + 1);
  const object: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name, resourceVersion, uid: key } };
  return { write: { apiVersion: 'v1', kind: 'ConfigMap', namespace, name, resourceVersion, uid: key, gone: false }, event: { type: 'Updated', key, object } as StoreEvent };
}

/**
 * The queue; with `hold`, inside the hold. `write`: each run makes what a
 * write and its watch event give (in both, so that the difference is what
 * the hold does with them), and with the hold, records it and hears the
 * event, as the client and the wiring would.
 */
function contender(hold: boolean, write: boolean): Contender {
  return (keys) => {
    const store = new Store();
    const writes = new OwnWrites([{ group: '', kind: 'ConfigMap', lister: store.lister }], asyncScheduler, 10_000);
    const held = holdOwnWrites(writes, { scheduler: asyncScheduler, logger: silentLogger });
    let version = 0;
    let made = 0;
    const reconcile: Reconciler = (key) => {
      if (!write) return;
      const { write: w, event } = written(key, String(++version));
      made++;
      if (!hold) return;
      writes.record(key, w);
      writes.observe(0, event);
    };
    const queue = (r: Reconciler) => reconcileByKey(r, { concurrency: 4, logger: silentLogger });
    let n = 0;
    from(keys)
      .pipe(hold ? held.around(queue(held.reconcile(reconcile))) : queue(reconcile))
      .subscribe(() => n++);
    if (write && made !== n) throw new Error('a run did not write');
    return n;
  };
}

export function ownWritesCost(): void {
  const triggers = 1_000_000;
  const keys = Array.from({ length: triggers }, (_, i) => `ns/key-${i % 100}`);
  const contenders: [string, Contender][] = [
    ['off, no writes', contender(false, false)],
    ['on, no writes', contender(true, false)],
    ['off, each run writes', contender(false, true)],
    ['on, each run writes', contender(true, true)],
  ];
  const warm = keys.slice(0, 100_000);
  for (const [, run] of contenders) run(warm);
  const rounds = 5;
  const perSecond = new Map<string, number[]>(contenders.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of contenders) {
      gc?.();
      const start = process.hrtime.bigint();
      const n = run(keys);
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      if (n !== triggers) throw new Error(`${name} produced ${n} outcomes for ${triggers} triggers`);
      perSecond.get(name)?.push(triggers / seconds);
    }
  }
  console.log(`read-your-own-writes: ${fmt(triggers)} triggers over 100 keys, no-op reconcile, concurrency 4 (medians of ${rounds} interleaved rounds)`);
  let worst = 0;
  for (const [name] of contenders) {
    const rate = median(perSecond.get(name) ?? []);
    // Each "on" against the "off" with the same runs.
    const base = median(perSecond.get(name.replace('on,', 'off,')) ?? []);
    const cost = (1 - rate / base) * 100;
    if (name.startsWith('on')) worst = Math.max(worst, cost);
    console.log(`  ${name.padEnd(22)} ${fmt(rate / 1e6, 2).padStart(6)} M keys/s${name.startsWith('on') ? `   cost ${fmt(cost, 1)} % of off` : ''}`);
  }
  console.log(`  on by default if under 5 %: ${worst < 5 ? 'yes' : 'NO'} (worst ${fmt(worst, 1)} %)`);
}
