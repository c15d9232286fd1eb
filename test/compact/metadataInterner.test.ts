import { expect } from 'chai';
import type { KubeObject } from 'rxkube';
import { MetadataInterner, sameJson } from '../../src/compact/metadataInterner.js';
import { jsonHash } from '../../src/util/jsonHash.js';

/** A metadata-only pod of one ReplicaSet, as JSON text: each parse is a fresh object, as each watch event is. */
function podText(i: number, template = 'web-7d4b9c8f6'): string {
  return JSON.stringify({
    kind: 'PartialObjectMetadata',
    apiVersion: 'meta.k8s.io/v1',
    metadata: {
      name: `${template}-${i}`,
      namespace: 'team-1',
      uid: `uid-${i}`,
      resourceVersion: String(100 + i),
      generateName: `${template}-`,
      creationTimestamp: '2026-11-29T08:00:00Z',
      labels: { app: 'web', 'pod-template-hash': template },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-29T08:00:00Z' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: template, uid: `rs-${template}`, controller: true }],
      finalizers: ['example.com/keep'],
      managedFields: [
        { manager: 'kube-controller-manager', operation: 'Update', time: '2026-11-29T08:00:00Z', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } } } },
        { manager: 'kubelet', operation: 'Update', time: `2026-11-29T08:00:0${i % 10}Z`, subresource: 'status', fieldsV1: { 'f:status': {} } },
      ],
    },
  });
}

const parse = (text: string) => JSON.parse(text) as KubeObject;

describe('MetadataInterner (src/compact/metadataInterner)', () => {
  it("shares the labels, annotations, owners and finalizers of objects that have equal ones, frozen, leaving each object equal to what was parsed", () => {
    const interner = new MetadataInterner();
    const a = interner.intern(parse(podText(1)));
    const b = interner.intern(parse(podText(2)));
    for (const field of ['labels', 'annotations', 'ownerReferences', 'finalizers'] as const) {
      expect(b.metadata[field], field).to.equal(a.metadata[field]);
      expect(Object.isFrozen(a.metadata[field]), field).to.equal(true);
    }
    expect(Object.isFrozen(a.metadata.ownerReferences?.[0])).to.equal(true);
    // managedFields entry by entry: the controller's is the same for both, the kubelet's differs in time.
    const [am, bm] = [a.metadata.managedFields ?? [], b.metadata.managedFields ?? []];
    expect(bm[0]).to.equal(am[0]);
    expect(Object.isFrozen((am[0] as { fieldsV1?: unknown } | undefined)?.fieldsV1)).to.equal(true);
    expect(bm[1]).not.to.equal(am[1]);
    expect(bm).not.to.equal(am);
    // Same keys, same order, same values: the JSON text is the server's.
    expect(JSON.stringify(a)).to.equal(podText(1));
    expect(JSON.stringify(b)).to.equal(podText(2));
    // The object itself and its metadata stay the caller's.
    expect(Object.isFrozen(b)).to.equal(false);
    expect(Object.isFrozen(b.metadata)).to.equal(false);
  });

  it('holds the repeated strings once, and none of the names, uids or resourceVersions unique to an object', () => {
    const interner = new MetadataInterner();
    for (let i = 0; i < 1000; i++) interner.intern(parse(podText(i)));
    // kind, apiVersion, namespace, generateName, creationTimestamp
    expect(interner.strings.size).to.equal(5);
    expect(interner.strings.get('team-1')).to.equal('team-1');
    expect(interner.strings.get('web-7d4b9c8f6-1')).to.equal(undefined);
    // labels, annotations, ownerReferences, finalizers, the controller's managedFields entry, ten kubelet ones
    expect(interner.records.size).to.equal(15);
  });

  it('does not share values that differ, nor merge a record that JSON text cannot tell apart', () => {
    const interner = new MetadataInterner();
    const a = interner.intern(parse(podText(1, 'web-aaaa')));
    const b = interner.intern(parse(podText(2, 'web-bbbb')));
    expect(b.metadata.labels).not.to.equal(a.metadata.labels);
    expect(b.metadata.labels).to.deep.equal({ app: 'web', 'pod-template-hash': 'web-bbbb' });
    const withFunction = parse(podText(3, 'web-aaaa'));
    const labels = { ...withFunction.metadata.labels, toString: () => 'x' } as unknown as Record<string, string>;
    withFunction.metadata.labels = labels;
    expect(interner.intern(withFunction).metadata.labels).to.equal(labels);
  });

  it('keeps the key order each object was sent with: labels in another order are not shared', () => {
    const interner = new MetadataInterner();
    const a = interner.intern(parse(podText(1)));
    const reordered = parse(podText(2));
    reordered.metadata.labels = { 'pod-template-hash': 'web-7d4b9c8f6', app: 'web' };
    const b = interner.intern(reordered);
    expect(b.metadata.labels).not.to.equal(a.metadata.labels);
    expect(Object.keys(b.metadata.labels ?? {})).to.deep.equal(['pod-template-hash', 'app']);
  });

  it('compares JSON data strictly: undefined-valued keys, other prototypes and other types are different', () => {
    expect(sameJson({ a: [1, { b: 'x' }], c: null }, { a: [1, { b: 'x' }], c: null })).to.equal(true);
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).to.equal(false);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).to.equal(false);
    expect(sameJson({ a: 1 }, { a: '1' })).to.equal(false);
    expect(sameJson([1, 2], [1, 2, 3])).to.equal(false);
    expect(sameJson([], {})).to.equal(false);
    expect(sameJson({ t: new Date(0) }, { t: new Date(0) })).to.equal(false);
    expect(sameJson(Object.create(null) as object, {})).to.equal(false);
  });

  it('returns a frozen object as it is, and one without metadata untouched', () => {
    const interner = new MetadataInterner();
    const frozen = Object.freeze(parse(podText(1)));
    expect(interner.intern(frozen)).to.equal(frozen);
    const bare = { kind: 'Thing' } as unknown as KubeObject;
    expect(interner.intern(bare)).to.deep.equal({ kind: 'Thing' });
    expect(interner.records.size).to.equal(0);
  });

  it('holds no more than its bounds across many fresh names and values, and lets go of values no longer seen', () => {
    const interner = new MetadataInterner({ strings: { entries: 50, chars: 10_000 }, records: { entries: 20, chars: 100_000 } });
    const first = interner.intern(parse(podText(0, 'rs-0')));
    let most = { strings: 0, records: 0 };
    for (let i = 1; i < 20_000; i++) {
      // A fresh ReplicaSet every 10 pods: fresh generateNames, labels and owners all the time.
      interner.intern(parse(podText(i, `rs-${Math.floor(i / 10)}`)));
      most = { strings: Math.max(most.strings, interner.strings.size), records: Math.max(most.records, interner.records.size) };
    }
    expect(most.strings).to.be.at.most(100);
    expect(most.records).to.be.at.most(40);
    expect(interner.records.get(jsonHash(first.metadata.labels).hash)).to.equal(undefined);
    expect(interner.strings.get('rs-0-')).to.equal(undefined);
  });
});
