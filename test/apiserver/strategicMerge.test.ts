import { expect } from 'chai';
import fc from 'fast-check';
import { shapeFor } from '../../src/apiserver/api/builtinSchema.js';
import type { JsonObject } from '../../src/apiserver/writes/jsonValue.js';
import { PatchError } from '../../src/apiserver/writes/patchError.js';
import { strategicMergePatch } from '../../src/apiserver/writes/strategicMerge.js';
import { catchError } from './catchError.js';
import { expectOrdinaryPrototypes, expectPrototypesUnchanged, hostileJsonText, prototypeSnapshot } from '../support/hostileJson.js';

// Expected results follow apimachinery's strategicpatch (patch.go and its test cases) and the
// Kubernetes task page "Update API Objects in Place Using kubectl patch".

const pod = shapeFor({ group: '', kind: 'Pod' });
const deployment = shapeFor({ group: 'apps', kind: 'Deployment' });
const service = shapeFor({ group: '', kind: 'Service' });
const configMap = shapeFor({ group: '', kind: 'ConfigMap' });

function podWith(spec: JsonObject, metadata: JsonObject = { name: 'p' }): JsonObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

const names = (list: unknown): unknown[] => (list as JsonObject[]).map((item) => item.name);

describe('strategicMergePatch', () => {
  it('merges containers by name: the new container comes first, the existing one is kept (kubectl patch docs)', () => {
    const live = podWith({ containers: [{ name: 'nginx', image: 'nginx' }] });
    const out = strategicMergePatch(live, { spec: { containers: [{ name: 'redis', image: 'redis' }] } }, pod);
    expect(out.spec).to.deep.equal({ containers: [{ name: 'redis', image: 'redis' }, { name: 'nginx', image: 'nginx' }] });
  });

  it('merges fields of the container with the same name and its env by name', () => {
    const live = podWith({ containers: [{ name: 'app', image: 'v1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] }] });
    const out = strategicMergePatch(live, { spec: { containers: [{ name: 'app', image: 'v2', env: [{ name: 'B', value: '3' }] }] } }, pod);
    expect(out.spec).to.deep.equal({
      containers: [{ name: 'app', image: 'v2', env: [{ name: 'A', value: '1' }, { name: 'B', value: '3' }] }],
    });
  });

  it('replaces lists without a patch strategy, such as tolerations (kubectl patch docs)', () => {
    const live = podWith({ tolerations: [{ key: 'a', effect: 'NoSchedule' }], containers: [] });
    const out = strategicMergePatch(live, { spec: { tolerations: [{ key: 'b', effect: 'NoExecute' }] } }, pod);
    expect((out.spec as JsonObject).tolerations).to.deep.equal([{ key: 'b', effect: 'NoExecute' }]);
  });

  it('replaces a merging list with $patch: replace as one of its items', () => {
    const live = podWith({ containers: [{ name: 'a' }, { name: 'b' }] });
    const out = strategicMergePatch(live, { spec: { containers: [{ name: 'c' }, { $patch: 'replace' }] } }, pod);
    expect((out.spec as JsonObject).containers).to.deep.equal([{ name: 'c' }]);
  });

  it('deletes list items by merge key with $patch: delete', () => {
    const live = podWith({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
    const out = strategicMergePatch(live, { spec: { containers: [{ name: 'b', $patch: 'delete' }] } }, pod);
    expect(names((out.spec as JsonObject).containers)).to.deep.equal(['a', 'c']);
  });

  it('replaces a map with $patch: replace and empties it with $patch: delete', () => {
    const live = podWith({ containers: [] }, { name: 'p', labels: { a: '1', b: '2' } });
    const replaced = strategicMergePatch(live, { metadata: { labels: { c: '3', $patch: 'replace' } } }, pod);
    expect((replaced.metadata as JsonObject).labels).to.deep.equal({ c: '3' });
    const deleted = strategicMergePatch(live, { metadata: { labels: { $patch: 'delete' } } }, pod);
    expect((deleted.metadata as JsonObject).labels).to.deep.equal({});
  });

  it('drops keys with $retainKeys, as kubectl does switching a Deployment to Recreate (kubectl patch docs)', () => {
    const live = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%' } } },
    };
    const out = strategicMergePatch(live, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }, deployment);
    expect((out.spec as JsonObject).strategy).to.deep.equal({ type: 'Recreate' });
  });

  it('refuses $retainKeys that does not list a key the patch sets (400)', () => {
    const live = { metadata: { name: 'd' }, spec: { strategy: { type: 'RollingUpdate' } } };
    const error = catchError(() => strategicMergePatch(live, { spec: { strategy: { $retainKeys: ['type'], other: 1 } } }, deployment), PatchError);
    expect([error.code, error.reason, error.message]).to.deep.equal([400, 'BadRequest', 'invalid patch format of retainKeys']);
    expect(catchError(() => strategicMergePatch(live, { spec: { $retainKeys: 'x' } }, deployment), PatchError).code).to.equal(400);
  });

  it('merges finalizers as a set and removes some with $deleteFromPrimitiveList', () => {
    const live = podWith({}, { name: 'p', finalizers: ['a', 'b'] });
    const added = strategicMergePatch(live, { metadata: { finalizers: ['b', 'c'] } }, pod);
    expect((added.metadata as JsonObject).finalizers).to.deep.equal(['a', 'b', 'c']);
    const removed = strategicMergePatch(live, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }, pod);
    expect((removed.metadata as JsonObject).finalizers).to.deep.equal(['b']);
  });

  it('orders a merged list by $setElementOrder', () => {
    const live = podWith({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
    const out = strategicMergePatch(
      live,
      { spec: { '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }, { name: 'b' }], containers: [{ name: 'a', image: 'x' }] } },
      pod,
    );
    expect((out.spec as JsonObject).containers).to.deep.equal([{ name: 'c' }, { name: 'a', image: 'x' }, { name: 'b' }]);
  });

  it('weaves server-only items in where the live order puts them', () => {
    const live = podWith({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
    const out = strategicMergePatch(live, { spec: { containers: [{ name: 'c', image: 'x' }, { name: 'd' }] } }, pod);
    expect(names((out.spec as JsonObject).containers)).to.deep.equal(['a', 'b', 'c', 'd']);
  });

  it('deletes a key given null and ignores nulls for keys the object lacks', () => {
    const live = podWith({ nodeName: 'n', containers: [] });
    const out = strategicMergePatch(live, { spec: { nodeName: null, hostname: null } }, pod);
    expect(out.spec).to.deep.equal({ containers: [] });
  });

  it('drops nulls and $patch parts inside a value the object did not have (kube quirk)', () => {
    const live = podWith({ containers: [] });
    const out = strategicMergePatch(live, { spec: { securityContext: { runAsUser: 1, fsGroup: null }, x: { $patch: 'replace', a: 1 } } }, pod);
    expect(out.spec).to.deep.equal({ containers: [], securityContext: { runAsUser: 1 } });
  });

  it('merges ownerReferences by uid, Service ports by port and status conditions by type', () => {
    const owned = strategicMergePatch(
      podWith({}, { name: 'p', ownerReferences: [{ uid: '1', name: 'a' }] }),
      { metadata: { ownerReferences: [{ uid: '2', name: 'b' }] } },
      pod,
    );
    expect(((owned.metadata as JsonObject).ownerReferences as JsonObject[]).map((o) => o.uid)).to.deep.equal(['2', '1']);
    const svc = strategicMergePatch(
      { spec: { ports: [{ port: 80, name: 'http' }, { port: 443, name: 'https' }] } },
      { spec: { ports: [{ port: 443, targetPort: 8443 }] } },
      service,
    );
    expect((svc.spec as JsonObject).ports).to.deep.equal([{ port: 80, name: 'http' }, { port: 443, name: 'https', targetPort: 8443 }]);
    const status = strategicMergePatch(
      { status: { conditions: [{ type: 'Ready', status: 'False' }, { type: 'Initialized', status: 'True' }] } },
      { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      pod,
    );
    expect((status.status as JsonObject).conditions).to.deep.equal([
      { type: 'Ready', status: 'True' },
      { type: 'Initialized', status: 'True' },
    ]);
  });

  it('merges the pod template inside a Deployment', () => {
    const live: JsonObject = {
      spec: { template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'v1' }, { name: 'd' }] } } },
    };
    const out = strategicMergePatch(live, { spec: { template: { spec: { containers: [{ name: 'c', image: 'v2' }] } } } }, deployment);
    expect(out).to.deep.equal({
      spec: { template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'v2' }, { name: 'd' }] } } },
    });
  });

  describe("errors as kube-apiserver answers them", () => {
    const live = podWith({ containers: [{ name: 'a' }] });
    it('a merge-list item without its merge key is a 422 naming the key (kube answers 500, a bug we do not copy)', () => {
      const error = catchError(() => strategicMergePatch(live, { spec: { containers: [{ image: 'x' }] } }, pod), PatchError);
      expect([error.code, error.reason]).to.deep.equal([422, 'Invalid']);
      expect(error.message).to.contain('does not contain declared merge key: name');
    });
    it('an unknown $patch value is refused', () => {
      const error = catchError(() => strategicMergePatch(live, { spec: { $patch: 'bogus' } }, pod), PatchError);
      expect(error.message).to.contain('unknown patch type: bogus');
    });
    it('$patch: merge in a list is refused', () => {
      const error = catchError(() => strategicMergePatch(live, { spec: { containers: [{ $patch: 'merge' }] } }, pod), PatchError);
      expect(error.message).to.contain('merging lists cannot yet be specified in the patch');
    });
    it('a list of lists is 422', () => {
      const error = catchError(
        () => strategicMergePatch({ metadata: { finalizers: [['a']] } }, { metadata: { finalizers: [['b']] } }, pod),
        PatchError,
      );
      expect([error.code, error.message]).to.deep.equal([422, 'the server rejected our request due to an error in our request: lists of lists are not supported']);
    });
    it('a malformed $deleteFromPrimitiveList or $setElementOrder key is 400', () => {
      expect(catchError(() => strategicMergePatch(live, { spec: { '$deleteFromPrimitiveListx': [] } }, pod), PatchError).message).to.equal(
        'invalid patch format of primitive list',
      );
      expect(catchError(() => strategicMergePatch(live, { spec: { '$setElementOrderx': [] } }, pod), PatchError).message).to.equal(
        'invalid patch format of setElementOrder list',
      );
    });
  });

  it('keeps, sets and deletes a member named __proto__ as data (a ConfigMap key may be __proto__)', () => {
    const live = JSON.parse('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"__proto__":"p","a":"1"}}') as JsonObject;
    const patched = (patch: string): string => JSON.stringify(strategicMergePatch(live, JSON.parse(patch) as JsonObject, configMap).data);
    expect(patched('{"data":{"b":"2"}}')).to.equal('{"__proto__":"p","a":"1","b":"2"}');
    expect(patched('{"data":{"__proto__":"q"}}')).to.equal('{"__proto__":"q","a":"1"}');
    expect(patched('{"data":{"__proto__":null}}')).to.equal('{"a":"1"}');
    expect(patched('{"data":{"$retainKeys":["__proto__"],"__proto__":"r"}}')).to.equal('{"__proto__":"r"}');
    const bare = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } };
    expect(JSON.stringify(strategicMergePatch(bare, JSON.parse('{"data":{"__proto__":"new"}}') as JsonObject, configMap).data)).to.equal('{"a":"1","__proto__":"new"}');
    expect(JSON.stringify(strategicMergePatch(podWith({ containers: [] }), JSON.parse('{"spec":{"$setElementOrder/__proto__":[]}}') as JsonObject, pod).spec)).to.equal('{"containers":[]}');
  });

  it('merges JSON whose members are named __proto__, constructor or prototype without changing any prototype (property)', () => {
    const before = prototypeSnapshot();
    fc.assert(
      fc.property(hostileJsonText, hostileJsonText, (liveText, patchText) => {
        const live = JSON.parse(liveText) as JsonObject;
        const patch = JSON.parse(patchText) as JsonObject;
        const merged = strategicMergePatch(live, patch, configMap);
        expectOrdinaryPrototypes(merged);
        for (const key of Object.keys(live)) if (!Object.hasOwn(patch, key)) expect(JSON.stringify(merged[key]), `kept member ${key}`).to.equal(JSON.stringify(live[key]));
        for (const key of Object.keys(patch)) if (patch[key] === null) expect(Object.hasOwn(merged, key), `deleted member ${key}`).to.equal(false);
      }),
      { numRuns: 300 },
    );
    expectPrototypesUnchanged(before);
  });

  it('never modifies its inputs (property)', () => {
    const json = fc.jsonValue({ maxDepth: 4 });
    const objects = fc.dictionary(fc.constantFrom('metadata', 'spec', 'status', 'containers', 'name', 'finalizers', '$patch', 'labels'), json);
    fc.assert(
      fc.property(objects, objects, (a, b) => {
        const live = structuredClone(a) as JsonObject;
        const patch = structuredClone(b) as JsonObject;
        try {
          strategicMergePatch(live, patch, pod);
        } catch (e) {
          expect(e).to.be.instanceOf(PatchError);
        }
        expect(live).to.deep.equal(a);
        expect(patch).to.deep.equal(b);
      }),
      { numRuns: 500 },
    );
  });
});
