import { expect } from 'chai';
import type { ApiextensionsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { ApiServer } from 'rxkube/testing';
import { failure, modelCrd, startWithClients } from './apiserver.helpers.js';
import { gadget, gadgetCrd, gadgets, gadgetSchema } from './crdValidation.fixtures.js';

/**
 * Every keyword of a CRD's structural schema, through client-node: an
 * object that passes is stored, one that fails gets kube's 422 with the
 * cause (field, reason, message) kube-apiserver 1.32 words.
 */

interface Cause {
  field: string;
  reason: string;
  message: string;
}

interface Case {
  keyword: string;
  valid: Record<string, unknown>;
  invalid: Record<string, unknown>;
  cause: Cause;
}

const invalid = (field: string, message: string): Cause => ({ field, reason: 'FieldValueInvalid', message });
const typeInvalid = (field: string, message: string): Cause => ({ field, reason: 'FieldValueTypeInvalid', message });
const badFormat = (field: string, name: string, value: string): Cause => typeInvalid(`spec.${field}`, `Invalid value: "${value}": spec.${field} in body must be of type ${name}: "${value}"`);

const cases: Case[] = [
  { keyword: 'minimum', valid: { size: 1 }, invalid: { size: 0 }, cause: invalid('spec.size', 'Invalid value: 0: spec.size in body should be greater than or equal to 1') },
  { keyword: 'maximum', valid: { size: 10 }, invalid: { size: 11 }, cause: invalid('spec.size', 'Invalid value: 11: spec.size in body should be less than or equal to 10') },
  { keyword: 'exclusiveMinimum', valid: { ratio: 0.5 }, invalid: { ratio: 0 }, cause: invalid('spec.ratio', 'Invalid value: 0: spec.ratio in body should be greater than 0') },
  { keyword: 'exclusiveMaximum', valid: { ratio: 0.99 }, invalid: { ratio: 1 }, cause: invalid('spec.ratio', 'Invalid value: 1: spec.ratio in body should be less than 1') },
  { keyword: 'multipleOf', valid: { step: 15 }, invalid: { step: 7 }, cause: invalid('spec.step', 'Invalid value: 7: spec.step in body should be a multiple of 5') },
  { keyword: 'minLength', valid: { name: 'ab' }, invalid: { name: 'a' }, cause: invalid('spec.name', 'Invalid value: "a": spec.name in body should be at least 2 chars long') },
  { keyword: 'maxLength', valid: { name: 'abcdefgh' }, invalid: { name: 'abcdefghi' }, cause: { field: 'spec.name', reason: 'FieldValueTooLong', message: 'Too long: may not be more than 8 bytes' } },
  { keyword: 'pattern', valid: { name: 'abc' }, invalid: { name: 'ab1' }, cause: invalid('spec.name', "Invalid value: \"ab1\": spec.name in body should match '^[a-z]+$'") },
  { keyword: 'enum', valid: { mode: 'fast' }, invalid: { mode: 'wild' }, cause: { field: 'spec.mode', reason: 'FieldValueNotSupported', message: 'Unsupported value: "wild": supported values: "fast", "safe"' } },
  { keyword: 'minItems', valid: { tags: ['a'] }, invalid: { tags: [] }, cause: invalid('spec.tags', 'Invalid value: 0: spec.tags in body should have at least 1 items') },
  { keyword: 'maxItems', valid: { tags: ['a', 'b', 'c'] }, invalid: { tags: ['a', 'b', 'c', 'd'] }, cause: { field: 'spec.tags', reason: 'FieldValueTooMany', message: 'Too many: 4: must have at most 3 items' } },
  { keyword: 'minProperties', valid: { labels: { a: 'x' } }, invalid: { labels: {} }, cause: invalid('spec.labels', 'Invalid value: 0: spec.labels in body should have at least 1 properties') },
  { keyword: 'maxProperties', valid: { labels: { a: 'x', b: 'y' } }, invalid: { labels: { a: 'x', b: 'y', c: 'z' } }, cause: { field: 'spec.labels', reason: 'FieldValueTooMany', message: 'Too many: 3: must have at most 2 items' } },
  { keyword: 'type', valid: { size: 2 }, invalid: { size: '2' }, cause: typeInvalid('spec.size', 'Invalid value: "string": spec.size in body must be of type integer: "string"') },
  { keyword: 'nullable: false (items)', valid: { tags: ['a'] }, invalid: { tags: [null] }, cause: typeInvalid('spec.tags[0]', 'Invalid value: "null": spec.tags[0] in body must be of type string: "null"') },
  { keyword: 'x-kubernetes-int-or-string', valid: { port: 'http' }, invalid: { port: 1.5 }, cause: typeInvalid('spec.port', 'Invalid value: "number": spec.port in body must be of type integer,string: "number"') },
  { keyword: 'x-kubernetes-list-type: set', valid: { aliases: ['a', 'b'] }, invalid: { aliases: ['a', 'b', 'a'] }, cause: { field: 'spec.aliases[2]', reason: 'FieldValueDuplicate', message: 'Duplicate value: "a"' } },
  {
    keyword: 'x-kubernetes-list-type: map',
    valid: { endpoints: [{ name: 'a', port: 1 }, { name: 'b', port: 1 }] },
    invalid: { endpoints: [{ name: 'a', port: 1 }, { name: 'a', port: 2 }] },
    cause: { field: 'spec.endpoints[1]', reason: 'FieldValueDuplicate', message: 'Duplicate value: map[string]interface {}{"name":"a"}' },
  },
  { keyword: 'required (nested)', valid: { endpoints: [{ name: 'a' }] }, invalid: { endpoints: [{ port: 1 }] }, cause: { field: 'spec.endpoints[0].name', reason: 'FieldValueRequired', message: 'Required value' } },
  { keyword: 'format: email', valid: { email: 'ada@example.com' }, invalid: { email: 'not-an-email' }, cause: badFormat('email', 'email', 'not-an-email') },
  { keyword: 'format: uuid', valid: { uid: '123e4567-e89b-12d3-a456-426614174000' }, invalid: { uid: 'xyz' }, cause: badFormat('uid', 'uuid', 'xyz') },
  { keyword: 'format: hostname', valid: { host: 'my-host.example.com' }, invalid: { host: '-bad-' }, cause: badFormat('host', 'hostname', '-bad-') },
  { keyword: 'format: ipv4', valid: { address: '10.0.0.1' }, invalid: { address: '10.0.0.300' }, cause: badFormat('address', 'ipv4', '10.0.0.300') },
  { keyword: 'format: ipv6', valid: { address6: 'fd00::1' }, invalid: { address6: '10.0.0.1' }, cause: badFormat('address6', 'ipv6', '10.0.0.1') },
  { keyword: 'format: cidr', valid: { network: '10.0.0.0/8' }, invalid: { network: '10.0.0.0/33' }, cause: badFormat('network', 'cidr', '10.0.0.0/33') },
  { keyword: 'format: mac', valid: { hardware: '01:23:45:67:89:ab' }, invalid: { hardware: '01:23:45' }, cause: badFormat('hardware', 'mac', '01:23:45') },
  { keyword: 'format: date-time', valid: { since: '2024-01-02T03:04:05Z' }, invalid: { since: '2024-13-02T03:04:05Z' }, cause: badFormat('since', 'date-time', '2024-13-02T03:04:05Z') },
  { keyword: 'format: date', valid: { day: '2024-02-29' }, invalid: { day: '2023-02-29' }, cause: badFormat('day', 'date', '2023-02-29') },
  { keyword: 'format: duration', valid: { timeout: '1h30m' }, invalid: { timeout: 'soon' }, cause: badFormat('timeout', 'duration', 'soon') },
  { keyword: 'format: byte', valid: { blob: 'aGVsbG8=' }, invalid: { blob: 'not base64!' }, cause: badFormat('blob', 'byte', 'not base64!') },
  { keyword: 'format: uri', valid: { site: 'https://example.com/x' }, invalid: { site: 'relative/path' }, cause: badFormat('site', 'uri', 'relative/path') },
  {
    keyword: 'format: int32',
    valid: { count: 2147483647 },
    invalid: { count: 2147483648 },
    // kube-openapi reports the range of a format as an error without a field.
    cause: { field: '<nil>', reason: 'FieldValueInvalid', message: 'Invalid value: "": Checked value must be of type integer with format int32 in spec.count' },
  },
];

describe('CRD validation: structural schema keywords (client-node)', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let custom: CustomObjectsApi;
  let extensions: ApiextensionsV1Api;

  before(async () => {
    ({ server, custom, extensions } = await startWithClients());
    await extensions.createCustomResourceDefinition({ body: modelCrd(gadgetCrd()) });
  });
  after(async () => {
    await server.close();
  });

  cases.forEach((c, i) => {
    it(`${c.keyword}: stores an object that passes, rejects one that fails with kube's cause`, async () => {
      const stored = (await custom.createNamespacedCustomObject({ ...gadgets, body: gadget(`g-ok-${i}`, c.valid) })) as { spec: Record<string, unknown> };
      for (const [key, value] of Object.entries(c.valid)) expect(stored.spec[key]).to.deep.equal(value);
      const failed = await failure(custom.createNamespacedCustomObject({ ...gadgets, body: gadget(`g-bad-${i}`, c.invalid) }));
      expect(failed.code).to.equal(422);
      expect(failed.body.reason).to.equal('Invalid');
      const details = failed.body.details as { name: string; group: string; kind: string; causes: Cause[] };
      expect(details).to.include({ name: `g-bad-${i}`, group: 'example.com', kind: 'Gadget' });
      expect(details.causes).to.deep.include(c.cause);
      expect(String(failed.body.message)).to.contain(`Gadget.example.com "g-bad-${i}" is invalid: `).and.contain(`${c.cause.field}: ${c.cause.message}`);
    });
  });

  it('required: a missing required field is a Required value, and stops the CEL rules with kube\'s note', async () => {
    const body = gadget('g-req');
    delete (body.spec as Record<string, unknown>).size;
    const failed = await failure(custom.createNamespacedCustomObject({ ...gadgets, body }));
    expect(failed.code).to.equal(422);
    expect(failed.body.message).to.equal(
      'Gadget.example.com "g-req" is invalid: [spec.size: Required value, <nil>: Invalid value: "null": ' +
        'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
    );
  });

  it('nullable: null is kept where the schema allows it, and dropped where it does not', async () => {
    const stored = (await custom.createNamespacedCustomObject({ ...gadgets, body: gadget('g-null', { note: null, mode: null }) })) as { spec: Record<string, unknown> };
    expect(stored.spec).to.have.property('note', null);
    expect(stored.spec).to.not.have.property('mode');
  });

  it('x-kubernetes-preserve-unknown-fields keeps what it holds; other unknown fields are pruned', async () => {
    const stored = (await custom.createNamespacedCustomObject({ ...gadgets, body: gadget('g-keep', { extra: { any: { thing: 1 } }, colour: 'red' }) })) as { spec: Record<string, unknown> };
    expect(stored.spec.extra).to.deep.equal({ any: { thing: 1 } });
    expect(stored.spec).to.not.have.property('colour');
  });

  it('uniqueItems: true makes the CRD itself invalid, as kube forbids it', async () => {
    const schema = gadgetSchema() as { properties: { spec: { properties: Record<string, unknown> } } };
    schema.properties.spec.properties.tags = { type: 'array', uniqueItems: true, items: { type: 'string' } };
    const failed = await failure(extensions.createCustomResourceDefinition({ body: modelCrd(gadgetCrd(schema as Record<string, unknown>, 'others')) }));
    expect(failed.code).to.equal(422);
    expect((failed.body.details as { causes: Cause[] }).causes).to.deep.include({
      field: 'spec.validation.openAPIV3Schema.properties[spec].properties[tags].uniqueItems',
      reason: 'FieldValueForbidden',
      message: 'Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
    });
  });

  it('reports every failing keyword of one object, each as its own cause', async () => {
    const failed = await failure(custom.createNamespacedCustomObject({ ...gadgets, body: gadget('g-many', { size: 0, name: 'A', mode: 'wild' }) }));
    const fields = (failed.body.details as { causes: Cause[] }).causes.map((c) => `${c.field}: ${c.message}`);
    expect(fields).to.include.members([
      'spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1',
      'spec.name: Invalid value: "A": spec.name in body should match \'^[a-z]+$\'',
      'spec.mode: Unsupported value: "wild": supported values: "fast", "safe"',
    ]);
  });
});
