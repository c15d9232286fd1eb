/**
 * The store micro-benchmark: how the cost of one event through
 * `deltas() → indexer()` changes as the store grows from 1k to 1M objects.
 *
 * For each size it lists N objects, then modifies each once (2N events), and
 * repeats with fresh stores until at least 2M events have gone through, so
 * small sizes are not timed on a cold JIT. The reference, measured in the
 * same run on the same events, is a bare `Map.set` of each object under its
 * key: the floor for any keyed cache. Figures: ns per event, the ratio to the
 * reference, and the ratio of each size's per-event time to the 1k one
 * (issue target: 1M within 2x of 1k).
 *
 * Run: npm run bench:store
 */
import { Subject } from 'rxjs';
import { deltas, indexer, objectKey, type KubeObject, type ListWatchEvent } from 'rxkube';

const sizes = [1_000, 10_000, 100_000, 1_000_000];
const minEventsPerSize = 2_000_000;

function makeEvents(n: number): ListWatchEvent[] {
  const events: ListWatchEvent[] = [{ type: 'Restart' }];
  const namespaces = 50;
  for (let i = 0; i < n; i++) {
    events.push({ type: 'Listed', object: object(i, namespaces, 1) });
  }
  events.push({ type: 'Synced', resourceVersion: String(n) });
  for (let i = 0; i < n; i++) {
    events.push({ type: 'Modified', object: object(i, namespaces, 2) });
  }
  return events;
}

function object(i: number, namespaces: number, version: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `cm-${i}`,
      namespace: `ns-${i % namespaces}`,
      uid: `uid-${i}`,
      resourceVersion: String(version * 10_000_000 + i),
      labels: { app: `app-${i % 100}` },
    },
  };
}

function timePipeline(events: ListWatchEvent[]): number {
  const input = new Subject<ListWatchEvent>();
  let seen = 0;
  input.pipe(deltas(), indexer()).subscribe(() => seen++);
  const start = process.hrtime.bigint();
  for (const event of events) input.next(event);
  const elapsed = Number(process.hrtime.bigint() - start);
  if (seen < events.length - 2) throw new Error(`only ${seen} of ${events.length} events came out`);
  return elapsed;
}

function timeReference(events: ListWatchEvent[]): number {
  const map = new Map<string, KubeObject>();
  const start = process.hrtime.bigint();
  for (const event of events) {
    if ('object' in event) map.set(objectKey(event.object), event.object);
  }
  const elapsed = Number(process.hrtime.bigint() - start);
  if (map.size === 0) throw new Error('reference stored nothing');
  return elapsed;
}

function measure(n: number): { pipelineNs: number; referenceNs: number; events: number } {
  const events = makeEvents(n);
  const rounds = Math.max(1, Math.ceil(minEventsPerSize / events.length));
  timePipeline(events.slice(0, Math.min(events.length, 20_000))); // warm the JIT
  let pipeline = 0;
  let reference = 0;
  for (let r = 0; r < rounds; r++) {
    gc?.();
    pipeline += timePipeline(events);
    gc?.();
    reference += timeReference(events);
  }
  const total = rounds * events.length;
  return { pipelineNs: pipeline / total, referenceNs: reference / total, events: total };
}

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) console.warn('run with --expose-gc for steadier figures (npm run bench:store does)');

const results = sizes.map((n) => ({ n, ...measure(n) }));
const base = results[0]!.pipelineNs;
console.log('objects     events   deltas→indexer ns/event   Map.set ns/event   ratio to Map.set   vs 1k');
for (const r of results) {
  console.log(
    `${String(r.n).padStart(9)} ${String(r.events).padStart(10)} ${r.pipelineNs.toFixed(1).padStart(22)} ${r.referenceNs.toFixed(1).padStart(18)} ${(r.pipelineNs / r.referenceNs).toFixed(2).padStart(18)} ${(r.pipelineNs / base).toFixed(2).padStart(7)}x`,
  );
}
const worst = results[results.length - 1]!.pipelineNs / base;
console.log(`per-event time at 1M is ${worst.toFixed(2)}x the time at 1k (target: within 2x) — ${worst <= 2 ? 'met' : 'NOT met'}`);
