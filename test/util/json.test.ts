import { expect } from 'chai';
import fc from 'fast-check';
import { cloneJson, deepFreeze, isPlainObject, jsonEqual, ownMember, setMember } from '../../src/util/json.js';
import { canonicalJson, expectOrdinaryPrototypes, expectPrototypesUnchanged, hostileJsonText, prototypeSnapshot } from '../support/hostileJson.js';

describe('JSON helpers (src/util/json)', () => {
  it('copies JSON data deeply, so that changing the copy leaves the original alone', () => {
    const original = { a: [1, { b: 'x' }], c: { d: null } };
    const copy = cloneJson(original);
    expect(copy).to.deep.equal(original);
    (copy.a[1] as { b: string }).b = 'y';
    expect((original.a[1] as { b: string }).b).to.equal('x');
  });

  it('copies as JSON would send it: undefined-valued properties are left out, a Date becomes its ISO string', () => {
    const when = new Date(Date.UTC(2024, 0, 2, 3, 4, 5));
    expect(cloneJson({ a: undefined, b: 1, when })).to.deep.equal({ b: 1, when: '2024-01-02T03:04:05.000Z' });
    expect(cloneJson({ nested: { at: when } })).to.deep.equal(JSON.parse(JSON.stringify({ nested: { at: when } })));
  });

  it('compares as JSON: key order and undefined-valued properties do not count, array order does', () => {
    expect(jsonEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).to.equal(true);
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1 })).to.equal(true);
    expect(jsonEqual({ a: [1, 2] }, { a: [2, 1] })).to.equal(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).to.equal(false);
    expect(jsonEqual({ a: null }, { a: undefined })).to.equal(false);
    expect(jsonEqual([], {})).to.equal(false);
    expect(jsonEqual({ t: new Date(0) }, { t: '1970-01-01T00:00:00.000Z' })).to.equal(true);
  });

  it('agrees with a JSON round trip on any JSON value, and a copy always equals its original', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(jsonEqual(a, cloneJson(a))).to.equal(true);
        const roundTrip = (v: unknown) => JSON.stringify(sortKeys(JSON.parse(JSON.stringify(v)) as unknown));
        expect(jsonEqual(a, b)).to.equal(roundTrip(a) === roundTrip(b));
      }),
      { seed: 20261201, numRuns: 500 },
    );
  });

  it('keeps members named __proto__, constructor or prototype as data when copying and comparing, and changes no prototype (property)', () => {
    const before = prototypeSnapshot();
    fc.assert(
      fc.property(hostileJsonText, hostileJsonText, (textA, textB) => {
        const a = JSON.parse(textA) as unknown;
        const copy = cloneJson(a);
        expect(JSON.stringify(copy)).to.equal(JSON.stringify(a));
        expectOrdinaryPrototypes(copy);
        expect(jsonEqual(a, copy)).to.equal(true);
        const b = JSON.parse(textB) as unknown;
        expect(jsonEqual(a, b)).to.equal(canonicalJson(a) === canonicalJson(b));
      }),
      { seed: 20261205, numRuns: 400 },
    );
    expectPrototypesUnchanged(before);
  });

  it('sets and reads a member named __proto__ as data, never the prototype', () => {
    const target: Record<string, unknown> = {};
    setMember(target, '__proto__', { polluted: true });
    setMember(target, 'a', 1);
    expect(Object.getPrototypeOf(target)).to.equal(Object.prototype);
    expect(JSON.stringify(target)).to.equal('{"__proto__":{"polluted":true},"a":1}');
    expect(ownMember(target, '__proto__')).to.deep.equal({ polluted: true });
    expect(ownMember({}, '__proto__')).to.equal(undefined);
    expect(ownMember({}, 'constructor')).to.equal(undefined);
    expect(jsonEqual(JSON.parse('{"__proto__":{}}'), {})).to.equal(false);
    expect(jsonEqual({}, JSON.parse('{"__proto__":{}}'))).to.equal(false);
  });

  it('freezes all the way down, and tells objects from arrays and null', () => {
    const frozen = deepFreeze({ a: { b: [1] } });
    expect(Object.isFrozen(frozen.a.b)).to.equal(true);
    expect([isPlainObject({}), isPlainObject([]), isPlainObject(null), isPlainObject('x')]).to.deep.equal([true, false, false, false]);
  });
});

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
}
