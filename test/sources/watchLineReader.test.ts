import { expect } from 'chai';
import fc from 'fast-check';
import { MalformedWatchLineError, WatchLineReader, type WatchLine } from '../../src/sources/watchLineReader.js';

function read(chunks: (string | Buffer)[]) {
  const events: WatchLine[] = [];
  const malformed: MalformedWatchLineError[] = [];
  const reader = new WatchLineReader(
    (e) => events.push(e),
    (e) => malformed.push(e),
  );
  for (const chunk of chunks) reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  reader.end();
  return { events, malformed, reader };
}

const line = (type: string, name: string) => `${JSON.stringify({ type, object: { metadata: { name } } })}\n`;

describe('WatchLineReader', () => {
  it('reads several events from one chunk, in order', () => {
    const { events } = read([line('ADDED', 'a') + line('MODIFIED', 'a') + line('DELETED', 'b')]);
    expect(events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED']);
  });

  it('joins a line cut across chunks, wherever the cuts fall', () => {
    const text = line('ADDED', 'a') + line('MODIFIED', 'ünïcödé-名前') + line('DELETED', 'c');
    const bytes = Buffer.from(text);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), bytes.length];
        const chunks = points.slice(1).map((end, i) => bytes.subarray(points[i], end));
        const { events, malformed } = read(chunks);
        expect(malformed).to.deep.equal([]);
        expect(events.map((e) => (e.object as { metadata: { name: string } }).metadata.name)).to.deep.equal(['a', 'ünïcödé-名前', 'c']);
      }),
    );
  });

  it('keeps only the unfinished line buffered between chunks', () => {
    const { reader } = read([]);
    reader.push(Buffer.from(line('ADDED', 'a') + '{"type":"MOD'));
    expect(reader.buffered).to.equal('{"type":"MOD'.length);
  });

  it('reads a last line that has no newline when the response ends', () => {
    const { events } = read([line('ADDED', 'a').trimEnd()]);
    expect(events).to.have.length(1);
  });

  it('skips blank keep-alive lines and tolerates CRLF', () => {
    const { events, malformed } = read(['\n', '  \n', line('ADDED', 'a').replace('\n', '\r\n'), '\n']);
    expect(events).to.have.length(1);
    expect(malformed).to.deep.equal([]);
  });

  it('reports each malformed line with what was wrong and goes on reading', () => {
    const { events, malformed } = read([
      '{"type":"ADDED","object":{"metadata"\n',
      '[1,2]\n',
      '{"object":{}}\n',
      '{"type":"ADDED","object":"x"}\n',
      line('ADDED', 'after'),
    ]);
    expect(malformed.map((m) => m.reason.split(':')[0])).to.deep.equal(['not JSON', 'not a JSON object', 'no "type"', 'no "object"']);
    expect(malformed[0]?.message).to.match(/^malformed watch line \(not JSON: [^"]*\) at byte 0 of the response, 36 bytes$/);
    expect(malformed.map((m) => [m.offset, m.length])).to.deep.equal([[0, 36], [37, 5], [43, 13], [57, 29]]);
    expect(events).to.have.length(1);
  });

  it('never carries the line in its report: the reason, where the line starts and its length, wherever the chunks are cut', () => {
    const secretLine = '{"type":"ADDED","object":{"kind":"Secret","data":{"password":"c2VjcmV0LXZhbHVl"}}';
    const before = line('ADDED', 'a');
    const { malformed } = read([before.slice(0, 10), before.slice(10) + secretLine.slice(0, 30), `${secretLine.slice(30)}\n`, `${'x'.repeat(10_000)}\n`]);
    expect(malformed.map((m) => [m.offset, m.length])).to.deep.equal([
      [before.length, secretLine.length],
      [before.length + secretLine.length + 1, 10_000],
    ]);
    for (const m of malformed) {
      expect(JSON.stringify({ ...m, message: m.message })).not.to.match(/c2VjcmV0|password|Secret|xxxx/);
    }
  });

  it('never throws on random bytes: every line is an event or a report', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 10 }), (chunks) => {
        const { events, malformed } = read(chunks.map((c) => Buffer.from(c)));
        const text = Buffer.concat(chunks.map((c) => Buffer.from(c))).toString('utf8');
        const lines = text.split('\n').filter((l) => l.replace(/[\r ]+$/, '') !== '');
        expect(events.length + malformed.length).to.equal(lines.length);
      }),
    );
  });
  it('skips a line longer than the cap, whether it comes in one chunk or many, telling its length, holding no more than the cap, and reads on', () => {
    const big = line('MODIFIED', 'x'.repeat(5000));
    const text = line('ADDED', 'a') + big + line('DELETED', 'b') + big;
    const bytes = Buffer.from(text);
    for (const size of [bytes.length, 700, 64]) {
      const events: string[] = [];
      const oversized: number[] = [];
      let mostHeld = 0;
      const reader = new WatchLineReader(
        (e) => events.push(e.type),
        () => expect.fail('no line is malformed'),
        1000,
        (n) => oversized.push(n),
      );
      for (let i = 0; i < bytes.length; i += size) {
        reader.push(bytes.subarray(i, i + size));
        mostHeld = Math.max(mostHeld, reader.buffered);
      }
      reader.end();
      expect(events, `chunks of ${size}`).to.deep.equal(['ADDED', 'DELETED']);
      expect(oversized).to.deep.equal([big.length - 1, big.length - 1]);
      expect(mostHeld).to.be.at.most(1000 + size);
    }
  });
});
