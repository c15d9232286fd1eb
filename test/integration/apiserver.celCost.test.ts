import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiextensionsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { expect } from 'chai';
import { stringify } from 'yaml';
import type { ApiServer } from 'rxkube/testing';
import { failure, modelCrd, startWithClients } from './apiserver.helpers.js';
import { describeKubectl, kubectlIn, type Kubectl } from './kubectl.helpers.js';

/**
 * CEL cost limits as a user meets them, over HTTP: a CRD whose rule kube
 * estimates over its budget (a list without maxItems, compared item by
 * item) is refused with kube's 422 and words, through kubectl and through
 * client-node, and accepted once maxItems and maxLength bound it; a custom
 * resource whose rules cost too much as they run is refused too.
 */

const hint = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';
const unique = 'self.refs.all(a, self.refs.exists_one(b, a.name == b.name))';
const lookup = 'self.items.all(x, self.long.contains(x))';

function crd(plural: string, kind: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.cost.example.com` },
    spec: {
      group: 'cost.example.com',
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  };
}

/** Routes with references that must be unique by name: over budget unless the list and the names are bounded. */
function routesCrd(plural: string, bounded: boolean): Record<string, unknown> {
  const name = { type: 'string', ...(bounded ? { maxLength: 253 } : {}) };
  const refs = { type: 'array', ...(bounded ? { maxItems: 16 } : {}), items: { type: 'object', required: ['name'], properties: { name } } };
  return crd(plural, plural === 'routes' ? 'Route' : 'BoundedRoute', { type: 'object', properties: { refs }, 'x-kubernetes-validations': [{ rule: unique, message: 'refs must be unique' }] });
}

/** Lookups: each item is looked for in `long`; estimated within budget, but 5,000 items cost over 1,000,000 as the rule runs. */
function lookupsCrd(rules: number): Record<string, unknown> {
  return crd(`lookups${rules}`, `Lookup${rules}`, {
    type: 'object',
    properties: { long: { type: 'string', maxLength: 2500 }, items: { type: 'array', maxItems: 5000, items: { type: 'string', maxLength: 2 } } },
    'x-kubernetes-validations': Array.from({ length: rules }, () => ({ rule: lookup })),
  });
}

const lookupObject = (rules: number, name: string, items: number): Record<string, unknown> => ({
  apiVersion: 'cost.example.com/v1',
  kind: `Lookup${rules}`,
  metadata: { name, namespace: 'default' },
  spec: { long: 'a'.repeat(2500), items: Array.from({ length: items }, () => 'a') },
});

const ruleAt = 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule';

describe('CEL cost limits over HTTP (client-node)', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let extensions: ApiextensionsV1Api;
  let custom: CustomObjectsApi;

  before(async () => {
    ({ server, extensions, custom } = await startWithClients());
  });
  after(async () => {
    await server.close();
  });

  it('refuses a CRD whose rule is estimated over budget with 422 and kube\'s causes, and accepts it bounded', async () => {
    const failed = await failure(extensions.createCustomResourceDefinition({ body: modelCrd(routesCrd('routes', false)) }));
    expect(failed.code).to.equal(422);
    expect(failed.body.reason).to.equal('Invalid');
    expect((failed.body.details as { causes: unknown[] }).causes).to.deep.include({
      reason: 'FieldValueForbidden',
      message: `Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${hint}`,
      field: ruleAt,
    });
    expect(failed.body.message).to.contain(`spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${hint}`);
    const created = await extensions.createCustomResourceDefinition({ body: modelCrd(routesCrd('boundedroutes', true)) });
    expect(created.metadata?.name).to.equal('boundedroutes.cost.example.com');
  });

  it('refuses a custom resource whose rules together cost over 10,000,000 as they run', async () => {
    // 3,000 items: 768,003 per rule as it runs (256 per item); the fourteenth rule finds the budget spent.
    await extensions.createCustomResourceDefinition({ body: modelCrd(lookupsCrd(14)) });
    const ref = { group: 'cost.example.com', version: 'v1', namespace: 'default', plural: 'lookups14' };
    const failed = await failure(custom.createNamespacedCustomObject({ ...ref, body: lookupObject(14, 'l1', 3000) }));
    expect(failed.code).to.equal(422);
    expect((failed.body.details as { causes: unknown[] }).causes).to.deep.equal([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run', field: 'spec' },
    ]);
    await custom.createNamespacedCustomObject({ ...ref, body: lookupObject(14, 'l2', 100) });
  });
});

describeKubectl('kubectl: CEL cost limits', function () {
  this.timeout(60_000);
  let server: ApiServer;
  let dir: string;
  let kubectl: Kubectl;

  before(async () => {
    ({ server } = await startWithClients());
    dir = await mkdtemp(join(tmpdir(), 'rxkube-kubectl-celcost-'));
    await server.writeKubeconfig(join(dir, 'kubeconfig'));
    kubectl = kubectlIn(dir, join(dir, 'kubeconfig'));
  });
  after(async () => {
    kubectl.stop();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('kubectl apply of a CRD whose rule has no bound is refused in kube\'s words; with maxItems and maxLength it is created', async () => {
    const refused = await kubectl.run(['apply', '-f', '-'], stringify(routesCrd('routes', false)));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain('The CustomResourceDefinition "routes.cost.example.com" is invalid:');
    expect(refused.stderr).to.contain(`${ruleAt}: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${hint}`);
    expect(await kubectl.ok(['apply', '-f', '-'], stringify(routesCrd('routes', true)))).to.equal('customresourcedefinition.apiextensions.k8s.io/routes.cost.example.com created\n');
  });

  it('kubectl apply of a custom resource whose rule costs over 1,000,000 as it runs is refused in kube\'s words', async () => {
    expect(await kubectl.ok(['apply', '-f', '-'], stringify(lookupsCrd(1)))).to.equal('customresourcedefinition.apiextensions.k8s.io/lookups1.cost.example.com created\n');
    const refused = await kubectl.run(['apply', '-f', '-'], stringify(lookupObject(1, 'l1', 5000)));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain(
      `The Lookup1 "l1" is invalid: spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${lookup}`,
    );
    expect(await kubectl.ok(['apply', '-f', '-'], stringify(lookupObject(1, 'l1', 3000)))).to.equal('lookup1.cost.example.com/l1 created\n');
  });
});
