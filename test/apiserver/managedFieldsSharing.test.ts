import { expect } from 'chai';
import fc from 'fast-check';
import { shapeFor } from '../../src/apiserver/api/builtinSchema.js';
import { FieldsV1Cache } from '../../src/apiserver/writes/fieldsV1Cache.js';
import { deepFreeze } from '../../src/util/json.js';
import type { JsonObject } from '../../src/apiserver/writes/jsonValue.js';
import { recordManagedFields, serverSideApply } from '../../src/apiserver/writes/serverSideApply.js';
import { compareValues, TypedValueError } from '../../src/apiserver/writes/structuredMerge.js';

// Writes share with the stored object what they keep, and the server keeps the FieldsV1 of stored
// objects decoded: none of it may change what a write records.

const T0 = '2024-01-01T00:00:00Z';
const T1 = '2024-01-01T00:01:00Z';
const podShape = shapeFor({ group: '', kind: 'Pod' });

function pod(containers: unknown, phase = 'Pending'): JsonObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'u1' }, spec: { containers }, status: { phase } } as JsonObject;
}

describe('compareValues on values that share parts', () => {
  it('finds nothing changed in a shared part, and the same changes as on an unshared copy', () => {
    const before = pod([{ name: 'a', image: 'x' }]);
    const after = { ...before, status: { phase: 'Running' } };
    const comparison = compareValues(before, after, podShape);
    expect([...comparison.modified]).to.deep.equal(['f:status\u0000f:phase']);
    expect(comparison).to.deep.equal(compareValues(structuredClone(before), after, podShape));
  });

  it('refuses a shared list of items that cannot be keyed even where there is nothing to look into below them', () => {
    const before = { ...pod([{ name: 'a' }]), status: { conditions: [{ type: 'Ready' }, { status: 'True' }] } } as JsonObject;
    const after = { ...before, spec: { containers: [{ name: 'a', image: 'y' }] } };
    const message = 'element 1: associative list with keys has an element that omits key field "type"';
    expect(() => compareValues(structuredClone(before), after, podShape)).to.throw(TypedValueError, message);
    expect(() => compareValues(before, after, podShape)).to.throw(TypedValueError, message);
  });

  it('still refuses a list in a shared part that cannot be keyed, as it does in an unshared one', () => {
    const before = pod([5]);
    const after = { ...before, status: { phase: 'Running' } };
    expect(() => compareValues(structuredClone(before), after, podShape)).to.throw(TypedValueError, 'expected an object in an associative list');
    expect(() => compareValues(before, after, podShape)).to.throw(TypedValueError, 'expected an object in an associative list');
  });
});

describe('compareValues on equal copies', () => {
  it('finds nothing changed in an equal copy, and still refuses a list in it that cannot be keyed', () => {
    const before = pod([{ name: 'a', image: 'x' }]);
    const comparison = compareValues(before, structuredClone(before), podShape);
    expect([comparison.added.size, comparison.modified.size, comparison.removed.size]).to.deep.equal([0, 0, 0]);
    const unkeyed = pod([{ image: 'x' }]);
    expect(() => compareValues(unkeyed, structuredClone(unkeyed), podShape)).to.throw(TypedValueError, 'omits key field "name"');
  });
});

describe('recordManagedFields and serverSideApply with the server cache', () => {
  it('leave frozen inputs as they are (a change to one would throw)', () => {
    const cache = new FieldsV1Cache();
    const created = deepFreeze(recordManagedFields({ before: undefined, after: pod([{ name: 'a', image: 'x' }]), manager: 'c', operation: 'Update', now: T0, fieldsCache: cache }) as JsonObject);
    const next = deepFreeze({ ...created, metadata: { ...(created.metadata as JsonObject), labels: { a: '1' } } });
    const updated = recordManagedFields({ before: created, after: next, manager: 'c', operation: 'Update', now: T1, fieldsCache: cache }) as JsonObject;
    expect(updated.metadata).to.have.deep.property('labels', { a: '1' });
    const applied = deepFreeze({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'y' }] } });
    const result = serverSideApply({ live: deepFreeze(updated), applied, manager: 'kubectl', force: true, kind: { group: '', kind: 'Pod' }, builtin: true, now: T1, fieldsCache: cache });
    expect(result.object).to.have.nested.property('spec.containers[0].image', 'y');
  });

  it('keeps the FieldsV1 object of a manager whose fields did not change, rather than encoding it again', () => {
    const cache = new FieldsV1Cache();
    const created = deepFreeze(recordManagedFields({ before: undefined, after: pod([{ name: 'a', image: 'x' }]), manager: 'c', operation: 'Update', now: T0, fieldsCache: cache }) as JsonObject);
    const next = { ...created, spec: { containers: [{ name: 'a', image: 'y' }] } };
    const updated = recordManagedFields({ before: created, after: next, manager: 'c', operation: 'Update', now: T1, fieldsCache: cache }) as JsonObject;
    const fieldsOf = (obj: JsonObject): unknown => ((obj.metadata as JsonObject).managedFields as JsonObject[])[0]?.fieldsV1;
    expect(fieldsOf(updated)).to.equal(fieldsOf(created));
    expect(((updated.metadata as JsonObject).managedFields as JsonObject[])[0]).to.include({ time: T1 });
  });

  it('take a managedFields list sent back as it was read for the live one, keeping the FieldsV1 objects of unchanged managers', () => {
    const cache = new FieldsV1Cache();
    const created = deepFreeze(recordManagedFields({ before: undefined, after: pod([{ name: 'a', image: 'x' }]), manager: 'c', operation: 'Update', now: T0, fieldsCache: cache }) as JsonObject);
    const readBack = structuredClone(created);
    (readBack.metadata as JsonObject).labels = { a: '1' };
    const updated = recordManagedFields({ before: created, after: readBack, manager: 'editor', operation: 'Update', now: T1, fieldsCache: cache }) as JsonObject;
    const entries = (updated.metadata as JsonObject).managedFields as JsonObject[];
    expect(entries.map((e) => e.manager)).to.deep.equal(['c', 'editor']);
    expect(entries[0]?.fieldsV1).to.equal(((created.metadata as JsonObject).managedFields as JsonObject[])[0]?.fieldsV1);
  });

  it('keep the FieldsV1 object of an apply manager that applies the same fields again', () => {
    const cache = new FieldsV1Cache();
    const config = (image: string): JsonObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image }] } });
    const apply = (live: JsonObject | undefined, image: string, now: string): JsonObject =>
      deepFreeze({ ...(serverSideApply({ live, applied: config(image), manager: 'kubectl', force: false, kind: { group: '', kind: 'Pod' }, builtin: true, now, fieldsCache: cache }).object as JsonObject) });
    const created = apply(undefined, 'x', T0);
    const withUid = deepFreeze({ ...created, metadata: { ...(created.metadata as JsonObject), uid: 'u1' } });
    const updated = apply(withUid, 'y', T1);
    const fieldsOf = (obj: JsonObject): unknown => ((obj.metadata as JsonObject).managedFields as JsonObject[])[0]?.fieldsV1;
    expect(updated).to.have.nested.property('spec.containers[0].image', 'y');
    expect(fieldsOf(updated)).to.equal(fieldsOf(created));
  });

  it('record what they record without the cache, over random sequences of writes and applies', () => {
    const names = fc.constantFrom('a', 'b', 'c');
    const container = fc.record({ name: names, image: fc.constantFrom('x', 'y') }, { requiredKeys: ['name'] });
    const write = fc.record({
      manager: fc.constantFrom('m1', 'm2', 'kubectl'),
      apply: fc.boolean(),
      force: fc.boolean(),
      containers: fc.uniqueArray(container, { selector: (c) => c.name, maxLength: 3 }),
      labels: fc.dictionary(fc.constantFrom('app', 'tier'), fc.constantFrom('1', '2')),
      phase: fc.constantFrom('Pending', 'Running'),
    });
    fc.assert(
      fc.property(fc.array(write, { minLength: 1, maxLength: 8 }), (writes) => {
        const cache = new FieldsV1Cache();
        let withCache: JsonObject | undefined;
        let without: JsonObject | undefined;
        writes.forEach((w, i) => {
          const now = `2024-01-01T00:0${i}:00Z`;
          const body = { ...pod(w.containers, w.phase), metadata: { name: 'p', namespace: 'default', labels: w.labels } };
          const step = (live: JsonObject | undefined, fieldsCache: FieldsV1Cache | undefined): JsonObject => {
            const options = { manager: w.manager, now, kind: { group: '', kind: 'Pod' }, ...(fieldsCache ? { fieldsCache } : {}) };
            let out: object;
            try {
              out = w.apply
                ? serverSideApply({ ...options, live, applied: body, force: w.force, builtin: true }).object
                : recordManagedFields({ ...options, before: live, after: { ...body, metadata: { ...body.metadata, uid: 'u1' } }, operation: 'Update' });
            } catch (error) {
              return { error: String(error) };
            }
            return deepFreeze({ ...(out as JsonObject), metadata: { ...((out as JsonObject).metadata as JsonObject), uid: 'u1' } });
          };
          const nextWithCache = step(withCache?.error === undefined ? withCache : undefined, cache);
          const nextWithout = step(without?.error === undefined ? without : undefined, undefined);
          expect(JSON.stringify(nextWithCache)).to.equal(JSON.stringify(nextWithout));
          withCache = nextWithCache;
          without = nextWithout;
        });
      }),
      { numRuns: 150 },
    );
  });
});
