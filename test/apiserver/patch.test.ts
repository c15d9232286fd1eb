import { expect } from 'chai';
import fc from 'fast-check';
import { generate } from 'json-merge-patch';
import type { JsonObject } from '../../src/apiserver/writes/jsonValue.js';
import { applyPatch, PatchError } from '../../src/apiserver/writes/patch.js';
import { catchError } from './catchError.js';
import { expectOrdinaryPrototypes, expectPrototypesUnchanged, hostileJsonText, prototypeSnapshot } from '../support/hostileJson.js';

// Expected results follow RFC 7396 and RFC 6902 as kube-apiserver applies them
// (evanphx/json-patch v4, k8s.io/apiserver handlers/patch.go).

const builtin = { kind: { group: '', kind: 'ConfigMap' }, builtin: true };
const custom = { kind: { group: 'example.com', kind: 'Widget' }, builtin: false };
const live = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { a: '1' } }, data: { x: '1', y: '2' }, list: [1, 2, 3] };

const merge = (body: unknown): object => applyPatch('application/merge-patch+json', live, body, builtin);
const json = (body: unknown): object => applyPatch('application/json-patch+json', live, body, builtin);

describe('applyPatch', () => {
  describe('application/merge-patch+json (RFC 7396)', () => {
    it('merges objects, deletes keys given null and replaces arrays', () => {
      expect(merge({ metadata: { labels: { a: null, b: '2' } }, data: { y: '3' }, list: [9] })).to.deep.equal({
        ...live,
        metadata: { name: 'c', labels: { b: '2' } },
        data: { x: '1', y: '3' },
        list: [9],
      });
    });

    it('accepts a charset parameter after the media type', () => {
      expect(applyPatch('application/merge-patch+json; charset=utf-8', live, { data: null }, builtin)).to.not.have.property('data');
    });

    it('drops nulls inside objects in arrays, as kube does', () => {
      expect(merge({ list: [{ a: null, b: 1 }] })).to.have.deep.property('list', [{ b: 1 }]);
    });

    it('refuses a body that is not an object: null or a scalar is 400 "Invalid JSON Patch", an array 422', () => {
      for (const body of [null, 5, 'x', true]) {
        const error = catchError(() => merge(body), PatchError);
        expect([error.code, error.reason, error.message]).to.deep.equal([400, 'BadRequest', 'Invalid JSON Patch']);
      }
      expect(catchError(() => merge([1]), PatchError)).to.include({ code: 422, reason: 'Invalid' });
    });

    it('applying generate(a, b) to a gives b (property)', () => {
      const objects = fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 });
      fc.assert(
        fc.property(objects, objects, (a, b) => {
          // RFC 7396 cannot express a null member or a null inside an object in an array.
          fc.pre(!JSON.stringify(b).includes('null'));
          const diff = generate(a, b) ?? {};
          expect(applyPatch('application/merge-patch+json', a, diff, builtin)).to.deep.equal(b);
        }),
      );
    });
    it('merges members named __proto__, constructor or prototype as data, and changes no prototype (property)', () => {
      const before = prototypeSnapshot();
      // Kube drops null members of objects inside arrays of a merge patch.
      const withoutNullMembers = (value: unknown): string =>
        JSON.stringify(JSON.parse(JSON.stringify(value), function (this: unknown, _key, v: unknown) {
          return v === null && !Array.isArray(this) ? undefined : v;
        }));
      const expectMerged = (result: unknown, doc: unknown, patch: JsonObject): void => {
        expect(Object.getPrototypeOf(result)).to.equal(Object.prototype);
        const out = result as JsonObject;
        const was = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (doc as JsonObject) : {};
        for (const key of Object.keys(was)) if (!Object.hasOwn(patch, key)) expect(JSON.stringify(out[key]), `kept member ${key}`).to.equal(JSON.stringify(was[key]));
        for (const key of Object.keys(patch)) {
          const value = patch[key];
          if (value === null) expect(Object.hasOwn(out, key), `deleted member ${key}`).to.equal(false);
          else if (value !== null && typeof value === 'object' && !Array.isArray(value)) expectMerged(out[key], Object.hasOwn(was, key) ? was[key] : undefined, value);
          else expect(JSON.stringify(Object.getOwnPropertyDescriptor(out, key)?.value), `set member ${key}`).to.equal(withoutNullMembers(value));
        }
      };
      fc.assert(
        fc.property(hostileJsonText, hostileJsonText, (docText, patchText) => {
          const doc = JSON.parse(docText) as JsonObject;
          const patch = JSON.parse(patchText) as JsonObject;
          const result = applyPatch('application/merge-patch+json', doc, patch, custom);
          expectOrdinaryPrototypes(result);
          expectMerged(result, doc, patch);
          expect(JSON.stringify(doc)).to.equal(JSON.stringify(JSON.parse(docText)));
        }),
        { numRuns: 300 },
      );
      const merged = applyPatch('application/merge-patch+json', JSON.parse('{"spec":{"__proto__":{"a":1},"n":1}}') as JsonObject, JSON.parse('{"spec":{"__proto__":{"b":2},"n":2}}'), custom);
      expect(JSON.stringify(merged)).to.equal('{"spec":{"__proto__":{"a":1,"b":2},"n":2}}');
      expectPrototypesUnchanged(before);
    });
  });

  describe('application/json-patch+json (RFC 6902, evanphx/json-patch v4)', () => {
    it('applies add, remove, replace, move, copy and test in order', () => {
      const out = json([
        { op: 'test', path: '/data/x', value: '1' },
        { op: 'add', path: '/metadata/labels/b', value: '2' },
        { op: 'remove', path: '/data/y' },
        { op: 'replace', path: '/data/x', value: 'one' },
        { op: 'move', from: '/metadata/labels/a', path: '/metadata/labels/c' },
        { op: 'copy', from: '/data/x', path: '/data/z' },
        { op: 'add', path: '/list/-', value: 4 },
        { op: 'add', path: '/list/0', value: 0 },
        { op: 'remove', path: '/list/-1' },
        { op: 'add', path: '/metadata/labels/a~1b', value: 'slash' },
      ]);
      expect(out).to.deep.equal({
        ...live,
        metadata: { name: 'c', labels: { b: '2', c: '1', 'a/b': 'slash' } },
        data: { x: 'one', z: 'one' },
        list: [0, 1, 2, 3],
      });
    });

    it("keeps kube's quirks: replace of a missing member adds it, test of a missing member against null passes", () => {
      expect(json([{ op: 'replace', path: '/data/new', value: 'v' }])).to.have.nested.property('data.new', 'v');
      expect(json([{ op: 'test', path: '/data/missing', value: null }])).to.deep.equal(live);
    });

    const failures: Array<[string, unknown, string]> = [
      ['a failed test', { op: 'test', path: '/data/x', value: '2' }, 'testing value /data/x failed: test failed'],
      ['a test of a missing member', { op: 'test', path: '/data/missing', value: 'x' }, 'testing value /data/missing failed: test failed'],
      ['add under a missing parent', { op: 'add', path: '/spec/a/b', value: 1 }, 'add operation does not apply: doc is missing path: "/spec/a/b": missing value'],
      ['remove of a missing member', { op: 'remove', path: '/data/nope' }, "error in remove for path: '/data/nope': Unable to remove nonexistent key: nope: missing value"],
      ['remove under a missing parent', { op: 'remove', path: '/spec/x' }, 'remove operation does not apply: doc is missing path: "/spec/x": missing value'],
      ['replace under a missing parent', { op: 'replace', path: '/spec/x', value: 1 }, 'replace operation does not apply: doc is missing path: /spec/x: missing value'],
      ['an index past the end', { op: 'add', path: '/list/9', value: 1 }, "error in add for path: '/list/9': Unable to access invalid index: 9: invalid index referenced"],
      ['move from a missing parent', { op: 'move', from: '/spec/x', path: '/a' }, 'move operation does not apply: doc is missing from path: /spec/x: missing value'],
      ['copy to a missing parent', { op: 'copy', from: '/data/x', path: '/spec/x' }, 'copy operation does not apply: doc is missing destination path: /spec/x: missing value'],
      ['an unknown op', { op: 'bogus', path: '/x' }, 'Unexpected kind: bogus'],
      ['an op without a path', { op: 'add', value: 1 }, 'add operation failed to decode path: missing value'],
    ];
    for (const [what, op, detail] of failures) {
      it(`answers 422 Invalid for ${what}, naming the operation`, () => {
        const error = catchError(() => json([{ op: 'add', path: '/data/ok', value: 'v' }, op]), PatchError);
        expect([error.code, error.reason]).to.deep.equal([422, 'Invalid']);
        expect(error.message).to.match(/^the server rejected our request due to an error in our request: operation 1 /);
        expect(error.message).to.contain(detail);
      });
    }

    it('answers 400 for a body that is not a list of operations, as the decoder words it', () => {
      expect(catchError(() => json({ op: 'add' }), PatchError)).to.include({
        code: 400,
        message: 'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
      });
      expect(catchError(() => json(['x']), PatchError).message).to.equal('json: cannot unmarshal string into Go value of type jsonpatch.Operation');
    });

    it('writes, replaces, moves and removes a member named __proto__ as data, never the prototype', () => {
      const before = prototypeSnapshot();
      const added = json([{ op: 'add', path: '/data/__proto__', value: 'p' }]) as { data: object };
      expect(JSON.stringify(added.data)).to.equal('{"x":"1","y":"2","__proto__":"p"}');
      expectOrdinaryPrototypes(added);
      const doc = JSON.parse('{"spec":{"__proto__":{"polluted":"yes"},"n":1}}') as JsonObject;
      const patched = (ops: unknown[]): string => JSON.stringify(applyPatch('application/json-patch+json', doc, ops, custom));
      expect(patched([{ op: 'replace', path: '/spec/__proto__/polluted', value: 'no' }])).to.equal('{"spec":{"__proto__":{"polluted":"no"},"n":1}}');
      expect(patched([{ op: 'move', from: '/spec/__proto__', path: '/spec/m' }])).to.equal('{"spec":{"n":1,"m":{"polluted":"yes"}}}');
      expect(patched([{ op: 'copy', from: '/spec/n', path: '/__proto__' }])).to.equal('{"spec":{"__proto__":{"polluted":"yes"},"n":1},"__proto__":1}');
      expect(patched([{ op: 'remove', path: '/spec/__proto__' }])).to.equal('{"spec":{"n":1}}');
      expect(patched([{ op: 'test', path: '/spec/__proto__/polluted', value: 'yes' }, { op: 'replace', path: '/spec/n', value: 2 }])).to.equal('{"spec":{"__proto__":{"polluted":"yes"},"n":2}}');
      expect(catchError(() => json([{ op: 'add', path: '/__proto__/polluted', value: 1 }]), PatchError).message).to.include('doc is missing path: "/__proto__/polluted"');
      expect(catchError(() => json([{ op: 'remove', path: '/data/constructor' }]), PatchError).message).to.include('Unable to remove nonexistent key: constructor');
      expectPrototypesUnchanged(before);
    });

    it('answers 413 past 10000 operations', () => {
      const ops = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/data/x', value: '1' }));
      expect(catchError(() => json(ops), PatchError)).to.include({ code: 413, reason: 'RequestEntityTooLarge' });
    });

    it('answers 422 when the result is no longer an object', () => {
      expect(catchError(() => json([{ op: 'replace', path: '', value: [1] }]), PatchError)).to.include({ code: 422 });
    });
  });

  describe('dispatch on the content type', () => {
    it('applies strategic merge patches to built-ins', () => {
      const pod = { kind: 'Pod', spec: { containers: [{ name: 'a' }] } };
      const out = applyPatch('application/strategic-merge-patch+json', pod, { spec: { containers: [{ name: 'b' }] } }, {
        kind: { group: '', kind: 'Pod' },
        builtin: true,
      });
      expect(out).to.deep.equal({ kind: 'Pod', spec: { containers: [{ name: 'b' }, { name: 'a' }] } });
    });

    it('answers 415 for strategic merge on a custom resource, listing the accepted types', () => {
      const error = catchError(() => applyPatch('application/strategic-merge-patch+json', live, {}, custom), PatchError);
      expect([error.code, error.reason, error.message]).to.deep.equal([
        415,
        'UnsupportedMediaType',
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
      ]);
    });

    it('answers 415 for an unknown content type', () => {
      expect(catchError(() => applyPatch('text/plain', live, {}, builtin), PatchError).message).to.contain(
        'application/strategic-merge-patch+json',
      );
    });
  });

  describe('properties', () => {
    const types = ['application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json'];
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.array(
        fc.record(
          { op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'x'), path: fc.constantFrom('', '/data', '/data/x', '/list/0', '/list/-', '/a/b', 'x'), from: fc.constantFrom('/data/x', '/list/1', '/nope'), value: fc.jsonValue({ maxDepth: 2 }) },
          { requiredKeys: [] },
        ),
        { maxLength: 5 },
      ),
    );

    it('random bodies give a PatchError or an object, never another exception, and never touch the inputs', () => {
      fc.assert(
        fc.property(fc.constantFrom(...types), body, fc.boolean(), (type, patch, isBuiltin) => {
          const liveCopy = structuredClone(live);
          const patchCopy = structuredClone(patch);
          try {
            const out = applyPatch(type, liveCopy, patchCopy, isBuiltin ? builtin : custom);
            expect(out).to.be.an('object').and.not.be.an('array');
            (out as JsonObject).touched = true;
          } catch (e) {
            expect(e).to.be.instanceOf(PatchError);
          }
          expect(liveCopy).to.deep.equal(live);
          expect(patchCopy).to.deep.equal(patch);
        }),
        { numRuns: 1000 },
      );
    });
  });
});
