/**
 * What a cached object costs in memory, in the forms a compact cache could
 * keep it (issue 12, item 2), as a ratio to its JSON: 20,000 pods of about
 * 2 KB (bench/support/smallPods.ts), each form built from the JSON text
 * and kept in an array; heap plus external buffers after full GCs, less
 * the same before. The forms: the parsed object as is, without
 * managedFields, decoded metadata plus the rest as a JSON string (the
 * compact form the issue suggests) or Buffer, the JSON text alone,
 * metadata only, and what `listWatch({ compact: true })` keeps (its codec's
 * views: metadata decoded with its nested values shared between pods that
 * have equal ones, the rest as text, or as bytes in slabs outside the heap
 * once `deltas()` holds them), with and without managedFields.
 *
 * Run: npm run bench:forms
 */
import { CompactCodec } from '../src/compact/compactCodec.js';
import { smallPod } from './support/smallPods.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const N = Number(process.env.BENCH_OBJECTS ?? 20_000);
const texts = Array.from({ length: N }, (_, i) => JSON.stringify(smallPod(i, i + 1)));
const jsonBytes = texts.reduce((n, t) => n + t.length, 0);

type Pod = { metadata: Record<string, unknown> } & Record<string, unknown>;

function settled(): number {
  for (let i = 0; i < 3; i++) gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

function measure(name: string, build: (text: string) => unknown, from: string[] = texts): number {
  const bytes = from.reduce((n, t) => n + t.length, 0);
  const before = settled();
  const kept = from.map(build);
  const ratio = (settled() - before) / bytes;
  console.log(`${name.padEnd(64)} ${ratio.toFixed(2)} × JSON   (${kept.length} kept)`);
  return ratio;
}

const withoutManagedFields = (text: string): Pod => {
  const pod = JSON.parse(text) as Pod;
  delete pod.metadata.managedFields;
  return pod;
};

console.log(`${N} pods of ${texts[0]?.length} bytes of JSON (${(jsonBytes / 1e6).toFixed(1)} MB)`);
const full = measure('parsed object', (t) => JSON.parse(t));
const dropped = measure('parsed object, managedFields dropped', withoutManagedFields);
const compact = measure('decoded metadata + the rest as a JSON string', (t) => {
  const { metadata, ...body } = JSON.parse(t) as Pod;
  return { metadata, body: JSON.stringify(body) };
});
const compactDropped = measure('the same, managedFields dropped', (t) => {
  const { metadata, ...body } = withoutManagedFields(t);
  return { metadata, body: JSON.stringify(body) };
});
measure('the same, the rest as a Buffer', (t) => {
  const { metadata, ...body } = withoutManagedFields(t);
  return { metadata, body: Buffer.from(JSON.stringify(body)) };
});
measure('the JSON text alone (a flat copy)', (t) => ` ${t}`.slice(1));
measure('metadata only', (t) => ({ metadata: (JSON.parse(t) as Pod).metadata }));
measure('metadata only, managedFields dropped', (t) => ({ metadata: withoutManagedFields(t).metadata }));
// One codec for all, as one source has: equal nested metadata values are shared between its objects.
const codec = new CompactCodec({ dropManagedFields: false, transformed: false });
const cache = measure('listWatch({ compact: true }): its compact views', (t) => codec.item(Buffer.from(t)));
// Held by deltas(), which says which objects are current: the codec keeps their bodies in slabs outside the heap.
const slabCodec = new CompactCodec({ dropManagedFields: false, transformed: false });
slabCodec.shared.slabs.active = true;
measure('the same, held by deltas(): bodies in slabs outside the heap', (t) => slabCodec.item(Buffer.from(t)));
const dropCodec = new CompactCodec({ dropManagedFields: true, transformed: false });
measure('the same, managedFields dropped on the bytes', (t) => dropCodec.item(Buffer.from(t)));
// Pods of one ReplicaSet as a cluster has them: each its own managedFields time (created and updated at different moments).
const timed = Array.from({ length: N }, (_, i) => {
  const p = smallPod(i, i + 1) as Pod & { metadata: { managedFields: { time: string }[] } };
  (p.metadata.managedFields[0] as { time: string }).time = `2026-11-29T08:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`;
  return JSON.stringify(p);
});
measure('parsed object, managedFields times differing', (t) => JSON.parse(t), timed);
const timedCodec = new CompactCodec({ dropManagedFields: false, transformed: false });
measure('compact views, managedFields times differing', (t) => timedCodec.item(Buffer.from(t)), timed);
// The worst case for sharing: every pod its own owner, labels, annotations and managedFields (a pod per ReplicaSet).
const alone = Array.from({ length: N }, (_, i) => {
  const p = smallPod(i, i + 1) as Pod & { metadata: { labels: Record<string, string>; annotations: Record<string, string>; ownerReferences: { uid: string }[]; managedFields: { time: string }[] } };
  p.metadata.labels['pod-template-hash'] = `h${i}`;
  p.metadata.annotations['kubectl.kubernetes.io/restartedAt'] = `2026-11-29T08:00:${i}Z`;
  (p.metadata.ownerReferences[0] as { uid: string }).uid = `owner-${i}`;
  (p.metadata.managedFields[0] as { time: string }).time = `2026-11-29T08:00:${i}Z`;
  // The owner's uid in managedFields' fieldsV1 too, as it would be.
  return JSON.stringify(p).replaceAll('0d6f4c1e-8a52-4a43-b0f6-3c1f2b7e9a10', `owner-${i}`);
});
measure('parsed object, no two pods sharing owner, labels, managedFields', (t) => JSON.parse(t), alone);
const aloneCodec = new CompactCodec({ dropManagedFields: false, transformed: false });
measure('compact views, no two pods sharing them', (t) => aloneCodec.item(Buffer.from(t)), alone);
console.log(`compact / parsed: ${(compact / full).toFixed(2)}; compact without managedFields / parsed without: ${(compactDropped / dropped).toFixed(2)}; compact cache / parsed: ${(cache / full).toFixed(2)}`);
