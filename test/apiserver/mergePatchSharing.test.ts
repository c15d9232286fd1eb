import { expect } from 'chai';
import { deepFreeze } from '../../src/util/json.js';
import type { JsonObject } from '../../src/apiserver/writes/jsonValue.js';
import { applyMergePatch7396 } from '../../src/apiserver/writes/mergePatch.js';

describe('applyMergePatch7396 on a stored (frozen) object', () => {
  const doc = deepFreeze({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', labels: { a: '1' }, annotations: { n: 'x' } },
    data: { k: 'v' },
  }) as JsonObject;

  it('merges into copies of what the patch reaches and shares the rest, leaving the object as it was', () => {
    const out = applyMergePatch7396(doc, { metadata: { labels: { b: '2' }, annotations: null }, data: { k: 'w' } });
    expect(out).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { a: '1', b: '2' } }, data: { k: 'w' } });
    expect(doc).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { a: '1' }, annotations: { n: 'x' } }, data: { k: 'v' } });
    expect(Object.isFrozen(out) || Object.isFrozen(out.metadata) || Object.isFrozen(out.data)).to.equal(false);
  });

  it('shares with the object what the patch does not reach', () => {
    const out = applyMergePatch7396(doc, { data: { k: 'w' } });
    expect(out.metadata).to.equal(doc.metadata);
    expect(out.data).to.not.equal(doc.data);
  });

  it('replaces a value that is not an object with a new object where the patch holds one', () => {
    const out = applyMergePatch7396(doc, { kind: { x: 1 }, metadata: { name: { y: 2 } } });
    expect(out).to.have.deep.property('kind', { x: 1 });
    expect(out).to.have.nested.property('metadata.name.y', 2);
    expect(doc.kind).to.equal('ConfigMap');
  });
});
