import { expect } from 'chai';
import fc from 'fast-check';
import { DEPTH, FIELDS, PARENT, VALUE_END, VALUE_START, jsonSpans, memberKey, scanObject, type JsonSpans } from '../../src/compact/jsonSpans.js';

/** The members the scanner found, as `depth parent key = value` lines, values as their text. */
function members(text: string, maxDepth = 2): string[] {
  const buf = Buffer.from(text);
  const spans = jsonSpans(1);
  const error = scanObject(buf, 0, buf.length, maxDepth, spans);
  expect(error, `${text} scans`).to.equal(undefined);
  return described(buf, spans);
}

function described(buf: Buffer, spans: JsonSpans): string[] {
  const out: string[] = [];
  for (let m = 0; m < spans.count; m++) {
    const at = m * FIELDS;
    const value = buf.toString('utf8', spans.data[at + VALUE_START], spans.data[at + VALUE_END]);
    out.push(`${spans.data[at + DEPTH]} ${spans.data[at + PARENT]} ${memberKey(buf, spans, m)} = ${value}`);
  }
  return out;
}

function errorOf(text: string): string | undefined {
  const buf = Buffer.from(text);
  return scanObject(buf, 0, buf.length, 2, jsonSpans());
}

describe('jsonSpans: where the members of a JSON object are, without decoding it', () => {
  it('finds members and their values at the depths asked for, and no deeper', () => {
    expect(members('{"a":1,"b":{"c":[1,{"d":2}],"e":"x"},"f":null}')).to.deep.equal([
      '1 -1 a = 1',
      '1 -1 b = {"c":[1,{"d":2}],"e":"x"}',
      '2 1 c = [1,{"d":2}]',
      '2 1 e = "x"',
      '1 -1 f = null',
    ]);
    expect(members('{"a":{"b":{"c":1}}}', 1)).to.deep.equal(['1 -1 a = {"b":{"c":1}}']);
    expect(members(' { } ')).to.deep.equal([]);
  });

  it('is not fooled by braces, brackets, quotes, colons and commas inside strings', () => {
    expect(members('{"k:{\\"uid\\"}":{"}":"{[,:"},"b":"]}"}')).to.deep.equal(['1 -1 k:{"uid"} = {"}":"{[,:"}', '2 0 } = "{[,:"', '1 -1 b = "]}"']);
  });

  it('reads escapes: an escaped quote, a backslash before the closing quote, and \\u escapes', () => {
    expect(members('{"a":"say \\"hi\\"","b":"ends in \\\\","c\\u0041":"\\u00e9\\ud83d\\ude00"}')).to.deep.equal([
      '1 -1 a = "say \\"hi\\""',
      '1 -1 b = "ends in \\\\"',
      '1 -1 cA = "\\u00e9\\ud83d\\ude00"',
    ]);
  });

  it('keeps byte offsets right across multi-byte UTF-8', () => {
    expect(members('{"名前":"ünï 😀","b":{"ключ":"значение"}}')).to.deep.equal(['1 -1 名前 = "ünï 😀"', '1 -1 b = {"ключ":"значение"}', '2 1 ключ = "значение"']);
  });

  it('reports what is not a JSON object instead of throwing', () => {
    const cases: [string, string][] = [
      ['', 'no JSON object'],
      ['[1]', 'not a JSON object'],
      ['"x"', 'not a JSON object'],
      ['{"a":"unterminated', 'unterminated string'],
      ['{"a":1', 'ended before the object did'],
      ['{"a" 1}', 'expected ":"'],
      ['{"a":1,}', 'expected a key'],
      ['{"a":1 "b":2}', 'expected ","'],
      ['{"a":tru}', 'not a JSON value'],
      ['{"a":01}', 'expected ","'],
      ['{"a":1.}', 'not a JSON value'],
      ['{"a":-}', 'not a JSON value'],
      ['{"a":[1,]}', 'not a JSON value'],
      ['{"a":[1}', 'expected ","'],
      ['{"a":1}}', 'unexpected text after the object'],
      ['{"a":1} x', 'unexpected text after the object'],
      ['{a:1}', 'expected a key'],
    ];
    for (const [text, reason] of cases) expect(errorOf(text), text).to.contain(reason);
    for (const ok of ['{"a":-0.5e+10}', '{"a":[true,false,null,0,"",{},[]]}', '{"a":1E3}']) expect(errorOf(ok), ok).to.equal(undefined);
  });

  it('stops after the member asked for, leaving the rest unread', () => {
    const text = '{"kind":"Pod","metadata":{"name":"a"},"spec":{ not even JSON';
    const buf = Buffer.from(text);
    const spans = jsonSpans();
    expect(scanObject(buf, 0, buf.length, 2, spans, 'metadata')).to.equal(undefined);
    expect(text.slice(spans.stopped)).to.equal(',"spec":{ not even JSON');
    expect(described(buf, spans)).to.deep.equal(['1 -1 kind = "Pod"', '1 -1 metadata = {"name":"a"}', '2 1 name = "a"']);
    // A scalar member stops it too; without one of that key it reads to the end.
    expect(scanObject(Buffer.from('{"metadata":7,"x"'), 0, 17, 2, spans, 'metadata')).to.equal(undefined);
    expect(spans.stopped).to.equal(13);
    expect(scanObject(Buffer.from('{"a":1}'), 0, 7, 2, spans, 'metadata')).to.equal(undefined);
    expect(spans.stopped).to.equal(-1);
  });

  it('reads nesting deeper than its first stack, and reuses its scratch across scans, a failed one included', () => {
    const spans = jsonSpans(1);
    const deep = `{"a":${'['.repeat(100)}{"x":1}${']'.repeat(100)},"b":${'{"c":'.repeat(50)}2${'}'.repeat(50)}}`;
    const buf = Buffer.from(deep);
    expect(scanObject(buf, 0, buf.length, 2, spans)).to.equal(undefined);
    expect(spans.kinds.length).to.be.greaterThanOrEqual(101);
    expect(described(buf, spans)).to.deep.equal([
      `1 -1 a = ${'['.repeat(100)}{"x":1}${']'.repeat(100)}`,
      `1 -1 b = ${'{"c":'.repeat(50)}2${'}'.repeat(50)}`,
      `2 1 c = ${'{"c":'.repeat(49)}2${'}'.repeat(49)}`,
    ]);
    // Cut short inside 30 open containers, then an ordinary object with the same spans.
    expect(errorOf(`{"a":${'['.repeat(30)}`)).to.equal('the text ended before the object did');
    const cut = Buffer.from(`{"a":${'{"b":'.repeat(30)}`);
    expect(scanObject(cut, 0, cut.length, 2, spans)).to.equal('the text ended before the object did');
    expect(members('{"a":{"b":1},"c":[2]}')).to.deep.equal(['1 -1 a = {"b":1}', '2 0 b = 1', '1 -1 c = [2]']);
    const next = Buffer.from('{"a":{"b":1},"c":[2]}');
    expect(scanObject(next, 0, next.length, 2, spans)).to.equal(undefined);
    expect(described(next, spans)).to.deep.equal(['1 -1 a = {"b":1}', '2 0 b = 1', '1 -1 c = [2]']);
  });

  it('accepts exactly what JSON.parse accepts as an object, and finds the members JSON.parse finds (property)', () => {
    const spans = jsonSpans(1);
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }), fc.constantFrom(undefined, 1, '\t'), (object, indent) => {
        const text = JSON.stringify(object, null, indent);
        const buf = Buffer.from(text);
        expect(scanObject(buf, 0, buf.length, 1, spans)).to.equal(undefined);
        const found: [string, unknown][] = [];
        for (let m = 0; m < spans.count; m++) {
          found.push([memberKey(buf, spans, m), JSON.parse(buf.toString('utf8', spans.data[m * FIELDS + VALUE_START], spans.data[m * FIELDS + VALUE_END]))]);
        }
        expect(found).to.deep.equal(Object.entries(JSON.parse(text) as object));
      }),
      { numRuns: 500 },
    );
    // Valid objects with one character deleted, inserted or replaced: what the scanner accepts is what JSON.parse does.
    const mutated = fc
      .tuple(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }), fc.nat(), fc.constantFrom(...'{}[]":,\\ 0-.eE+tfnaxl'), fc.constantFrom('delete', 'insert', 'replace'))
      .map(([object, at, c, how]) => {
        const text = JSON.stringify(object);
        const i = at % (text.length + 1);
        if (how === 'delete') return text.slice(0, i) + text.slice(i + 1);
        if (how === 'insert') return text.slice(0, i) + c + text.slice(i);
        return text.slice(0, i) + c + text.slice(i + 1);
      });
    fc.assert(
      fc.property(mutated, (text) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        const isObject = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
        // Strings are not looked into: an escape JSON.parse rejects is for it to find, when the string is decoded.
        if (!isObject && /\\[^"\\/bfnrtu]|\\u(?![0-9a-fA-F]{4})|\\$/.test(text) && errorOf(text) === undefined) return;
        expect(errorOf(text) === undefined, text).to.equal(isObject);
      }),
      { numRuns: 2000 },
    );
  });
});
