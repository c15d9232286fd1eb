import { expect } from 'chai';
import Type from 'typebox';
import { defineCustomResource, Kube, StructuralSchemaError, type CustomResourceSchema, type ObjectOf } from 'rxkube';
import { checkCustomResource, memoryClient } from 'rxkube/testing';
import { Database, expectedDatabaseCrd } from './database.fixture.js';

/** A one-version definition whose spec is `spec`: what the refusal tests vary. */
function withSpec(spec: CustomResourceSchema['spec'], status?: CustomResourceSchema['status']) {
  return () => defineCustomResource({ group: 'db.example.com', kind: 'Database', scope: 'Namespaced', versions: { v1: { schema: status === undefined ? { spec } : { spec, status } } } });
}

describe('defineCustomResource', () => {
  it('gives the CRD a hand-written one would be, for a definition with every mapped node, extension, subresource and two versions', () => {
    expect(Database.crd).to.deep.equal(expectedDatabaseCrd);
  });

  it('gives the CRD that the API server accepts (its CEL rules compile)', () => {
    expect(() => checkCustomResource(Database)).not.to.throw();
  });

  it('names the resource, its storage version and each version for controller({ for })', () => {
    expect(Database.plural).to.equal('databases');
    expect(Database.storageVersion).to.equal('v1');
    expect(Database.apiVersion).to.equal('db.example.com/v1');
    expect(Database.resource).to.deep.equal({ group: 'db.example.com', version: 'v1', resource: 'databases', kind: 'Database', apiVersion: 'db.example.com/v1' });
    expect(Database.versions.v1beta1.resource).to.deep.equal({ group: 'db.example.com', version: 'v1beta1', resource: 'databases', kind: 'Database', apiVersion: 'db.example.com/v1beta1' });
    expect(Database.versions.v1beta1.apiVersion).to.equal('db.example.com/v1beta1');
  });

  it('makes objects of the storage version with apiVersion and kind', () => {
    const db: ObjectOf<typeof Database> = Database.make({ metadata: { name: 'orders' }, spec: { engine: 'mysql', replicas: 2, storage: '10Gi' } });
    expect(db).to.deep.equal({ apiVersion: 'db.example.com/v1', kind: 'Database', metadata: { name: 'orders' }, spec: { engine: 'mysql', replicas: 2, storage: '10Gi' } });
  });

  it('makes the plural the English way, unless told', () => {
    const plural = (kind: string, plural?: string) =>
      defineCustomResource({ group: 'x.example.com', kind, scope: 'Cluster', ...(plural ? { plural } : {}), versions: { v1: { schema: { spec: Type.Object({}) } } } }).crd.spec.names.plural;
    expect([plural('Policy'), plural('Ingress'), plural('Box'), plural('Gateway'), plural('Patch'), plural('Person', 'people')]).to.deep.equal(['policies', 'ingresses', 'boxes', 'gateways', 'patches', 'people']);
  });

  it('converts through a webhook when asked, leaving the CRD itself as it was', () => {
    const converted = Database.crdConvertedBy({ url: 'https://127.0.0.1:9443/convert', caBundle: 'Q0E=' });
    expect(converted.spec.conversion).to.deep.equal({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:9443/convert', caBundle: 'Q0E=' } } });
    expect(Database.crd.spec.conversion).to.equal(undefined);
  });
});

describe('defineCustomResource refuses what has no structural schema, naming the field', () => {
  const refusals: [string, () => unknown, string][] = [
    ['a $ref (a recursive type)', withSpec(Type.Object({ tree: Type.Cyclic({ Node: Type.Object({ children: Type.Array(Type.Ref('Node')) }) }, 'Node') })), 'Database v1 spec.tree: $defs is not allowed'],
    ['a bare $ref', withSpec(Type.Object({ child: Type.Ref('Node') })), 'Database v1 spec.child: $ref is not allowed in a structural schema'],
    ['additionalProperties beside properties', withSpec(Type.Object({ strict: Type.Object({ a: Type.String() }, { additionalProperties: false }) })), 'Database v1 spec.strict: additionalProperties and properties are mutually exclusive'],
    ['a node without a type', withSpec(Type.Object({ items: Type.Array(Type.Object({ value: Type.Unknown() })) })), 'Database v1 spec.items[*].value: has no type'],
    ['Type.Any', withSpec(Type.Object({ any: Type.Any() })), 'Database v1 spec.any: has no type'],
    ['a tuple', withSpec(Type.Object({ pair: Type.Tuple([Type.String(), Type.Integer()]) })), 'Database v1 spec.pair: a tuple has no structural form'],
    ['an intersection', withSpec(Type.Object({ both: Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]) })), 'Database v1 spec.both: allOf (a TypeBox Intersect) has no structural form'],
    ['a union of objects', withSpec(Type.Object({ either: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]) })), 'Database v1 spec.either: a union has no structural form'],
    ['a union of literals of two types', withSpec(Type.Object({ mixed: Type.Union([Type.Literal('a'), Type.Literal(1)]) })), 'Database v1 spec.mixed: a union of literals of several types ("a", 1)'],
    ['undefined', withSpec(Type.Object({ nothing: Type.Undefined() })), 'Database v1 spec.nothing: type "undefined" has no structural form'],
    ['a bigint', withSpec(Type.Object({ big: Type.BigInt() })), 'Database v1 spec.big: type "bigint" has no structural form'],
    ['a function', withSpec(Type.Object({ callback: Type.Function([], Type.String()) })), 'Database v1 spec.callback: type "function" has no structural form'],
    ['null alone', withSpec(Type.Object({ none: Type.Null() })), 'Database v1 spec.none: type "null" has no structural form'],
    ['a record of keys with a pattern', withSpec(Type.Object({ byPrefix: Type.Record(Type.String({ pattern: '^a' }), Type.String()) })), 'Database v1 spec.byPrefix: patternProperties is not allowed'],
    ['uniqueItems', withSpec(Type.Object({ tags: Type.Array(Type.String(), { uniqueItems: true }) })), "Database v1 spec.tags: uniqueItems is not allowed in a structural schema: use Kube.listType('set')"],
    ['a keyword that is not kube\'s', withSpec(Type.Object({ name: Type.String({ contentMediaType: 'text/plain' }) })), 'Database v1 spec.name: contentMediaType is not a CRD schema keyword'],
    ['a status that is no object', withSpec(Type.Object({}), Type.String()), 'Database v1 status: must be an object schema'],
  ];
  for (const [what, define, message] of refusals) {
    it(`refuses ${what}`, () => {
      expect(define).to.throw(StructuralSchemaError, message);
    });
  }

  it('says which field in the error\'s path, for programs', () => {
    try {
      withSpec(Type.Object({ nested: Type.Object({ list: Type.Array(Type.Any()) }) }))();
      expect.fail('defined');
    } catch (error) {
      expect(error).to.be.instanceOf(StructuralSchemaError);
      expect((error as StructuralSchemaError).path).to.equal('Database v1 spec.nested.list[*]');
    }
  });

  it('refuses versions without exactly one storage version, and names that kube would refuse', () => {
    const spec = { schema: { spec: Type.Object({}) } };
    const define = (versions: Record<string, { schema: CustomResourceSchema; storage?: boolean }>, more: { group?: string; kind?: string; plural?: string } = {}) => () =>
      defineCustomResource({ group: more.group ?? 'db.example.com', kind: more.kind ?? 'Database', scope: 'Namespaced', ...(more.plural ? { plural: more.plural } : {}), versions });
    expect(define({ v1: spec, v2: spec })).to.throw(TypeError, 'defineCustomResource(Database): versions: exactly one version must be the storage version (storage: true), not none');
    expect(define({ v1: { ...spec, storage: true }, v2: { ...spec, storage: true } })).to.throw(TypeError, 'not v1, v2');
    expect(define({})).to.throw(TypeError, 'versions: needs at least one version');
    expect(define({ V1: spec })).to.throw(TypeError, 'versions.V1: a version\'s name must be a DNS-1035 label');
    expect(define({ v1: spec }, { group: 'example' })).to.throw(TypeError, 'group must be a domain with at least one dot');
    expect(define({ v1: spec }, { kind: 'database' })).to.throw(TypeError, 'kind must be a CamelCase name');
    expect(define({ v1: spec }, { plural: 'Data_Bases' })).to.throw(TypeError, 'plural must be a lower-case DNS label');
  });
});

describe('checkCustomResource (rxkube/testing): CEL rules compiled with the API server\'s compiler', () => {
  const typo = defineCustomResource({
    group: 'db.example.com',
    kind: 'Database',
    scope: 'Namespaced',
    versions: { v1: { schema: { spec: Type.Object({ replicas: Type.Integer() }, Kube.rules({ rule: 'self.replica > 0' })) } } },
  });

  it('fails on a typo in a rule, naming the rule\'s field and the undefined name, in kube\'s words', () => {
    expect(() => checkCustomResource(typo)).to.throw(
      /CustomResourceDefinition.apiextensions.k8s.io "databases.db.example.com" is invalid: spec.validation.openAPIV3Schema.properties\[spec\].x-kubernetes-validations\[0\].rule: Invalid value: .*compilation failed: ERROR: <input>:1:5: undefined field 'replica'/s,
    );
  });

  it('fails on a rule that is no boolean, a messageExpression that does not compile, and a fieldPath that names no field', () => {
    const rules = (...r: Parameters<typeof Kube.rules>) =>
      defineCustomResource({ group: 'db.example.com', kind: 'Database', scope: 'Namespaced', versions: { v1: { schema: { spec: Type.Object({ replicas: Type.Integer() }, Kube.rules(...r)) } } } });
    expect(() => checkCustomResource(rules({ rule: 'self.replicas + 1' }))).to.throw('x-kubernetes-validations[0].rule: Invalid value: ');
    expect(() => checkCustomResource(rules({ rule: 'self.replicas > 0', messageExpression: '"x" +' }))).to.throw('x-kubernetes-validations[0].messageExpression: Invalid value');
    expect(() => checkCustomResource(rules({ rule: 'self.replicas > 0', fieldPath: '.replica' }))).to.throw('x-kubernetes-validations[0].fieldPath: Invalid value: ".replica": fieldPath must be a valid path');
  });

  it('runs when a test gives the definition to the memory client, so that a marble test fails on the typo too', () => {
    expect(() => memoryClient({ resources: [typo] })).to.throw("undefined field 'replica'");
    expect(() => memoryClient({ resources: [Database] })).not.to.throw();
  });
});
