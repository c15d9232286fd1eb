import { expect } from 'chai';
import fc from 'fast-check';
import { TestScheduler } from 'rxjs/testing';
import type { KubeObject, ListWatchEvent } from 'rxkube';
import { memoryClient, runVirtualTime, type MemoryClient } from 'rxkube/testing';

type Op =
  | { kind: 'create'; name: string; web: boolean }
  | { kind: 'relabel'; name: string; web: boolean }
  | { kind: 'edit'; name: string; value: number }
  | { kind: 'finalize'; name: string }
  | { kind: 'unfinalize'; name: string }
  | { kind: 'remove'; name: string };

const name = fc.constantFrom('a', 'b', 'c');
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), name, web: fc.boolean() }),
  fc.record({ kind: fc.constant('relabel' as const), name, web: fc.boolean() }),
  fc.record({ kind: fc.constant('edit' as const), name, value: fc.nat(3) }),
  fc.record({ kind: fc.constant('finalize' as const), name }),
  fc.record({ kind: fc.constant('unfinalize' as const), name }),
  fc.record({ kind: fc.constant('remove' as const), name }),
);

const ref = (n: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: n, namespace: 'default' });
const labels = (web: boolean) => ({ tier: web ? 'web' : 'batch' });

function perform(client: MemoryClient, o: Op): Promise<unknown> {
  switch (o.kind) {
    case 'create':
      return client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: o.name, namespace: 'default', labels: labels(o.web) } });
    case 'relabel':
      return client.patchMerge(ref(o.name), { metadata: { labels: labels(o.web) } });
    case 'edit':
      return client.patchMerge(ref(o.name), { data: { v: String(o.value) } });
    case 'finalize':
      return client.patchMerge(ref(o.name), { metadata: { finalizers: ['example.com/hold'] } });
    case 'unfinalize':
      return client.patchMerge(ref(o.name), { metadata: { finalizers: null } });
    case 'remove':
      return client.remove(ref(o.name));
  }
}

/** What a store fed by a watch would hold: resourceVersion by name; and whether any object went back in time. */
function follow(): { state: Map<string, string>; regressed: string[]; apply: (e: ListWatchEvent) => void } {
  const state = new Map<string, string>();
  const regressed: string[] = [];
  return {
    state,
    regressed,
    apply(e) {
      if (!('object' in e)) return;
      const key = e.object.metadata.name as string;
      const rv = e.object.metadata.resourceVersion as string;
      const before = state.get(key);
      if (before !== undefined && Number(rv) <= Number(before)) regressed.push(`${key}: ${before} -> ${rv}`);
      if (e.type === 'Deleted') state.delete(key);
      else state.set(key, rv);
    },
  };
}

const stored = (objects: KubeObject[]) => new Map(objects.map((o) => [o.metadata.name as string, o.metadata.resourceVersion as string]));

describe('memoryClient watches (property)', () => {
  it('a store fed by a watch, plain or with a label selector, ends up holding exactly what the cluster holds, never going back in time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), fc.array(op, { maxLength: 5 }), async (before, during) => {
        const scheduler = new TestScheduler(() => undefined);
        const client = memoryClient({ scheduler });
        for (const o of before) await perform(client, o).catch(() => undefined);
        const all = follow();
        const web = follow();
        client.watch({ version: 'v1', resource: 'configmaps' }).subscribe(all.apply);
        client.watch({ version: 'v1', resource: 'configmaps' }, { labelSelector: 'tier=web' }).subscribe(web.apply);
        during.forEach((o, i) => scheduler.schedule(() => void perform(client, o).catch(() => undefined), i));
        await runVirtualTime(scheduler);
        const everything = client.objects('v1', 'ConfigMap');
        expect(all.state).to.deep.equal(stored(everything));
        expect(web.state).to.deep.equal(stored(everything.filter((o) => o.metadata.labels?.tier === 'web')));
        expect([...all.regressed, ...web.regressed]).to.deep.equal([]);
      }),
      { numRuns: 200 },
    );
  });
});
