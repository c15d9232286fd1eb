/**
 * What the metadata interner of a metadata-only source costs per object
 * (see "Memory of the read path" in docs/benchmarks.md): `JSON.parse` of a
 * metadata-only pod of about 1 KB (the bench:watch fixture), with and
 * without `dropManagedFields`, then interned or not. Variants interleaved,
 * median of BENCH_ROUNDS (default 9); printed as µs per object and the
 * cost of interning as a ratio to the parse alone, measured in the same run.
 *
 * Run: npm run bench:intern
 */
import { MetadataInterner } from '../src/compact/metadataInterner.js';
import { dropManagedFields } from '../src/sources/transforms.js';
import type { KubeObject } from '../src/types.js';
import { smallPod } from './support/smallPods.js';

const PODS = 10_000;
const PASSES = 5;
const rounds = Number(process.env.BENCH_ROUNDS ?? 9);
const lines = Array.from({ length: PODS }, (_, i) => {
  const { metadata } = smallPod(i, i + 1) as { metadata: unknown };
  return JSON.stringify({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata });
});

/** µs per object of parsing every line PASSES times, shaped as a source would. */
function run(drop: boolean, intern: boolean): number {
  const interner = new MetadataInterner();
  let sink = 0;
  const start = performance.now();
  for (let pass = 0; pass < PASSES; pass++) {
    for (const line of lines) {
      let object = JSON.parse(line) as KubeObject;
      if (drop) object = dropManagedFields(object);
      if (intern) object = interner.intern(object);
      sink += object.metadata.name?.length ?? 0;
    }
  }
  const us = ((performance.now() - start) * 1000) / (PODS * PASSES);
  if (sink === 0) throw new Error('nothing parsed');
  return us;
}

const variants = [
  { name: 'parse, managedFields kept', drop: false, intern: false },
  { name: 'parse + intern, managedFields kept', drop: false, intern: true },
  { name: 'parse, dropManagedFields', drop: true, intern: false },
  { name: 'parse + intern, dropManagedFields', drop: true, intern: true },
];
const times: number[][] = variants.map(() => []);
for (let round = 0; round < rounds; round++) variants.forEach((v, i) => times[i]?.push(run(v.drop, v.intern)));
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number;
const medians = times.map(median);
console.log(`${PODS} metadata-only pods of ${lines[0]?.length} bytes, ${PASSES} passes, median of ${rounds} interleaved rounds (a shared machine: read the ratios)`);
variants.forEach((v, i) => console.log(`${v.name.padEnd(36)} ${(medians[i] as number).toFixed(2).padStart(6)} µs/object`));
for (const [plain, interned, what] of [[0, 1, 'managedFields kept'], [2, 3, 'dropManagedFields']] as const) {
  const cost = (medians[interned] as number) - (medians[plain] as number);
  console.log(`interning, ${what}: +${cost.toFixed(2)} µs/object, ${((medians[interned] as number) / (medians[plain] as number)).toFixed(2)}× the parse alone`);
}
