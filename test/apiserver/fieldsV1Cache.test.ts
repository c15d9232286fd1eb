import { expect } from 'chai';
import fc from 'fast-check';
import { difference, fieldsV1ToSet, intersection, keyElement, setToFieldsV1, union, type FieldSet } from '../../src/apiserver/writes/fieldPath.js';
import { FieldsV1Cache } from '../../src/apiserver/writes/fieldsV1Cache.js';
import { deepFreeze } from '../../src/util/json.js';

const spec = (...names: string[]): FieldSet => new Set(names.map((name) => `f:spec\u0000f:${name}`));

describe('FieldsV1Cache', () => {
  it('decodes a frozen FieldsV1 object once: the same set comes back for it', () => {
    const cache = new FieldsV1Cache();
    const fields = deepFreeze({ 'f:spec': { 'f:replicas': {}, 'f:paused': {} } });
    const first = cache.decode(fields);
    expect([...first]).to.have.members(['f:spec\u0000f:replicas', 'f:spec\u0000f:paused']);
    expect(cache.decode(fields)).to.equal(first);
  });

  it('decodes an object that is not frozen every time, so a change to it is seen', () => {
    const cache = new FieldsV1Cache();
    const fields: Record<string, unknown> = { 'f:spec': { 'f:replicas': {} } };
    const first = cache.decode(fields);
    (fields['f:spec'] as Record<string, unknown>)['f:paused'] = {};
    const second = cache.decode(fields);
    expect(second).to.not.equal(first);
    expect([...second]).to.have.members(['f:spec\u0000f:replicas', 'f:spec\u0000f:paused']);
  });

  it('decodes an object frozen only on top every time, so a change below is seen', () => {
    const cache = new FieldsV1Cache();
    const inner: Record<string, unknown> = { 'f:replicas': {} };
    const fields = Object.freeze({ 'f:spec': inner });
    const first = cache.decode(fields);
    inner['f:paused'] = {};
    expect([...cache.decode(fields)]).to.have.members(['f:spec\u0000f:replicas', 'f:spec\u0000f:paused']);
    expect([...first]).to.deep.equal(['f:spec\u0000f:replicas']);
  });

  it('gives a decoded frozen object in setToFieldsV1 form back as the encoding of its set', () => {
    const cache = new FieldsV1Cache();
    const fields = deepFreeze({ 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"a"}': { '.': {}, 'f:image': {} } } } });
    expect(cache.encode(cache.decode(fields))).to.equal(fields);
  });

  it('encodes the set of a decoded object in any other form as setToFieldsV1 does', () => {
    const cache = new FieldsV1Cache();
    const others = [
      { 'f:spec': {}, 'f:metadata': {} },
      { 'f:spec': { '.': {} } },
      { 'f:spec': { 'f:a': {}, '.': {} } },
      { 'f:spec': { '.': { 'f:x': {} }, 'f:a': {} } },
      { 'i:10': {}, 'i:9': {} },
    ];
    for (const other of others) {
      const set = cache.decode(deepFreeze(other));
      expect(JSON.stringify(cache.encode(set))).to.equal(JSON.stringify(setToFieldsV1(set)));
    }
  });

  it('throws for what is not FieldsV1, as decoding does, frozen or not', () => {
    const cache = new FieldsV1Cache();
    for (const bad of [deepFreeze({ 'x:y': {} }), { 'f:a': 5 }, null, 'text']) {
      expect(() => cache.decode(bad)).to.throw(Error);
    }
  });

  it('encodes a set once, into a frozen FieldsV1 object that decodes back to the set itself', () => {
    const cache = new FieldsV1Cache();
    const set = spec('replicas', 'template');
    const encoded = cache.encode(set);
    expect(encoded).to.deep.equal(setToFieldsV1(set));
    expect(Object.isFrozen(encoded) && Object.isFrozen(encoded['f:spec'])).to.equal(true);
    expect(cache.encode(set)).to.equal(encoded);
    expect(cache.decode(encoded)).to.equal(set);
  });

  it('gives an encoding that does not decode back to its set the decoding FieldsV1 gives, not the set', () => {
    const cache = new FieldsV1Cache();
    // The empty path alone encodes as {}, which is the empty set; a name holding a NUL splits into an unknown element.
    for (const set of [new Set(['']), new Set(['f:a\u0000b'])]) {
      const encoded = cache.encode(set);
      let expected: FieldSet | undefined;
      try {
        expected = fieldsV1ToSet(encoded);
      } catch {
        expected = undefined;
      }
      if (expected === undefined) expect(() => cache.decode(encoded)).to.throw(Error);
      else expect([...cache.decode(encoded)]).to.deep.equal([...expected]);
    }
  });

  it('decodes and encodes as fieldsV1ToSet and setToFieldsV1 do, for any set of paths', () => {
    const element = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('f:a', 'f:b', 'f:spec', 'k:{"name":"x"}', 'v:"y"', 'i:0', 'i:10', 'i:9') },
      { weight: 4, arbitrary: fc.string({ maxLength: 4 }).map((text) => `f:${text}`) },
      { weight: 1, arbitrary: fc.constantFrom('', '.', 'x', 'f', 'x:y', 'f:a\u0000b', '\u0000', '__proto__') },
    );
    const path = fc.oneof(
      { weight: 20, arbitrary: fc.array(element, { minLength: 1, maxLength: 4 }).map((elements) => elements.join('\u0000')) },
      { weight: 1, arbitrary: fc.constant('') },
    );
    fc.assert(
      fc.property(fc.array(fc.uniqueArray(path, { maxLength: 12 }), { minLength: 1, maxLength: 4 }), (sets) => {
        const cache = new FieldsV1Cache();
        for (const members of sets) {
          const set = new Set(members);
          const encoded = cache.encode(set);
          expect(JSON.stringify(encoded)).to.equal(JSON.stringify(setToFieldsV1(set)));
          let decoded: string[] | Error;
          try {
            decoded = [...fieldsV1ToSet(setToFieldsV1(set))].sort();
          } catch (error) {
            decoded = error as Error;
          }
          if (decoded instanceof Error) expect(() => cache.decode(encoded)).to.throw(decoded.message);
          else expect([...cache.decode(encoded)].sort()).to.deep.equal(decoded);
        }
      }),
    );
  });
});

describe('field set operations', () => {
  it('return their first input itself when the result equals it, and never change their inputs', () => {
    const a = spec('a', 'b');
    const b = spec('b');
    expect(union(a, b)).to.equal(a);
    expect(union(a)).to.equal(a);
    expect(difference(a, spec('c'))).to.equal(a);
    expect(difference(a, new Set())).to.equal(a);
    const grown = union(a, spec('c'));
    expect([...grown]).to.have.members([...a, ...spec('c')]);
    expect([...difference(a, b)]).to.deep.equal([...spec('a')]);
    expect([...difference(a, spec('a', 'b', 'c'))]).to.deep.equal([]);
    expect([...intersection(spec('c', 'b'), a)]).to.deep.equal([...b]);
    expect([...a]).to.deep.equal([...spec('a', 'b')]);
    expect([...b]).to.deep.equal([...spec('b')]);
  });
});

describe('keyElement', () => {
  it('writes the key fields sorted by name, as JSON of an object with those fields in that order would be', () => {
    const value = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.dictionary(fc.string(), fc.integer()), fc.array(fc.integer()));
    const name = fc.oneof(fc.string(), fc.constantFrom('0', '1', '10', '9', '__proto__', 'name', 'protocol', 'containerPort'));
    fc.assert(
      fc.property(fc.dictionary(name, value), (keys) => {
        // fromEntries defines members, so a key named __proto__ is written as data, as kube writes it.
        const sorted = Object.fromEntries(Object.keys(keys).sort().map((key) => [key, keys[key]]));
        expect(keyElement(keys as never)).to.equal(`k:${JSON.stringify(sorted)}`);
      }),
    );
  });
});
