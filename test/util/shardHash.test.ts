import { expect } from 'chai';
import fc from 'fast-check';
import { evenRanges, fnv1a64, formatShardBound, FULL_RANGE, HASH_SPACE_END, inAnyRange, inRange } from '../../src/util/shardHash.js';

/** FNV-1a 64 written the obvious way, over TextEncoder's bytes, to check the limb arithmetic against. */
function referenceFnv1a64(text: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) h = ((h ^ BigInt(byte)) * 0x100000001b3n) & (HASH_SPACE_END - 1n);
  return h;
}

describe('the shard hash space (src/util/shardHash)', () => {
  it('gives the published FNV-1a 64 test vectors', () => {
    expect(fnv1a64('')).to.equal(0xcbf29ce484222325n);
    expect(fnv1a64('a')).to.equal(0xaf63dc4c8601ec8cn);
    expect(fnv1a64('foobar')).to.equal(0x85944171f73967e8n);
  });

  it('hashes the UTF-8 bytes: two- three- and four-byte characters, and a lone surrogate as U+FFFD', () => {
    for (const s of ['é', 'ü-namespace', '日本', '🙂', 'a\ud800b', '\udc00', 'x\ud83d']) expect(fnv1a64(s), s).to.equal(referenceFnv1a64(s));
    expect(fnv1a64('\ud800')).to.equal(fnv1a64('\ufffd'));
  });

  it('agrees with the plain bigint FNV-1a on any string', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (s) => fnv1a64(s) === referenceFnv1a64(s)), { numRuns: 2000 });
    fc.assert(fc.property(fc.uuid(), (s) => fnv1a64(s) === referenceFnv1a64(s)));
    // Any UTF-16 code units, lone surrogates included (TextEncoder writes those as U+FFFD too).
    const codeUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 16 });
    fc.assert(fc.property(codeUnits, (s) => fnv1a64(s) === referenceFnv1a64(s)), { numRuns: 2000 });
  });

  it('always lands in [0, 2^64)', () => {
    fc.assert(fc.property(fc.string(), (s) => fnv1a64(s) >= 0n && fnv1a64(s) < HASH_SPACE_END));
  });

  it('tests membership half-open: start is in, end is out', () => {
    const r = { start: 10n, end: 20n };
    expect([9n, 10n, 19n, 20n].map((h) => inRange(r, h))).to.deep.equal([false, true, true, false]);
    expect(inRange(FULL_RANGE, HASH_SPACE_END - 1n)).to.equal(true);
    expect(inAnyRange([], 0n)).to.equal(false);
    expect(inAnyRange([r, { start: 30n, end: 40n }], 35n)).to.equal(true);
  });

  it('writes bounds padded to 16 hex digits, the top of the space as 0x10000000000000000', () => {
    expect(formatShardBound(0n)).to.equal('0x0000000000000000');
    expect(formatShardBound(0x8000000000000000n)).to.equal('0x8000000000000000');
    expect(formatShardBound(HASH_SPACE_END)).to.equal('0x10000000000000000');
    expect(() => formatShardBound(HASH_SPACE_END + 1n)).to.throw(RangeError, /outside \[0, 2\^64\]/);
    expect(() => formatShardBound(-1n)).to.throw(RangeError);
  });

  it('splits the space into n contiguous ranges that cover it, every hash in exactly one', () => {
    expect(evenRanges(2)).to.deep.equal([{ start: 0n, end: 0x8000000000000000n }, { start: 0x8000000000000000n, end: HASH_SPACE_END }]);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.bigInt({ min: 0n, max: HASH_SPACE_END - 1n }), (n, h) => {
        const ranges = evenRanges(n);
        if (ranges[0]!.start !== 0n || ranges[n - 1]!.end !== HASH_SPACE_END) return false;
        if (ranges.some((r, i) => i > 0 && r.start !== ranges[i - 1]!.end)) return false;
        return ranges.filter((r) => inRange(r, h)).length === 1;
      }),
    );
    expect(() => evenRanges(0)).to.throw(RangeError, /positive whole number/);
  });
});
