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
        // Bounded as Gateway API bounds its parentRefs: without bounds, kube estimates this rule over its cost limit.
        type: 'array',
        maxItems: 32,
        items: { type: 'object', properties: { namespace: { type: 'string', maxLength: 63 }, name: { type: 'string', maxLength: 253 } } },
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

describe('Schemas: allOf, anyOf, oneOf and not', () => {
  // The shape of a Gateway's spec.addresses items: kubernetes-sigs/gateway-api v1.6.1,
  // config/crd/standard/gateway.networking.k8s.io_gateways.yaml (descriptions and the rule left out).
  const addresses = {
    type: 'object',
    properties: {
      addresses: {
        type: 'array',
        maxItems: 16,
        items: {
          type: 'object',
          oneOf: [{ properties: { type: { enum: ['IPAddress'] }, value: { anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] } } }, { properties: { type: { not: { enum: ['IPAddress'] } } } }],
          properties: { type: { type: 'string', default: 'IPAddress', maxLength: 253, minLength: 1 }, value: { type: 'string', maxLength: 253 } },
        },
      },
    },
  };

  it('oneOf of anyOf: a Gateway address that is no IP is refused with kube-openapi\'s messages and the best branch\'s errors', () => {
    const c = compiled(addresses);
    expect(messages(c, { addresses: [{ value: '1.2.3.4' }, { type: 'IPAddress', value: '::1' }, { type: 'Hostname', value: 'example.com' }] })).to.deep.equal([]);
    expect(messages(c, { addresses: [{ type: 'IPAddress', value: '1.2.3.4:8080' }] })).to.deep.equal([
      '<nil>: Invalid value: "": "spec.addresses[0]" must validate one and only one schema (oneOf). Found none valid',
      '<nil>: Invalid value: "": "spec.addresses[0].value" must validate at least one schema (anyOf)',
      'spec.addresses[0].value: Invalid value: "1.2.3.4:8080": spec.addresses[0].value in body must be of type ipv4: "1.2.3.4:8080"',
    ]);
  });

  it('oneOf: two valid branches are refused too; allOf reports every failing branch; not refuses what its schema accepts', () => {
    const c = compiled({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'string' }, n: { type: 'integer' }, s: { type: 'string' } },
      oneOf: [{ required: ['a'] }, { required: ['b'] }],
    });
    expect(messages(c, { a: 'x' })).to.deep.equal([]);
    expect(messages(c, { a: 'x', b: 'y' })).to.deep.equal(['<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found 2 valid alternatives']);
    expect(messages(c, {})).to.deep.equal(['<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found none valid', 'spec.a: Required value']);
    const all = compiled({ type: 'object', properties: { n: { type: 'integer', allOf: [{ minimum: 2 }, { maximum: 5 }, { multipleOf: 2 }] }, s: { type: 'string', not: { pattern: '^x' } } } });
    expect(messages(all, { n: 4, s: 'ab' })).to.deep.equal([]);
    expect(messages(all, { n: 7, s: 'xy' })).to.deep.equal([
      'spec.n: Invalid value: 7: spec.n in body should be less than or equal to 5',
      'spec.n: Invalid value: 7: spec.n in body should be a multiple of 2',
      '<nil>: Invalid value: "": "spec.n" must validate all the schemas (allOf)',
      '<nil>: Invalid value: "": "spec.s" must not validate the schema (not)',
    ]);
    expect(messages(all, { n: 1 })).to.deep.include('<nil>: Invalid value: "": "spec.n" must validate all the schemas (allOf)');
    const none = compiled({ type: 'object', properties: { n: { type: 'integer', allOf: [{ minimum: 2 }, { minimum: 3 }] } } });
    expect(messages(none, { n: 1 })).to.include('<nil>: Invalid value: "": "spec.n" must validate all the schemas (allOf). None validated');
  });

  it('accepts int-or-string\'s anyOf of integer and string, and checks it', () => {
    const port = { type: 'object', properties: { port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }], allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { not: { enum: [0] } }] } } };
    expect(refusal(port)).to.deep.equal([]);
    expect(refusal({ type: 'object', properties: { port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string', maxLength: 3 }] } } })).to.deep.equal([
      `${schemaPath}.properties[spec].properties[port].anyOf[1].type: Forbidden: must be empty to be structural`,
      `${schemaPath}.properties[spec].properties[port].anyOf[0].type: Forbidden: must be empty to be structural`,
    ].sort());
    const c = compiled(port);
    expect(messages(c, { port: 80 })).to.deep.equal([]);
    expect(messages(c, { port: 'http' })).to.deep.equal([]);
    expect(messages(c, { port: 0 })).to.deep.equal(['<nil>: Invalid value: "": "spec.port" must not validate the schema (not)', '<nil>: Invalid value: "": "spec.port" must validate all the schemas (allOf)']);
    expect(messages(c, { port: 1.5 })).to.deep.include('<nil>: Invalid value: "": "spec.port" must validate at least one schema (anyOf)');
  });

  it('refuses, on CRD creation, types, defaults and other keywords inside them, and properties the structural schema lacks, in kube\'s words and order', () => {
    const at = `${schemaPath}.properties[spec]`;
    expect(
      refusal({
        type: 'object',
        properties: { a: { type: 'string' } },
        anyOf: [{ type: 'object', required: ['a'] }, { properties: { a: { default: 'x', description: 'd', nullable: true }, b: { maxLength: 3 }, metadata: {} } }],
        oneOf: [{ additionalProperties: { type: 'string' }, 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-validations': [rule('true')] }],
        not: { items: { 'x-kubernetes-list-type': 'set' }, 'x-kubernetes-map-type': 'atomic', title: 't' },
      }),
    ).to.deep.equal([
      `${at}.anyOf[0].type: Forbidden: must be empty to be structural`,
      `${at}.anyOf[1].properties[a].default: Forbidden: must be undefined to be structural`,
      `${at}.anyOf[1].properties[a].description: Forbidden: must be empty to be structural`,
      `${at}.anyOf[1].properties[a].nullable: Forbidden: must be false to be structural`,
      `${at}.anyOf[1].properties[metadata]: Forbidden: must not be specified in a nested context`,
      `${at}.not.items.x-kubernetes-list-type: Forbidden: must be undefined to be structural`,
      `${at}.not.title: Forbidden: must be empty to be structural`,
      `${at}.not.x-kubernetes-map-type: Forbidden: must be undefined to be structural`,
      `${at}.oneOf[0].additionalProperties: Forbidden: must be undefined to be structural`,
      `${at}.oneOf[0].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural`,
      `${at}.oneOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural`,
    ]);
    const rootAt = schemaPath;
    expect(schemaErrors({ type: 'object', properties: { spec: { type: 'object' } }, anyOf: [{ properties: { spec: { properties: { x: { minLength: 1 } } }, status: {} } }, { properties: { list: { items: {} } } }] }, schemaPath).map(shown)).to.deep.equal([
      `${rootAt}.properties[list]: Required value: because it is defined in ${rootAt}.anyOf[1].properties[list]`,
      `${rootAt}.properties[spec].properties[x]: Required value: because it is defined in ${rootAt}.anyOf[0].properties[spec].properties[x]`,
      `${rootAt}.properties[status]: Required value: because it is defined in ${rootAt}.anyOf[0].properties[status]`,
    ]);
  });
});

describe('CEL: optional syntax and values', () => {
  const spec = {
    type: 'object',
    properties: {
      tls: { type: 'object', properties: { mode: { type: 'string' }, port: { type: 'integer' } } },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      list: { type: 'array', items: { type: 'string' } },
    },
  };
  const passes = (text: string, value: Record<string, unknown>): void => {
    expect(messages(compiled({ ...spec, 'x-kubernetes-validations': [rule(text)] }), value), text).to.deep.equal([]);
  };

  it('a.?b and a[?k]: an optional that has a value when the field, key or index exists, and chains', () => {
    passes("self.?tls.?mode.orValue('none') == 'none' && !self.?tls.hasValue()", {});
    passes("self.?tls.?mode.orValue('none') == 'strict' && self.tls.?port.hasValue() == false", { tls: { mode: 'strict' } });
    passes("self.labels[?'app'].orValue('') == 'web' && !self.labels[?'x'].hasValue() && self.?labels['app'].value() == 'web'", { labels: { app: 'web' } });
    // Not `self.?list[0] == optional.of('a')`: kube knows the size of neither side and estimates the comparison over its cost limit.
    passes("self.list[?1].orValue('none') == 'b' && !self.list[?5].hasValue() && self.?list[0].orValue('') == 'a'", { list: ['a', 'b'] });
    passes("optional.none().or(optional.of(2)).value() == 2 && !optional.ofNonZeroValue('').hasValue() && optional.ofNonZeroValue(1).hasValue()", {});
    passes("'.?' == '.' + '?' && \"[?\" != ''", {});
  });

  it('a chained selection on an optional that has a value needs the field: no such key', () => {
    const c = compiled({ ...spec, 'x-kubernetes-validations': [rule("self.?tls.mode != optional.of('b')")] });
    expect(messages(c, {})).to.deep.equal([]);
    expect(messages(c, { tls: { mode: 'b' } })).to.have.length(1);
    expect(messages(c, { tls: { port: 1 } })).to.deep.equal(['spec: Invalid value: "object": no such key: mode evaluating rule: self.?tls.mode != optional.of(\'b\')']);
  });

  it('refuses an optional selection of a field the schema does not declare, and optional list entries', () => {
    expect(refusal({ ...spec, 'x-kubernetes-validations': [rule('self.?nope.hasValue()')] })[0]).to.contain("compilation failed: ERROR: <input>:1:5: undefined field 'nope'");
    expect(refusal({ ...spec, 'x-kubernetes-validations': [rule('self.?tls.?nope.hasValue() || self.?tls.mood.hasValue()')] })[0]).to.contain("undefined field 'nope'").and.to.contain("undefined field 'mood'");
    expect(refusal({ ...spec, 'x-kubernetes-validations': [rule('size([?self.?tls]) == 1')] })[0]).to.contain('optional list elements and map entries');
  });
});

describe('CEL: the format library', () => {
  const spec = { type: 'object', properties: { name: { type: 'string' } } };
  const passes = (text: string): void => {
    expect(messages(compiled({ ...spec, 'x-kubernetes-validations': [rule(text)] }), {}), text).to.deep.equal([]);
  };

  it('validate gives none for a valid string, else the list of kube\'s messages', () => {
    passes("!format.dns1123Label().validate('my-name').hasValue() && format.dns1123Label().validate('My_Name').value() == [\"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\"]");
    passes(`size(format.dns1123Label().validate('${'a'.repeat(64)}').value()) == 1 && format.dns1123Label().validate('${'a'.repeat(64)}').value()[0] == 'must be no more than 63 characters'`);
    passes("!format.dns1123Subdomain().validate('apiextensions.k8s.io').hasValue() && format.dns1123Subdomain().validate('a..b').hasValue()");
    passes("!format.dns1035Label().validate('abc-1').hasValue() && format.dns1035Label().validate('1abc').value()[0].startsWith('a DNS-1035 label must consist')");
    passes("!format.qualifiedName().validate('example.com/MyName').hasValue() && format.qualifiedName().validate('a/b/c').hasValue()");
    passes("!format.dns1123LabelPrefix().validate('my-prefix-').hasValue() && format.dns1123Label().validate('my-prefix-').hasValue()");
    passes("!format.dns1123SubdomainPrefix().validate('my.prefix-').hasValue() && !format.dns1035LabelPrefix().validate('abc-').hasValue()");
    passes("!format.labelValue().validate('').hasValue() && format.labelValue().validate('-x').hasValue()");
    passes("!format.uri().validate('http://example.com').hasValue() && format.uri().validate('relative').value() == ['parse \"relative\": invalid URI for request']");
    passes("!format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue() && format.uuid().validate('x').value() == ['does not match the UUID format']");
    passes("!format.byte().validate('aGVsbG8=').hasValue() && format.byte().validate('abc').value() == ['invalid base64']");
    passes("!format.date().validate('2021-01-01').hasValue() && format.date().validate('2021-13-01').value() == ['invalid date']");
    passes("!format.datetime().validate('2021-01-01T00:00:00Z').hasValue() && format.datetime().validate('2021-01-01').value() == ['invalid datetime']");
  });

  it('format.named gives an optional format, none for a name it does not know', () => {
    passes("format.named('dns1123Label').hasValue() && !format.named('nope').hasValue() && format.named('labelValue').value().validate('ok').orValue([]) == []");
  });

  it('serves a rule like Gateway API XBackend\'s port name rule, with its message', () => {
    const c = compiled({ type: 'object', properties: { name: { type: 'string', maxLength: 63, 'x-kubernetes-validations': [rule('size(self) == 0 || !format.dns1123Label().validate(self).hasValue()', { message: 'Name must be a valid DNS label' })] } } });
    expect(messages(c, { name: 'http' })).to.deep.equal([]);
    expect(messages(c, { name: 'HTTP' })).to.deep.equal(['spec.name: Invalid value: "string": Name must be a valid DNS label']);
  });
});

describe('CEL: libraries kube-apiserver 1.32 does not have', () => {
  it('refuses the semver library (kube adds it to CEL in 1.33), as kube 1.32 does: undeclared reference', () => {
    const refused = refusal({ type: 'object', properties: { v: { type: 'string' } }, 'x-kubernetes-validations': [rule("isSemver(self.v) && semver(self.v).major() == 1")] });
    expect(refused).to.have.length(1);
    expect(refused[0]).to.contain("compilation failed: ERROR: <input>:1:1: undeclared reference to 'isSemver' (in container '')").and.to.contain("undeclared reference to 'semver'");
  });
});
