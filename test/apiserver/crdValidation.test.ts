import { expect } from 'chai';
import fc from 'fast-check';
import type { KubeObject } from 'rxkube';
import { crdResourceTypes } from '../../src/apiserver/api/crd.js';
import { compileSchema, validateCustomResource, type CompiledSchema } from '../../src/apiserver/validation/compiledSchema.js';
import { stringFormatCheck } from '../../src/apiserver/validation/formats.js';
import { goFloat, goSharpV, goShown } from '../../src/apiserver/validation/goText.js';
import { parseQuantity } from '../../src/apiserver/validation/cel/quantity.js';
import { parseUrl } from '../../src/apiserver/validation/cel/url.js';
import { gadget, gadgetSchema } from '../integration/crdValidation.fixtures.js';

/**
 * The validator behind CRD validation, without a server: formats as the
 * Go functions kube uses accept them, Go's printing of values, quantities,
 * URLs, and CEL semantics the integration tests do not reach (library
 * functions, runtime errors, messageExpression fallbacks, reasons,
 * ratcheted rules as warnings, typed values).
 */

function check(format: string, value: string): boolean {
  const fn = stringFormatCheck(format);
  if (fn === undefined) throw new Error(`no check for ${format}`);
  return fn(value);
}

const object = (spec: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'x.io/v1', kind: 'X', metadata: { name: 'n' }, spec });

function specSchema(properties: Record<string, unknown>, rules: unknown[] = []): CompiledSchema {
  const compiled = compileSchema({ type: 'object', properties: { spec: { type: 'object', properties, 'x-kubernetes-validations': rules } } });
  if (compiled === undefined) throw new Error('no schema');
  expect(compiled.rules.errors).to.deep.equal([]);
  return compiled;
}

function messages(compiled: CompiledSchema, spec: Record<string, unknown>, old?: Record<string, unknown>): string[] {
  return validateCustomResource(compiled, object(spec), old === undefined ? undefined : object(old)).errors.map((e) => `${e.field}: ${e.type}${e.shown === undefined ? '' : `: ${e.shown}`}${e.detail === '' ? '' : `: ${e.detail}`}`);
}

describe('CRD validation: formats', () => {
  const table: Record<string, [string[], string[]]> = {
    email: [['a@b.co', 'Ada <ada@example.com>'], ['a@', '@b', 'a b@c']],
    hostname: [['a', 'a-b.example.com', 'xn--bcher-kva.example'], ['-a', 'a..b', `${'a'.repeat(64)}.com`]],
    ipv4: [['1.2.3.4', '010.0.0.1', '::ffff:1.2.3.4'], ['1.2.3', '256.1.1.1', '::1']],
    ipv6: [['::1', 'fe80::1', '2001:db8::8a2e:370:7334'], ['1.2.3.4', 'fe80::1%eth0', ':::']],
    cidr: [['10.0.0.0/8', 'fd00::/64'], ['10.0.0.0', '10.0.0.0/33', 'fd00::/129']],
    mac: [['01:23:45:67:89:ab', '01-23-45-67-89-ab', '0123.4567.89ab'], ['01:23:45', '01:23:45:67:89:zz']],
    uuid: [['123e4567-e89b-12d3-a456-426614174000', '123E4567E89B12D3A456426614174000'], ['123e4567', 'g23e4567-e89b-12d3-a456-426614174000']],
    uuid4: [['123e4567-e89b-42d3-a456-426614174000'], ['123e4567-e89b-12d3-a456-426614174000']],
    'date-time': [['2024-01-02T03:04:05Z', '2024-01-02T03:04:05.123+02:00', '2024-01-02T03:04:05', ''], ['2024-01-02', '2024-01-02T25:00:00Z']],
    date: [['2024-02-29'], ['2023-02-29', '2024-1-2']],
    duration: [['1h', '-1.5h', '300ms', '3 days', '1 hour'], ['soon', 'h1']],
    byte: [['aGVsbG8=', 'YWJj'], ['abc', 'a b=']],
    uri: [['https://example.com/a?b=c', '/just/a/path', 'mailto:/x'], ['relative', 'https://exa mple.com', '']],
    isbn10: [['0321751043', '0-321-75104-3'], ['0321751044']],
    isbn13: [['978-0321751041'], ['9780321751042']],
    creditcard: [['4111 1111 1111 1111'], ['4111 1111 1111 1112']],
    ssn: [['123-45-6789'], ['123456789']],
    hexcolor: [['#fff', 'A0B1C2'], ['#ffff']],
    rgbcolor: [['rgb(255, 0, 10)'], ['rgb(256,0,0)']],
    bsonobjectid: [['507f1f77bcf86cd799439011'], ['507f1f77bcf86cd79943901']],
  };
  for (const [format, [good, bad]] of Object.entries(table)) {
    it(`${format}: accepts ${good.length}, refuses ${bad.length}`, () => {
      for (const v of good) expect(check(format, v), `${format} ${JSON.stringify(v)}`).to.equal(true);
      for (const v of bad) expect(check(format, v), `${format} ${JSON.stringify(v)}`).to.equal(false);
    });
  }

  it('ignores formats kube does not check, as it strips them from the schema', () => {
    expect(stringFormatCheck('k8s-short-name')).to.equal(undefined);
    expect(stringFormatCheck('color')).to.equal(undefined);
    const compiled = specSchema({ a: { type: 'string', format: 'color' }, n: { type: 'integer', format: 'uint8' } });
    expect(messages(compiled, { a: 'anything', n: 300 })).to.deep.equal([]);
  });
});

describe('CRD validation: values as Go prints them', () => {
  it('float64 with %v: exponent form from 1e6 and below 1e-4', () => {
    expect([1.5, 100000, 1e6, 1234567.5, 0.0001, 0.00001, -2e21].map(goFloat)).to.deep.equal(['1.5', '100000', '1e+06', '1.2345675e+06', '0.0001', '1e-05', '-2e+21']);
  });

  it('field-error values: strings quoted, nil as "null", maps and lists with %#v', () => {
    expect([goShown('a'), goShown(null), goShown(3), goShown(true)]).to.deep.equal(['"a"', '"null"', '3', 'true']);
    expect(goSharpV({ b: [1, 'x', null], a: 1.5 })).to.equal('map[string]interface {}{"a":1.5, "b":[]interface {}{1, "x", interface {}(nil)}}');
  });

  it('prints non-integer bounds with %v', () => {
    const compiled = specSchema({ r: { type: 'number', maximum: 1e6 } });
    expect(messages(compiled, { r: 1500000.5 })).to.deep.equal(['spec.r: Invalid value: 1.5000005e+06: spec.r in body should be less than or equal to 1e+06']);
  });
});

describe('CRD validation: quantities and URLs for CEL', () => {
  it('parses quantities exactly, in nano-units', () => {
    expect(parseQuantity('1Gi')).to.equal(1024n ** 3n * 10n ** 9n);
    expect(parseQuantity('500m')).to.equal(500_000_000n);
    expect(parseQuantity('1.5k')).to.equal(1500n * 10n ** 9n);
    expect(parseQuantity('2e3')).to.equal(2000n * 10n ** 9n);
    expect(parseQuantity('-1')).to.equal(-(10n ** 9n));
    expect(parseQuantity('1Gb')).to.equal(undefined);
    expect(parseQuantity('')).to.equal(undefined);
  });

  it('reads URLs as ParseRequestURI does', () => {
    expect(parseUrl('https://user@[::1]:8443/a%20b?x=1&x=2&y')).to.deep.equal({ scheme: 'https', host: '[::1]:8443', hostname: '::1', port: '8443', escapedPath: '/a%20b', query: { x: ['1', '2'], y: [''] } });
    expect(parseUrl('/path')?.escapedPath).to.equal('/path');
    expect(parseUrl('relative')).to.equal(undefined);
    expect(parseUrl('https://a b')).to.equal(undefined);
  });
});

describe('CRD validation: CEL semantics', () => {
  const rule = (text: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ rule: text, ...extra });
  const props = {
    n: { type: 'integer' },
    d: { type: 'number' },
    s: { type: 'string' },
    l: { type: 'array', items: { type: 'integer' } },
    m: { type: 'object', additionalProperties: { type: 'string' } },
    ios: { 'x-kubernetes-int-or-string': true },
    t: { type: 'string', format: 'date-time' },
    dur: { type: 'string', format: 'duration' },
    b: { type: 'string', format: 'byte' },
  };

  const passes = (text: string, spec: Record<string, unknown>): void => {
    expect(messages(specSchema(props, [rule(text)]), spec), text).to.deep.equal([]);
  };

  it('types self by the schema: integers are ints, numbers doubles, int-or-string either, formats timestamps, durations, bytes', () => {
    passes('self.n == 2 && type(self.n) == int', { n: 2 });
    passes('type(self.d) == double && self.d == 2.0', { d: 2 });
    passes("type(self.ios) == string && self.ios == 'http'", { ios: 'http' });
    passes('type(self.ios) == int && self.ios == 80', { ios: 80 });
    passes("self.t < timestamp('2030-01-01T00:00:00Z') && self.t.getFullYear() == 2024", { t: '2024-05-06T07:08:09Z' });
    passes("self.dur > duration('1h')", { dur: '90m' });
    passes("self.b == b'hello'", { b: 'aGVsbG8=' });
  });

  it('supports the Kubernetes list, set and regex libraries', () => {
    passes('self.l.min() == 1 && self.l.max() == 3 && self.l.sum() == 6 && self.l.indexOf(2) == 1 && self.l.lastIndexOf(9) == -1', { l: [1, 2, 3] });
    passes('sets.contains(self.l, [1, 2]) && sets.intersects(self.l, [3, 9]) && !sets.equivalent(self.l, [1])', { l: [1, 2, 3] });
    passes("self.s.find('[0-9]+') == '42' && self.s.findAll('[a-z]') == ['a', 'b'] && self.s.matches('^a')", { s: 'a42b' });
    passes("url('https://example.com:8080/x?q=1').getPort() == '8080' && url('https://example.com/x?q=1').getQuery()['q'] == ['1']", {});
    passes("quantity('1Gi') == quantity('1024Mi') && quantity('1').add(2).asInteger() == 3 && quantity('1.5').isInteger() == false && quantity('-2').sign() == -1", {});
    passes("self.s.lowerAscii() == 'a42b' && self.s.upperAscii().startsWith('A') && 'a,b'.split(',').size() == 2", { s: 'a42B' });
  });

  it('supports the Kubernetes IP and CIDR libraries, parsing as strictly as kube', () => {
    passes("isIP('10.0.0.1') && !isIP('010.0.0.1') && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0') && ip('10.0.0.1').family() == 4 && ip('::1').isLoopback()", {});
    passes("cidr('10.0.0.0/8').containsIP('10.1.2.3') && !cidr('10.0.0.0/8').containsIP(ip('11.0.0.1')) && cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !isCIDR('10.0.0.0/33')", {});
    passes("string(cidr('10.1.2.3/8').masked()) == '10.0.0.0/8' && cidr('fd00::/64').prefixLength() == 64 && string(ip('2001:db8:0:0:0:0:0:1')) == '2001:db8::1'", {});
    passes("ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1') && ip('8.8.8.8').isGlobalUnicast() && ip('169.254.1.1').isLinkLocalUnicast() && ip('0.0.0.0').isUnspecified()", {});
    const compiled = specSchema(props, [rule("ip(self.s).family() == 4")]);
    expect(messages(compiled, { s: '300.0.0.1' })).to.deep.equal(['spec: Invalid value: "object": IP Address "300.0.0.1" parse error during conversion from string evaluating rule: ip(self.s).family() == 4']);
  });

  it('reads a key named __proto__ as data', () => {
    const compiled = specSchema({ m: { type: 'object', additionalProperties: { type: 'string' } } }, [rule("self.m['__proto__'] == 'x' && size(self.m) == 1")]);
    expect(messages(compiled, { m: JSON.parse('{"__proto__":"x"}') as Record<string, unknown> })).to.deep.equal([]);
  });

  it('a runtime error is an Invalid with kube\'s wording, naming the rule', () => {
    const compiled = specSchema(props, [rule("self.m.missing == 'x'")]);
    expect(messages(compiled, { m: { other: 'y' } })).to.deep.equal(['spec: Invalid value: "object": no such key: missing evaluating rule: self.m.missing == \'x\'']);
  });

  it('a messageExpression that fails or yields no usable string falls back to the message, then to the rule', () => {
    const compiled = specSchema(props, [
      rule('self.n > 5', { message: 'n too small', messageExpression: 'self.m.missing' }),
      rule('self.n > 6', { messageExpression: "'   '" }),
      rule('self.n > 7', { messageExpression: "'n is %d'.format([self.n])" }),
    ]);
    expect(messages(compiled, { n: 1, m: {} })).to.deep.equal([
      'spec: Invalid value: "object": n too small',
      'spec: Invalid value: "object": failed rule: self.n > 6',
      'spec: Invalid value: "object": n is 1',
    ]);
  });

  it('reasons: Required and Duplicate as kube builds them', () => {
    const compiled = specSchema(props, [rule('has(self.s)', { reason: 'FieldValueRequired', message: 's is needed' }), rule('self.n != 1', { reason: 'FieldValueDuplicate' })]);
    expect(messages(compiled, { n: 1 })).to.deep.equal(['spec: Required value: s is needed', 'spec: Duplicate value: "object"']);
  });

  it('null values are not validated by rules on their level', () => {
    const compiled = specSchema({ s: { type: 'string', nullable: true, 'x-kubernetes-validations': [rule("self == 'x'")] } });
    expect(messages(compiled, { s: null })).to.deep.equal([]);
    expect(messages(compiled, { s: 'y' })).to.deep.equal(['spec.s: Invalid value: "string": failed rule: self == \'x\'']);
  });

  it('correlates oldSelf by key in map lists, and ratchets a failing rule on an unchanged value into a warning', () => {
    const compiled = specSchema({
      items: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          properties: { name: { type: 'string' }, v: { type: 'integer', 'x-kubernetes-validations': [rule('self >= oldSelf', { message: 'v only grows' }), rule('self < 10', { message: 'v under 10' })] } },
        },
      },
    });
    const old = { items: [{ name: 'a', v: 5 }, { name: 'b', v: 20 }] };
    expect(messages(compiled, { items: [{ name: 'b', v: 20 }, { name: 'a', v: 4 }] }, old)).to.deep.equal(['spec.items[1].v: Invalid value: "integer": v only grows']);
    const outcome = validateCustomResource(compiled, object({ items: [{ name: 'b', v: 20 }, { name: 'a', v: 6 }] }), object(old));
    expect(outcome.errors).to.deep.equal([]);
    expect(outcome.warnings).to.deep.equal(['spec.items[0].v: Invalid value: "integer": v under 10']);
  });

  it('shows an untyped or int-or-string level\'s type as "" in a failing rule, as kube does', () => {
    const compiled = specSchema({ ios: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-validations': [rule("self != 'x'")] } });
    expect(messages(compiled, { ios: 'x' })).to.deep.equal(['spec.ios: Invalid value: "": failed rule: self != \'x\'']);
  });

  it('lets a root rule read metadata.name, and no other metadata field, as kube declares it', () => {
    const refused = compileSchema({ type: 'object', 'x-kubernetes-validations': [rule("self.metadata.labels.size() > 0")] }, 'spec.validation.openAPIV3Schema');
    expect(refused?.rules.errors[0]?.detail).to.contain("undefined field 'labels'");
    const accepted = compileSchema({ type: 'object', 'x-kubernetes-validations': [rule("self.metadata.name != '' && self.kind == 'X'")] });
    expect(accepted?.rules.errors).to.deep.equal([]);
  });

  it('refuses a messageExpression that is no string', () => {
    const compiled = compileSchema({ type: 'object', 'x-kubernetes-validations': [rule('true', { messageExpression: '1 == 1' })] }, 'spec.validation.openAPIV3Schema');
    expect(compiled?.rules.errors.map((e) => `${e.field}: ${e.detail}`)).to.deep.equal(['spec.validation.openAPIV3Schema.x-kubernetes-validations[0].messageExpression: messageExpression must evaluate to a string']);
  });

  it('refuses oldSelf where no old value can correlate (items of a list that is no map)', () => {
    const compiled = compileSchema({ type: 'object', properties: { l: { type: 'array', items: { type: 'integer', 'x-kubernetes-validations': [rule('self >= oldSelf')] } } } }, 'spec.validation.openAPIV3Schema');
    expect(compiled?.rules.errors.map((e) => `${e.field}: ${e.detail}`)).to.deep.equal([
      'spec.validation.openAPIV3Schema.properties[l].items.x-kubernetes-validations[0].rule: oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[l].items',
    ]);
  });
});

describe('CRD validation: compiled once per CRD version', () => {
  const crd = (schema: Record<string, unknown>): KubeObject =>
    ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'xs.x.io' },
      spec: { group: 'x.io', scope: 'Namespaced', names: { plural: 'xs', kind: 'X' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }] },
    }) as unknown as KubeObject;

  it('keeps the compiled schema of a version whose schema did not change (a CRD status write), and compiles a changed one', () => {
    const schema = { type: 'object', 'x-kubernetes-validations': [{ rule: 'true' }] };
    const first = crdResourceTypes(crd(schema));
    expect(first[0]?.compiledSchema?.rules.byNode.size).to.equal(1);
    expect(crdResourceTypes(crd(structuredClone(schema)), first)[0]?.compiledSchema).to.equal(first[0]?.compiledSchema);
    const changed = crdResourceTypes(crd({ type: 'object' }), first)[0]?.compiledSchema;
    expect(changed).to.not.equal(first[0]?.compiledSchema);
    expect(changed?.rules.byNode.size).to.equal(0);
  });
});

describe('CRD validation: embedded resources', () => {
  it('requires apiVersion and kind of an x-kubernetes-embedded-resource, as kube words it', () => {
    const compiled = specSchema({ template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } });
    expect(messages(compiled, { template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: 'b' } } })).to.deep.equal([]);
    expect(messages(compiled, { template: { metadata: {} } })).to.deep.equal(['spec.template.apiVersion: Required value: must not be empty', 'spec.template.kind: Required value: must not be empty']);
    expect(messages(compiled, { template: { apiVersion: 'a/b/c', kind: 'Not_A_Kind' } })).to.deep.equal([
      'spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      "spec.template.kind: Invalid value: \"Not_A_Kind\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });
});

describe('CRD validation: any input', () => {
  it('never throws, whatever JSON a client sends, on create and on update, and reports errors as field errors', () => {
    const compiled = compileSchema(gadgetSchema());
    if (compiled === undefined) throw new Error('no schema');
    expect(compiled.rules.errors).to.deep.equal([]);
    const keys = ['size', 'replicas', 'maxReplicas', 'name', 'mode', 'tags', 'labels', 'note', 'port', 'aliases', 'endpoints', 'email', 'since', 'timeout', 'blob', 'count', 'counter', 'sorted', 'memory', 'homepage', 'secretRef', 'immutable', 'other'];
    const spec = fc.dictionary(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 });
    fc.assert(
      fc.property(spec, fc.option(spec, { nil: undefined }), (next, old) => {
        const outcome = validateCustomResource(compiled, gadget('g', next), old === undefined ? undefined : gadget('g', old));
        for (const error of outcome.errors) {
          expect(error.field).to.be.a('string');
          expect(error.type).to.be.a('string');
          expect(error.detail).to.be.a('string');
        }
      }),
      { numRuns: 300 },
    );
  });
});
