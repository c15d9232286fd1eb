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
import { OwnWrites } from '../src/controller/ownWrites.js';
import type { Reconciler } from '../src/operators/reconciler.js';
import { Store } from '../src/store/store.js';
import type { StoreEvent } from '../src/store/indexer.js';
import type { KubeObject } from '../src/types.js';

const gc = (globalThis as { gc?: () => void }).gc;
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

type Contender = (keys: readonly string[]) => number;

/** The queue alone. */
const off: Contender = (keys) => {
  let n = 0;
  from(keys)
    .pipe(reconcileByKey(() => undefined, { concurrency: 4, logger: silentLogger }))
    .subscribe(() => n++);
  return n;
};

/** The queue in the hold; `write` says whether each run writes its key's ConfigMap, which the store then shows. */
function on(write: boolean): Contender {
  return (keys) => {
    const store = new Store();
    const writes = new OwnWrites([{ group: '', kind: 'ConfigMap', lister: store.lister }], asyncScheduler, 10_000);
    const hold = holdOwnWrites(writes, { scheduler: asyncScheduler, logger: silentLogger });
    let version = 0;
    const reconcile: Reconciler = (key) => {
      if (!write) return;
      const slash = key.indexOf('/');
      const resourceVersion = String(++version);
      writes.record(key, { apiVersion: 'v1', kind: 'ConfigMap', namespace: key.slice(0, slash), name: key.slice(slash + 1), resourceVersion, uid: key, gone: false });
      // The watch brings it back before the next trigger: the store applies it, then the hold hears of it.
      const object: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: key.slice(0, slash), name: key.slice(slash + 1), resourceVersion, uid: key } };
      const event = { type: 'Updated', key, object, store: store.lister } as StoreEvent;
      writes.observe(0, event);
    };
    let n = 0;
    from(keys)
      .pipe(hold.around(reconcileByKey(hold.reconcile(reconcile), { concurrency: 4, logger: silentLogger })))
      .subscribe(() => n++);
    return n;
  };
}

export function ownWritesCost(): void {
  const triggers = 1_000_000;
  const keys = Array.from({ length: triggers }, (_, i) => `ns/key-${i % 100}`);
  const contenders: [string, Contender][] = [
    ['off', off],
    ['on, no writes', on(false)],
    ['on, each run writes', on(true)],
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
  const base = median(perSecond.get('off') ?? []);
  console.log(`read-your-own-writes: ${fmt(triggers)} triggers over 100 keys, no-op reconcile, concurrency 4 (medians of ${rounds} interleaved rounds)`);
  let worst = 0;
  for (const [name] of contenders) {
    const rate = median(perSecond.get(name) ?? []);
    const cost = (1 - rate / base) * 100;
    if (name !== 'off') worst = Math.max(worst, cost);
    console.log(`  ${name.padEnd(22)} ${fmt(rate / 1e6, 2).padStart(6)} M keys/s${name === 'off' ? '' : `   cost ${fmt(cost, 1)} % of off`}`);
  }
  console.log(`  on by default if under 5 %: ${worst < 5 ? 'yes' : 'NO'} (worst ${fmt(worst, 1)} %)`);
}
