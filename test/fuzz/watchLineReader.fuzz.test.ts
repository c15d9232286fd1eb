import { expect } from 'chai';
import fc from 'fast-check';
import { MalformedWatchLineError, WatchLineReader, type WatchLine } from '../../src/sources/watchLineReader.js';

/**
 * The watch line reader fed random bytes, valid and broken NDJSON, cut into random chunks:
 * every non-blank line is exactly one event or one MalformedWatchLineError, nothing else is
 * thrown, where the cuts fall changes nothing, and valid lines come out as they went in.
 */

interface Result {
  events: WatchLine[];
  malformed: MalformedWatchLineError[];
}

function read(chunks: Buffer[]): Result {
  const result: Result = { events: [], malformed: [] };
  const reader = new WatchLineReader(
    (event) => result.events.push(event),
    (error) => result.malformed.push(error),
  );
  for (const chunk of chunks) reader.push(chunk);
  reader.end();
  expect(reader.buffered, 'nothing is held after the end').to.equal(0);
  return result;
}

/** Cuts `bytes` at random points (empty chunks included). */
function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [0, ...cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b), bytes.length];
  return points.slice(1).map((end, i) => bytes.subarray(points[i], end));
}

/** How many lines the reader must report: blank ones (only spaces and a trailing CR) do not count. */
function countLines(bytes: Buffer): number {
  let count = 0;
  let start = 0;
  for (;;) {
    let end = bytes.indexOf(0x0a, start);
    const last = end === -1;
    if (last) end = bytes.length;
    let e = end;
    while (e > start && (bytes[e - 1] === 0x0d || bytes[e - 1] === 0x20)) e--;
    if (e > start) count++;
    if (last) return count;
    start = end + 1;
  }
}

const objectValue = fc.oneof(
  fc.record({ metadata: fc.record({ name: fc.string({ unit: 'grapheme', maxLength: 12 }), resourceVersion: fc.string({ maxLength: 4 }) }) }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
);
const validEvent = fc.record({ type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR', 'weird'), object: objectValue });
const lineEnd = fc.constantFrom('\n', '\r\n', ' \n', '\n\n', '\n  \n');

/** A line of every kind: valid, truncated, not an object, missing fields, random bytes. */
const anyLine: fc.Arbitrary<{ text: Buffer; valid?: WatchLine }> = fc.oneof(
  { weight: 4, arbitrary: validEvent.map((e) => ({ text: Buffer.from(JSON.stringify(e)), valid: e as WatchLine })) },
  {
    weight: 2,
    arbitrary: fc.tuple(validEvent, fc.nat()).map(([e, n]) => {
      const text = JSON.stringify(e);
      return { text: Buffer.from(text.slice(0, n % text.length)) };
    }),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => ({ text: Buffer.from(JSON.stringify(v) ?? 'null') })) },
  { weight: 1, arbitrary: fc.record({ type: fc.jsonValue({ maxDepth: 1 }), object: fc.jsonValue({ maxDepth: 2 }) }).map((v) => ({ text: Buffer.from(JSON.stringify(v)) })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => ({ text: Buffer.from(b.filter((x) => x !== 0x0a)) })) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).map((s) => ({ text: Buffer.from(s.replace(/\n/g, '')) })) },
);

const stream = fc.array(fc.tuple(anyLine, lineEnd), { maxLength: 12 }).map((lines) => ({
  bytes: Buffer.concat(lines.flatMap(([line, end]) => [line.text, Buffer.from(end)])),
  lines: lines.map(([line]) => line),
}));

describe('fuzz: watch line reader', () => {
  it('reports every non-blank line of random bytes, however cut, as one event or one MalformedWatchLineError', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      fc.array(fc.constantFrom(...'{}[]":,\\ \r\n\t'.split(''), 'null', '"type"', '"object"', 'é', '\ud83d', '\ude00'), { maxLength: 80 }).map((parts) => Buffer.from(parts.join(''))),
    );
    fc.assert(
      fc.property(bytes, fc.array(fc.nat(), { maxLength: 10 }), (input, cuts) => {
        const whole = read([input]);
        const pieces = read(chunked(input, cuts));
        expect(whole.events.length + whole.malformed.length).to.equal(countLines(input));
        for (const error of whole.malformed) expect(error).to.be.instanceOf(MalformedWatchLineError);
        expect(pieces.events).to.deep.equal(whole.events);
        expect(pieces.malformed.map((e) => e.message)).to.deep.equal(whole.malformed.map((e) => e.message));
      }),
      { numRuns: 3000 },
    );
  });

  it('reads mixed valid and broken NDJSON, however cut: each valid line is its event, in order, each broken line an error', () => {
    fc.assert(
      fc.property(stream, fc.array(fc.nat(), { maxLength: 16 }), ({ bytes, lines }, cuts) => {
        const result = read(chunked(bytes, cuts));
        const nonBlank = lines.filter((l) => countLines(l.text) > 0);
        expect(result.events.length + result.malformed.length).to.equal(nonBlank.length);
        const expected = nonBlank.filter((l) => l.valid !== undefined).map((l) => l.valid);
        // A generated broken line may happen to be a valid event; only the valid ones are known exactly.
        expect(result.events.length).to.be.at.least(expected.length);
        const seen = result.events.map((e) => JSON.stringify(e));
        let from = 0;
        for (const event of expected) {
          const at = seen.indexOf(JSON.stringify(event), from);
          expect(at, `event ${JSON.stringify(event)} in order`).to.be.at.least(from);
          from = at + 1;
        }
        for (const error of result.malformed) {
          expect(error.reason).to.match(/^(not JSON|not a JSON object|no "type"|no "object")/);
          expect(error.offset + error.length).to.be.at.most(bytes.length);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('reads a very long line cut into many small chunks as one event', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 10_000, max: 200_000 }), (size, length) => {
        const event = { type: 'ADDED', object: { metadata: { name: 'n' }, data: { big: 'é'.repeat(length) } } };
        const bytes = Buffer.from(`${JSON.stringify(event)}\n`);
        const chunks: Buffer[] = [];
        for (let i = 0; i < bytes.length; i += size * 1024) chunks.push(bytes.subarray(i, i + size * 1024));
        const result = read(chunks);
        expect(result.malformed).to.deep.equal([]);
        expect(result.events).to.deep.equal([event]);
      }),
      { numRuns: 20 },
    );
  });
});
