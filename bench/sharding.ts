/**
 * What sharding buys: reconcile throughput of one sharded controller run
 * as 1, 2 and 3 replicas on the same workload, and what each replica caches.
 *
 * The embedded API server holds BENCH_OBJECTS ConfigMaps (default 3,000);
 * the replicas run in this process, each with its own informers (the
 * primary cached by `shardSelector`, which the server honours), two
 * reconciles in flight, and a reconcile that waits BENCH_WORK_MS (default
 * 5 ms, an API call's worth) doing nothing. Once every slot has an owner,
 * every object is changed once, and the time until every key has been
 * reconciled again gives the throughput. Ratios are to 1 replica, in the
 * same run. In one process the replicas share one CPU and one event loop:
 * the figure shows the reconciles' waits overlapping, an upper bound on
 * CPU-bound work, and the cache split, which is the same in any layout.
 *
 * Run: npm run bench:sharding (BENCH_OBJECTS=300 for a short run)
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { controller, silentLogger, type Controller } from 'rxkube';
import { startApiServer } from 'rxkube/testing';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 3_000);
const WORK_MS = Number(process.env.BENCH_WORK_MS ?? 5);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function measure(replicas: number): Promise<{ perSecond: number; cached: number[] }> {
  const server = await startApiServer({ logger: silentLogger });
  const api = server.kubeConfig().makeApiClient(CoreV1Api);
  try {
    const names = Array.from({ length: OBJECTS }, (_, i) => `cm-${i}`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(names.slice(i, i + 50).map((name) => api.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name } } })));
    }
    const seen = new Map<string, number>();
    let round = 0;
    const stop = new AbortController();
    const running: Controller[] = [];
    for (let r = 0; r < replicas; r++) {
      const c = controller({
        name: 'bench',
        kubeConfig: server.kubeConfig(),
        logger: silentLogger,
        signal: stop.signal,
        concurrency: 2,
        for: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default' },
        sharding: { replicas, by: 'uid', identity: `replica-${r}`, leaseDuration: 2_000, renewDeadline: 1_500, retryPeriod: 250 },
        reconcile: async (key) => {
          await sleep(WORK_MS);
          seen.set(key, round);
        },
      });
      c.subscribe({ error: (err: unknown) => process.stderr.write(`bench: replica ${r} failed: ${String(err)}\n`) });
      running.push(c);
    }
    const owned = () => running.reduce((n, c) => n + (c.shards()?.active.size ?? 0), 0) === 256 && running.every((c) => c.shards()?.members.length === replicas);
    await until(() => owned() && running.reduce((n, c) => n + c.store.size, 0) === OBJECTS && seen.size === OBJECTS, 'the first pass');
    round = 1;
    const started = performance.now();
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(names.slice(i, i + 50).map((name) => api.replaceNamespacedConfigMap({ namespace: 'default', name, body: { metadata: { name }, data: { round: '1' } } })));
    }
    await until(() => [...seen.values()].every((r) => r === 1), 'every key reconciled again');
    const seconds = (performance.now() - started) / 1000;
    const cached = running.map((c) => c.store.size);
    stop.abort();
    await sleep(300);
    return { perSecond: OBJECTS / seconds, cached };
  } finally {
    await server.close();
  }
}

const results = [];
for (const replicas of [1, 2, 3]) results.push({ replicas, ...(await measure(replicas)) });
const base = results[0]!.perSecond;
process.stdout.write(`sharded reconcile throughput, ${OBJECTS} ConfigMaps, ${WORK_MS} ms of waiting per reconcile, 2 in flight per replica\n`);
for (const r of results) {
  process.stdout.write(
    `  ${r.replicas} replica${r.replicas > 1 ? 's' : ' '}: ${r.perSecond.toFixed(0).padStart(6)} reconciles/s  ×${(r.perSecond / base).toFixed(2)}   cached per replica: ${r.cached.join(', ')} (${r.cached.map((n) => `${((100 * n) / OBJECTS).toFixed(0)} %`).join(', ')})\n`,
  );
}
