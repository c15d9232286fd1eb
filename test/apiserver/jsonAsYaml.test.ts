import { expect } from 'chai';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { parseJsonAsYaml } from '../../src/apiserver/http/jsonAsYaml.js';

/** What parseYamlBody's YAML parser gives, or its error. */
function yaml(text: string): { value: unknown } | { error: string } {
  try {
    return { value: parseYaml(text, { schema: 'core', uniqueKeys: true }) as unknown };
  } catch (error) {
    return { error: String(error) };
  }
}

/** Equality that tells -0 from 0, and key order and own keys apart. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b);
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const ka = Reflect.ownKeys(a);
  const kb = Reflect.ownKeys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && same((a as Record<PropertyKey, unknown>)[k], (b as Record<PropertyKey, unknown>)[k]));
}

const space = fc.oneof(
  { weight: 30, arbitrary: fc.array(fc.constantFrom(' ', '\n', '\t'), { maxLength: 3 }).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: fc.constantFrom('\r\n', '\r') },
);
const stringContent = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('\u0085', '\u00a0', '\u2028', '\ufeff', '\ufffe', '\u0080', '- x', '? x', ': x', '#x', '&a', '*a', '!t', '%', '@', '`', "'", '~', 'null', 'true', '0x1F', '.inf', '<<', '__proto__', 'x'.repeat(1100)),
);
const string = stringContent.chain((s) => fc.constantFrom(JSON.stringify(s), JSON.stringify(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)));
const number = fc.oneof(
  fc.double().filter(Number.isFinite).map(String),
  fc
    .tuple(fc.constantFrom('', '-'), fc.constantFrom('0', '1', '123', '12345678901234567890123', '9007199254740993'), fc.constantFrom('', '.0', '.5'), fc.constantFrom('', 'e5', 'E-3', 'e+400', 'e-400'))
    .map((parts) => parts.join('')),
);
const { object: jsonText } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, string, number, fc.constantFrom('true', 'false', 'null'), tie('object'), tie('array')),
  object: fc
    .array(fc.tuple(space, fc.oneof(string, fc.constantFrom('"a"', '"b"')), space, space, tie('value'), space), { maxLength: 4 })
    .map((members) => `{${members.map(([a, key, b, c, value, d]) => `${a}${key}${b}:${c}${value as string}${d}`).join(',')}}`),
  array: fc.array(fc.tuple(space, tie('value'), space), { maxLength: 4 }).map((items) => `[${items.map(([a, value, b]) => `${a}${value as string}${b}`).join(',')}]`),
}));

describe('parseJsonAsYaml', () => {
  it('gives what the YAML parser gives for JSON, or leaves the text to it', () => {
    let taken = 0;
    fc.assert(
      fc.property(space, jsonText, space, (before, text, after) => {
        const body = `${before}${text as string}${after}`;
        const fast = parseJsonAsYaml(body, 1000);
        if (fast === undefined) return;
        taken++;
        const slow = yaml(body);
        expect(slow).to.have.property('value');
        expect(same(fast.value, (slow as { value: unknown }).value), body).to.equal(true);
      }),
      { numRuns: 3000 },
    );
    expect(taken).to.be.greaterThan(1000);
  });

  it('leaves to the YAML parser a repeated key, a carriage return, deep nesting, what is not a JSON object', () => {
    for (const text of ['{"a":1,"a":2}', '{"a":{"b":1,"b":1}}', '{"a":1}\r', '{"a":\r1}', `{"a":${'['.repeat(1001)}${']'.repeat(1001)}}`, '[1]', '"x"', 'a: 1', '{"a":1,}']) {
      expect(parseJsonAsYaml(text, 1000), text.slice(0, 40)).to.equal(undefined);
    }
  });

  it('reads a JSON object with JSON.parse, keys named like YAML syntax included', () => {
    expect(parseJsonAsYaml(' {"a": [1, {"b": null}], "? x": "- y", "__proto__": {"z": 1}}\n', 1000)?.value).to.deep.equal(JSON.parse('{"a": [1, {"b": null}], "? x": "- y", "__proto__": {"z": 1}}'));
  });
});
