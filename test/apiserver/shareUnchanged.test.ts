import { expect } from 'chai';
import { builtinResources } from '../../src/apiserver/api/builtinResources.js';
import { deepFreeze } from '../../src/util/json.js';
import { identicalJson } from '../../src/apiserver/writes/shareUnchanged.js';
import { prepareUpdate } from '../../src/apiserver/writes/writes.js';
import type { KubeObject } from 'rxkube';

describe('identicalJson', () => {
  it('holds for values equal down to key order, undefined-valued keys and holes', () => {
    expect(identicalJson({ a: [1, { b: null }], c: 'x' }, { a: [1, { b: null }], c: 'x' })).to.equal(true);
    expect(identicalJson({ a: 1, b: 2 }, { b: 2, a: 1 })).to.equal(false);
    expect(identicalJson({ a: 1, b: undefined }, { a: 1 })).to.equal(false);
    expect(identicalJson([1, , 3], [1, undefined, 3])).to.equal(false);
    expect(identicalJson([1, 2], { 0: 1, 1: 2 })).to.equal(false);
    expect(identicalJson(new Date(0), new Date(0))).to.equal(false);
  });
});

describe('prepareUpdate', () => {
  const configMaps = builtinResources().find((type) => type.resource === 'configmaps' && type.group === '')!;
  const live = deepFreeze({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', namespace: 'default', uid: 'u1', resourceVersion: '5', creationTimestamp: '2024-01-01T00:00:00Z' },
    data: { a: '1', b: '2' },
    binaryData: { z: 'AA==' },
  }) as KubeObject;
  const update = (body: Record<string, unknown>): Record<string, unknown> =>
    prepareUpdate(configMaps, live, { ...body, metadata: { name: 'c', labels: { new: 'label' } } }, { namespace: 'default', name: 'c' }, { manager: 'm', now: '2024-01-01T00:01:00Z', ownsBody: true }) as unknown as Record<string, unknown>;
  const plain = live as unknown as Record<string, unknown>;

  it('keeps the stored values of the fields a write left as they were, and the written ones of the rest', () => {
    const next = update({ data: { a: '1', b: '2' }, binaryData: { z: 'BB==' } });
    expect(next.data).to.equal(plain.data);
    expect(next.binaryData).to.deep.equal({ z: 'BB==' });
  });

  it('keeps the written value of a field whose keys came in another order (its JSON differs)', () => {
    const next = update({ data: { b: '2', a: '1' }, binaryData: { z: 'AA==' } });
    expect(next.data).to.not.equal(plain.data);
    expect(JSON.stringify(next.data)).to.equal('{"b":"2","a":"1"}');
    expect(next.binaryData).to.equal(plain.binaryData);
  });
});
