/**
 * What a cached object costs in memory, in the forms a compact cache could
 * keep it (issue 12, item 2), as a ratio to its JSON: 20,000 pods of about
 * 2 KB (bench/support/smallPods.ts), each form built from the JSON text
 * and kept in an array; heap plus external buffers after full GCs, less
 * the same before. The forms: the parsed object as is, without
 * managedFields, decoded metadata plus the rest as a JSON string (the
 * compact form the issue suggests) or Buffer, the JSON text alone, and
 * metadata only.
 *
 * Run: npm run bench:forms
 */
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

function measure(name: string, build: (text: string) => unknown): number {
  const before = settled();
  const kept = texts.map(build);
  const ratio = (settled() - before) / jsonBytes;
  console.log(`${name.padEnd(56)} ${ratio.toFixed(2)} × JSON   (${kept.length} kept)`);
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
console.log(`compact / parsed: ${(compact / full).toFixed(2)}; compact without managedFields / parsed without: ${(compactDropped / dropped).toFixed(2)}`);
