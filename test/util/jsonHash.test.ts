import { expect } from 'chai';
import fc from 'fast-check';
import { jsonHash } from '../../src/util/jsonHash.js';

describe('jsonHash (src/util/jsonHash)', () => {
  it('hashes equal JSON data the same, whatever object holds it, and counts its characters', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy: unknown = JSON.parse(JSON.stringify(value));
        expect(jsonHash(copy).hash).to.equal(jsonHash(value).hash);
      }),
    );
    expect(jsonHash({ ab: 'cd' }).chars).to.equal(7); // "ab", "cd", and a tag each for the object's start, its end and the string
  });

  it('tells apart values that differ only in where a string ends, in key order, in type or in nesting', () => {
    const distinct = [{ ab: 'c' }, { a: 'bc' }, { a: 1, b: 2 }, { b: 2, a: 1 }, { a: '1' }, { a: 1 }, ['a', 'b'], [['a'], 'b'], [['a', 'b']], { a: null }, { a: true }, { a: false }, {}, []];
    const hashes = new Set(distinct.map((v) => jsonHash(v).hash));
    expect(hashes.size).to.equal(distinct.length);
  });
});
