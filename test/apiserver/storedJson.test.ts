import { expect } from 'chai';
import fc from 'fast-check';
import { StoredJson } from '../../src/apiserver/storage/storedJson.js';
import type { KubeObject } from 'rxkube';

const prefix = '{"type":"MODIFIED","object":';
const suffix = '}\n';

function store(json: StoredJson, object: unknown): string {
  const frozen = json.freeze(object as KubeObject);
  return json.line(prefix, object as KubeObject, suffix, frozen);
}

function isFrozenAllTheWay(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  return Object.isFrozen(value) && Object.values(value).every(isFrozenAllTheWay);
}

describe('StoredJson', () => {
  it('writes what JSON.stringify writes, version after version, when versions share parts', () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    const field = fc.constantFrom('apiVersion', 'kind', 'spec', 'status', 'data', 'x');
    const fieldsV1 = fc.dictionary(fc.constantFrom('f:a', 'f:b', 'k:{"name":"x"}'), fc.constant({}));
    const version = fc.record({
      fields: fc.dictionary(field, json),
      keep: fc.array(field),
      labels: fc.option(fc.dictionary(fc.string(), fc.string())),
      managers: fc.array(fc.record({ manager: fc.string(), fieldsV1, keepFields: fc.boolean() }), { maxLength: 3 }),
    });
    fc.assert(
      fc.property(fc.array(version, { minLength: 1, maxLength: 6 }), (versions) => {
        const writer = new StoredJson();
        let previous: Record<string, unknown> | undefined;
        for (const v of versions) {
          const object: Record<string, unknown> = { ...v.fields };
          // Shared with the version before: what a write left unchanged.
          for (const key of v.keep) if (previous !== undefined && key in previous) object[key] = previous[key];
          const before = (previous?.metadata as { managedFields?: { fieldsV1: unknown }[] } | undefined)?.managedFields ?? [];
          object.metadata = {
            name: 'x',
            ...(v.labels !== null ? { labels: v.labels } : {}),
            managedFields: v.managers.map((m, i) => ({ manager: m.manager, fieldsV1: m.keepFields && before[i] !== undefined ? before[i].fieldsV1 : m.fieldsV1 })),
          };
          expect(store(writer, object)).to.equal(`${prefix}${JSON.stringify(object)}${suffix}`);
          expect(isFrozenAllTheWay(object)).to.equal(true);
          previous = object;
        }
      }),
    );
  });

  it('writes what JSON.stringify writes for parts that are not plain JSON: toJSON, Dates, undefined, holes, functions', () => {
    const writer = new StoredJson();
    const holes = [1, , 3];
    const object = {
      spec: { when: new Date(0), custom: { toJSON: () => 'custom' }, gone: undefined, holes, fn: () => 1 },
      metadata: { name: 'x', managedFields: [{ manager: 'm', fieldsV1: { 'f:a': {} }, time: new Date(1000) }, undefined] },
    };
    expect(store(writer, object)).to.equal(`${prefix}${JSON.stringify(object)}${suffix}`);
  });

  it('writes what JSON.stringify writes for plain data with undefined values and holes', () => {
    const writer = new StoredJson();
    const managedFields: { manager: string; time: undefined; fieldsV1: Record<string, object> }[] = [{ manager: 'm', time: undefined, fieldsV1: { 'f:a': {} } }];
    managedFields[2] = { manager: 'n', time: undefined, fieldsV1: { 'f:b': {} } };
    const object = { gone: undefined, spec: { gone: undefined, a: [1, undefined] }, metadata: { name: 'x', labels: undefined, managedFields } };
    expect(store(writer, object)).to.equal(`${prefix}${JSON.stringify(object)}${suffix}`);
    const next = { ...object, metadata: { ...object.metadata, resourceVersion: '2' } };
    expect(store(writer, next)).to.equal(`${prefix}${JSON.stringify(next)}${suffix}`);
  });

  it('writes the JSON of a shared part anew when it holds something whose JSON can change while frozen (a Date)', () => {
    const writer = new StoredJson();
    const when = new Date(0);
    const status = { when };
    const first = { metadata: { name: 'x' }, status };
    store(writer, first);
    when.setTime(5000);
    const second = { metadata: { name: 'x', resourceVersion: '2' }, status };
    expect(store(writer, second)).to.equal(`${prefix}${JSON.stringify(second)}${suffix}`);
  });

  it('freezes a stored object all the way down, inside parts a caller froze only on top', () => {
    const writer = new StoredJson();
    const inner = { value: 1 };
    const object = { metadata: { name: 'x' }, status: Object.freeze({ inner }) };
    store(writer, object);
    expect(isFrozenAllTheWay(object)).to.equal(true);
    expect(Object.isFrozen(inner)).to.equal(true);
  });
});
