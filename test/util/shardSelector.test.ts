import { expect } from 'chai';
import fc from 'fast-check';
import { evenRanges, fnv1a64, HASH_SPACE_END } from '../../src/util/shardHash.js';
import {
  formatShardSelector,
  matchesShardSelector,
  parseShardSelector,
  ShardSelectorError,
  shardSelectorOf,
  type ShardSelector,
} from '../../src/util/shardSelector.js';
import type { KubeObject } from '../../src/types.js';

const pod = (uid: string, namespace?: string): KubeObject => ({ metadata: { name: 'p', uid, ...(namespace === undefined ? {} : { namespace }) } });

function parseError(text: string): ShardSelectorError {
  try {
    parseShardSelector(text);
  } catch (error) {
    expect(error).to.be.instanceOf(ShardSelectorError);
    return error as ShardSelectorError;
  }
  throw new Error(`${JSON.stringify(text)} parsed`);
}

describe('the shardSelector grammar (src/util/shardSelector)', () => {
  it("parses kube's examples: one range, and ranges joined by ||, the top written 0x10000000000000000", () => {
    expect(parseShardSelector("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')")).to.deep.equal({
      terms: [{ field: 'uid', start: 0n, end: 0x8000000000000000n }],
    });
    expect(
      parseShardSelector("shardRange(object.metadata.uid, '0x0', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')"),
    ).to.deep.equal({
      terms: [
        { field: 'uid', start: 0n, end: 0x8000000000000000n },
        { field: 'namespace', start: 0x8000000000000000n, end: HASH_SPACE_END },
      ],
    });
  });

  it('accepts blanks anywhere between tokens, double quotes, and upper-case hex digits', () => {
    expect(parseShardSelector(' shardRange ( object.metadata.namespace ,"0xA", "0xFF" )||shardRange(object.metadata.uid,\'0x1\',\'0x2\') ')).to.deep.equal({
      terms: [
        { field: 'namespace', start: 10n, end: 255n },
        { field: 'uid', start: 1n, end: 2n },
      ],
    });
  });

  it('reads the empty selector (or blanks) as selecting everything', () => {
    expect(parseShardSelector('')).to.deep.equal({ terms: [] });
    expect(parseShardSelector('  ')).to.deep.equal({ terms: [] });
    expect(matchesShardSelector({ terms: [] }, pod('x'))).to.equal(true);
  });

  it('writes what it parses back unchanged, padded and lower case', () => {
    const text = "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')";
    expect(formatShardSelector(parseShardSelector(text))).to.equal(text);
    expect(formatShardSelector(parseShardSelector("shardRange(object.metadata.namespace,'0xA','0xFF')"))).to.equal(
      "shardRange(object.metadata.namespace, '0x000000000000000a', '0x00000000000000ff')",
    );
  });

  it('round-trips any selector through its text', () => {
    const term = fc
      .tuple(fc.constantFrom('uid' as const, 'namespace' as const), fc.bigInt({ min: 0n, max: HASH_SPACE_END }), fc.bigInt({ min: 0n, max: HASH_SPACE_END }))
      .filter(([, a, b]) => a !== b)
      .map(([field, a, b]) => ({ field, start: a < b ? a : b, end: a < b ? b : a }));
    fc.assert(fc.property(fc.array(term, { maxLength: 5 }), (terms) => {
      const selector: ShardSelector = { terms };
      expect(parseShardSelector(formatShardSelector(selector))).to.deep.equal(selector);
    }));
  });

  it('matches on the FNV-1a of metadata.uid or metadata.namespace, [start, end), any term', () => {
    const h = fnv1a64('uid-1');
    const around = (field: 'uid' | 'namespace', x: bigint): ShardSelector => ({ terms: [{ field, start: x, end: x + 1n }] });
    expect(matchesShardSelector(around('uid', h), pod('uid-1'))).to.equal(true);
    expect(matchesShardSelector({ terms: [{ field: 'uid', start: 0n, end: h }] }, pod('uid-1'))).to.equal(false);
    expect(matchesShardSelector({ terms: [{ field: 'uid', start: 0n, end: h }, { field: 'uid', start: h, end: h + 1n }] }, pod('uid-1'))).to.equal(true);
    expect(matchesShardSelector(around('namespace', fnv1a64('team-a')), pod('u', 'team-a'))).to.equal(true);
    expect(matchesShardSelector(around('namespace', fnv1a64('team-a')), pod('u', 'team-b'))).to.equal(false);
    // A cluster-scoped object hashes the empty namespace.
    expect(matchesShardSelector(around('namespace', fnv1a64('')), pod('u'))).to.equal(true);
  });

  it('puts every object in exactly one of n even shards', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 9 }), fc.uuid(), (n, uid) => {
      const selectors = evenRanges(n).map((r) => shardSelectorOf('uid', [r]));
      return selectors.filter((s) => matchesShardSelector(s, pod(uid))).length === 1;
    }));
  });

  it('names what is wrong, in kube field-error wording, with the position', () => {
    const cases: Array<[string, RegExp, number]> = [
      ["shardRange(object.metadata.name, '0x0', '0x1')", /unsupported field path "object\.metadata\.name": supported paths are "object\.metadata\.uid" and "object\.metadata\.namespace"/, 11],
      ["shardRange(metadata.uid, '0x0', '0x1')", /field path "metadata\.uid" must be rooted at object, as in "object\.metadata\.uid"/, 11],
      ["shardHash(object.metadata.uid, '0x0', '0x1')", /unknown function "shardHash": only shardRange is supported/, 0],
      ["shardRange(object.metadata.uid, 0x0, '0x1')", /expected the start as a quoted hex string/, 32],
      ["shardRange(object.metadata.uid, '0', '0x1')", /start "0" must be a hex number starting with "0x"/, 32],
      ["shardRange(object.metadata.uid, '0x0', '0xzz')", /end "0xzz" is not a hex number/, 39],
      ["shardRange(object.metadata.uid, '0x0', '0x10000000000000001')", /end "0x10000000000000001" is beyond the hash space/, 39],
      ["shardRange(object.metadata.uid, '0x8', '0x8')", /start 0x0000000000000008 must be less than end 0x0000000000000008/, 0],
      ["shardRange(object.metadata.uid, '0x0', '0x1'", /found the end of the selector, expected "\)"/, 44],
      ["shardRange(object.metadata.uid, '0x0', '0x1') && shardRange(object.metadata.uid, '0x1', '0x2')", /found "&& shardRang", expected "\|\|" or the end of the selector/, 46],
      ["shardRange(object.metadata.uid, '0x0', '0x1') ||", /found the end of the selector, expected "shardRange\("/, 48],
      ["shardRange(object.metadata.uid, '0x0", /unterminated string literal for the start/, 32],
    ];
    for (const [text, detail, position] of cases) {
      const error = parseError(text);
      expect(error.message, text).to.match(detail);
      expect(error.message.startsWith(`shardSelector: Invalid value: ${JSON.stringify(text)}: `), text).to.equal(true);
      expect(error.position, text).to.equal(position);
    }
  });

  it('never throws anything but a ShardSelectorError, whatever the text', () => {
    fc.assert(fc.property(fc.string(), (s) => {
      try {
        parseShardSelector(s);
      } catch (error) {
        return error instanceof ShardSelectorError;
      }
      return true;
    }));
  });
});
