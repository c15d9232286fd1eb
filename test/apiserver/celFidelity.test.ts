import { expect } from 'chai';
import { compileSchema, schemaErrors, validateCustomResource, type CompiledSchema } from '../../src/apiserver/validation/compiledSchema.js';
import { escapePropertyName } from '../../src/apiserver/validation/cel/escaping.js';

/**
 * CEL and schema keywords as kube-apiserver 1.32 has them, without a
 * server: property names escaped for rules, the format, optional and
 * semver libraries, cost limits, and the combinators anyOf, oneOf, allOf
 * and not.
 */

const schemaPath = 'spec.validation.openAPIV3Schema';
const object = (spec: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'x.io/v1', kind: 'X', metadata: { name: 'n' }, spec });
const rule = (text: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ rule: text, ...extra });
const root = (spec: Record<string, unknown>): Record<string, unknown> => ({ type: 'object', properties: { spec } });

function shown(e: { field: string; type: string; shown?: string; detail: string }): string {
  return `${e.field}: ${e.type}${e.shown === undefined ? '' : `: ${e.shown}`}${e.detail === '' ? '' : `: ${e.detail}`}`;
}

function compiled(spec: Record<string, unknown>): CompiledSchema {
  const c = compileSchema(root(spec));
  if (c === undefined) throw new Error('no schema');
  expect(c.rules.errors.map(shown)).to.deep.equal([]);
  return c;
}

function messages(c: CompiledSchema, spec: Record<string, unknown>): string[] {
  return validateCustomResource(c, object(spec)).errors.map(shown);
}

function refusal(spec: Record<string, unknown>): string[] {
  return schemaErrors(root(spec), schemaPath).map(shown);
}

describe('CEL: property names escaped as kube escapes them', () => {
  it('escapes reserved words, __, ., - and /, and gives no name to what CEL cannot spell', () => {
    const table: [string, string | undefined][] = [
      ['namespace', '__namespace__'], ['if', '__if__'], ['in', '__in__'], ['true', '__true__'],
      ['a-b', 'a__dash__b'], ['a.b', 'a__dot__b'], ['a/b', 'a__slash__b'], ['a__b', 'a__underscores__b'],
      ['__x', '__underscores__x'], ['plain_name1', 'plain_name1'], ['-x', '__dash__x'],
      ['1a', undefined], ['a b', undefined], ['a:b', undefined], ['', undefined], ['é', undefined],
    ];
    for (const [name, escaped] of table) expect(escapePropertyName(name), name).to.equal(escaped);
  });

  const spec = {
    type: 'object',
    properties: {
      namespace: { type: 'string' },
      'if': { type: 'string' },
      'in': { type: 'string' },
      'a-b': { type: 'string' },
      'a.b': { type: 'string' },
      'a/b': { type: 'string' },
      'a__b': { type: 'string' },
      'x:y': { type: 'string' },
      refs: {
        type: 'array',
        items: { type: 'object', properties: { namespace: { type: 'string' }, name: { type: 'string' } } },
        'x-kubernetes-validations': [rule("self.all(p1, self.exists_one(p2, p1.name == p2.name && (has(p1.__namespace__) ? p1.__namespace__ : '') == (has(p2.__namespace__) ? p2.__namespace__ : '')))", { message: 'refs must be unique' })],
      },
    },
    'x-kubernetes-validations': [
      rule("!has(self.__namespace__) || self.__namespace__ != 'kube-system'", { message: 'not kube-system' }),
      rule("!has(self.__if__) || self.__if__ == self.__in__", { message: 'if equals in' }),
      rule("!has(self.a__dash__b) || self.a__dash__b == self.a__dot__b + self.a__slash__b + self.a__underscores__b", { message: 'dash joins' }),
    ],
  };

  it('lets rules read escaped names (has() too), as the Gateway API route CRDs do', () => {
    const c = compiled(spec);
    expect(messages(c, { namespace: 'default', if: 'x', in: 'x', 'a-b': 'abc', 'a.b': 'a', 'a/b': 'b', a__b: 'c', refs: [{ name: 'a' }, { name: 'a', namespace: 'n' }] })).to.deep.equal([]);
    expect(messages(c, { namespace: 'kube-system', if: 'x', in: 'y', 'a-b': 'abd', 'a.b': 'a', 'a/b': 'b', a__b: 'c', refs: [{ name: 'a', namespace: 'n' }, { name: 'a', namespace: 'n' }] })).to.deep.equal([
      'spec: Invalid value: "object": not kube-system',
      'spec: Invalid value: "object": if equals in',
      'spec: Invalid value: "object": dash joins',
      'spec.refs: Invalid value: "array": refs must be unique',
    ]);
  });

  it('shows the real names in error paths, for a failing rule on an escaped property and its fieldPath', () => {
    const c = compiled({
      type: 'object',
      properties: {
        'a-b': { type: 'string', 'x-kubernetes-validations': [rule("self != 'bad'")] },
        namespace: { type: 'object', properties: { 'x.y': { type: 'integer' } }, 'x-kubernetes-validations': [rule('self.x__dot__y < 3', { fieldPath: "['x.y']", message: 'small' })] },
      },
    });
    expect(messages(c, { 'a-b': 'bad', namespace: { 'x.y': 5 } })).to.deep.equal(['spec.a-b: Invalid value: "string": failed rule: self != \'bad\'', 'spec.namespace[x.y]: Invalid value: "object": small']);
  });

  it('refuses a rule that reads a property by its unescaped name, as kube says (undefined field)', () => {
    expect(refusal({ type: 'object', properties: { namespace: { type: 'string' } }, 'x-kubernetes-validations': [rule("self.namespace == 'a'")] })).to.deep.equal([
      `${schemaPath}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.namespace == 'a'", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined field 'namespace'\n | self.namespace == 'a'\n | ....^`,
    ]);
  });

  it('hides a property CEL cannot name from rules (undefined field)', () => {
    expect(refusal({ type: 'object', properties: { 'x:y': { type: 'string' } }, 'x-kubernetes-validations': [rule('has(self.x__colon__y)')] })[0]).to.contain("undefined field 'x__colon__y'");
  });
});
