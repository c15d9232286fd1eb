import { expect } from 'chai';
import fc from 'fast-check';
import { ListBodyParser, type ListHead, type OversizedItem } from '../../src/sources/listBodyParser.js';

function parse(chunks: (string | Buffer)[], maxItemBytes?: number, stopAfter = Infinity) {
  const items: { entry: unknown; head: ListHead }[] = [];
  const oversized: OversizedItem[] = [];
  const parser = new ListBodyParser(
    {
      item: (entry, head) => {
        items.push({ entry, head });
        return items.length >= stopAfter;
      },
      oversized: (item) => oversized.push(item),
    },
    maxItemBytes,
  );
  for (const chunk of chunks) parser.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return { items, oversized, parser, end: parser.done ? undefined : parser.end() };
}

/** Cuts `bytes` at the given points. */
function cut(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [0, ...[...cuts].sort((a, b) => a - b), bytes.length];
  return points.slice(1).map((to, i) => bytes.subarray(points[i], to));
}

const list = (items: unknown[], metadata: Record<string, unknown> = { resourceVersion: '7' }) =>
  JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata, items });

describe('ListBodyParser', () => {
  it('hands over each item with the list kind, version and metadata (shardInfo included), and returns the envelope without items', () => {
    const { items, end } = parse([list([{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }], { resourceVersion: '7', continue: 'x' })]);
    expect(items.map((i) => i.entry)).to.deep.equal([{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }]);
    expect(items[0]?.head).to.deep.equal({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '7', continue: 'x' } });
    const sharded = parse([list([{ metadata: { name: 'a' } }], { resourceVersion: '7', shardInfo: { selector: 's' } })]);
    expect(sharded.items[0]?.head.metadata).to.deep.equal({ resourceVersion: '7', shardInfo: { selector: 's' } });
    expect(end).to.deep.equal({ envelope: { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '7', continue: 'x' } } });
  });

  it('gives the same items and envelope however the bytes are cut into chunks', () => {
    const tricky = [
      { metadata: { name: 'a', annotations: { q: 'a "quoted" ]}, {[ string \\\\', u: 'ünïcödé-名前' } } },
      { metadata: { name: 'b' }, data: { items: '[1,2]' }, list: [[], {}, [{}]] },
      'a string item',
      42,
      null,
      { metadata: { name: 'c' } },
    ];
    const body = Buffer.from(list(tricky, { resourceVersion: '9', remainingItemCount: 0 }));
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: body.length - 1 }), { maxLength: 20 }), (cuts) => {
        const { items, end } = parse(cut(body, cuts));
        expect(items.map((i) => i.entry)).to.deep.equal(tricky);
        expect(end).to.deep.equal({ envelope: { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '9', remainingItemCount: 0 } } });
      }),
    );
  });

  it('gives every item of any JSON list back as JSON.parse reads it, however the bytes are cut', () => {
    // Strings full of quotes, backslashes, brackets and multi-byte characters, nested at any depth.
    const text = fc.string({ unit: fc.constantFrom('"', '\\', '{', '}', '[', ']', ',', ':', 'a', 'é', '名', ' ') });
    const value = fc.letrec((tie) => ({
      json: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('json'), { maxLength: 4 }), fc.dictionary(text, tie('json'), { maxKeys: 4 })),
    })).json;
    fc.assert(
      fc.property(fc.array(value, { maxLength: 6 }), fc.uniqueArray(fc.nat(), { maxLength: 12 }), (items, cuts) => {
        const body = Buffer.from(list(items));
        const { items: got, end } = parse(cut(body, cuts.map((c) => 1 + (c % Math.max(1, body.length - 1)))));
        expect(got.map((i) => i.entry)).to.deep.equal(JSON.parse(JSON.stringify(items)));
        expect(end).to.deep.equal({ envelope: { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '7' } } });
      }),
      { numRuns: 300 },
    );
  });

  it('reads metadata sent after the items, and holds items until a kind sent after them is known', () => {
    const body = '{"items":[{"metadata":{"name":"a"}}],"metadata":{"resourceVersion":"3"},"kind":"ConfigMapList","apiVersion":"v1"}';
    const { items, end } = parse([body]);
    expect(items).to.deep.equal([{ entry: { metadata: { name: 'a' } }, head: { metadata: { resourceVersion: '3' }, kind: 'ConfigMapList', apiVersion: 'v1' } }]);
    expect(end).to.deep.equal({ envelope: { metadata: { resourceVersion: '3' }, kind: 'ConfigMapList', apiVersion: 'v1' } });
  });

  it('reads a list with no items, with items null, or without items', () => {
    for (const body of [list([]), '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":null}', '{"metadata":{"resourceVersion":"1"}}']) {
      const { items, end } = parse([body]);
      expect(items).to.deep.equal([]);
      expect(end && 'envelope' in end).to.equal(true);
    }
  });

  it('skips an item larger than the cap, reporting its size and first bytes, and goes on with the rest', () => {
    const big = { metadata: { name: 'big' }, data: { x: 'y'.repeat(5000) } };
    const body = Buffer.from(list([{ metadata: { name: 'a' } }, big, { metadata: { name: 'c' } }]));
    const { items, oversized, end } = parse(cut(body, [100, 1000, 3000]), 1000);
    expect(items.map((i) => (i.entry as { metadata: { name: string } }).metadata.name)).to.deep.equal(['a', 'c']);
    expect(oversized).to.have.length(1);
    expect(oversized[0]?.bytes).to.equal(JSON.stringify(big).length);
    expect(oversized[0]?.head).to.match(/^\{"metadata":\{"name":"big"\}/);
    expect(end && 'envelope' in end).to.equal(true);
    // The same item whole in one chunk, and cut so that its first piece alone is past the cap.
    for (const chunks of [[body], cut(body, [40, 2000])]) {
      const whole = parse(chunks, 1000);
      expect(whole.items.map((i) => (i.entry as { metadata: { name: string } }).metadata.name)).to.deep.equal(['a', 'c']);
      expect(whole.oversized.map((o) => [o.bytes, o.head])).to.deep.equal([[JSON.stringify(big).length, JSON.stringify(big).slice(0, 200)]]);
    }
  });

  it('says what is wrong with an answer that is not a list, cut short, or has a broken item', () => {
    const error = (chunks: string[]) => {
      const r = parse(chunks);
      return r.end && 'error' in r.end ? r.end.error : r.parser.error;
    };
    expect(error(['[1,2]'])).to.equal('the answer is not a JSON object');
    expect(error(['<html>'])).to.equal('the answer is not a JSON object');
    expect(error([list([{ a: 1 }]).slice(0, 30)])).to.equal('the answer ended before the list did');
    expect(error(['{"items":[{"a":1}}]}'])).to.match(/^an item is not JSON/);
    expect(error(['{"items":{"a":1}}'])).to.equal('its "items" is not an array');
    expect(error(['{"kind": oops}'])).to.match(/^the answer is not JSON/);
    expect(error([''])).to.equal('the answer ended before the list did');
  });

  it('stops reading when the handler asks it to', () => {
    const { items, parser } = parse([list([{ a: 1 }, { a: 2 }, { a: 3 }])], undefined, 2);
    expect(items).to.have.length(2);
    expect(parser.done).to.equal(true);
  });
});
