import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import type { ApiextensionsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { ApiServer } from 'rxkube/testing';
import { eventually, failure, json, startWithClients } from './apiserver.helpers.js';

/**
 * Gateway API's HTTPRoute CRD (standard channel, vendored unchanged with its
 * origin in test/fixtures/crds/ORIGIN) posted as kubectl sends it (client-node's
 * model would drop nested `default`s), then used through client-node: it is
 * established, and its CEL rules — which read `namespace` as `__namespace__`
 * — run on a valid route and refuse an invalid one in kube's words.
 */

const crd = parse(readFileSync(new URL('../fixtures/crds/gateway.networking.k8s.io_httproutes.yaml', import.meta.url), 'utf8')) as Record<string, unknown>;
const routes = { group: 'gateway.networking.k8s.io', version: 'v1', namespace: 'default', plural: 'httproutes' } as const;

function route(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name, namespace: 'default' }, spec };
}

describe('Gateway API HTTPRoute CRD (vendored, standard channel)', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let extensions: ApiextensionsV1Api;
  let custom: CustomObjectsApi;

  before(async () => {
    ({ server, custom, extensions } = await startWithClients());
  });
  after(async () => {
    await server.close();
  });

  it('is accepted and established', async () => {
    const posted = await json(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    expect(posted.status, posted.text).to.equal(201);
    const established = await eventually(async () => {
      const read = await extensions.readCustomResourceDefinition({ name: 'httproutes.gateway.networking.k8s.io' });
      return read.status?.conditions?.find((c) => c.type === 'Established' && c.status === 'True');
    });
    expect(established.type).to.equal('Established');
  });

  it('runs its rules: a valid route is stored, with its defaults', async () => {
    const created = (await custom.createNamespacedCustomObject({
      ...routes,
      body: route('ok', {
        parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'http' }, { name: 'gw', namespace: 'infra', sectionName: 'https' }],
        hostnames: ['example.com'],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/api' } }], backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
    })) as { spec: { rules: { matches: { path: { type: string } }[] }[]; parentRefs: { group?: string }[] } };
    expect(created.spec.rules[0]?.matches[0]?.path.type).to.equal('PathPrefix');
    expect(created.spec.parentRefs[0]?.group).to.equal('gateway.networking.k8s.io');
  });

  it('refuses two references to the same parent (read through __namespace__)  without distinct sectionNames', async () => {
    const failed = await failure(
      custom.createNamespacedCustomObject({ ...routes, body: route('dup', { parentRefs: [{ name: 'gw', namespace: 'infra' }, { name: 'gw', namespace: 'infra' }] }) }),
    );
    expect(failed.code).to.equal(422);
    const causes = (failed.body.details as { causes: { field: string; message: string }[] }).causes;
    expect(causes).to.deep.include({ field: 'spec.parentRefs', reason: 'FieldValueInvalid', message: 'Invalid value: "array": sectionName must be unique when parentRefs includes 2 or more references to the same parent' });
    // The same name in two namespaces is two parents: the rule tells them apart by __namespace__.
    await custom.createNamespacedCustomObject({ ...routes, body: route('two-parents', { parentRefs: [{ name: 'gw', namespace: 'a' }, { name: 'gw', namespace: 'b' }] }) });
  });

  it('refuses a path rule break in its message', async () => {
    const failed = await failure(
      custom.createNamespacedCustomObject({ ...routes, body: route('bad-path', { rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/a//b' } }] }] }) }),
    );
    expect(failed.code).to.equal(422);
    expect(JSON.stringify(failed.body.details)).to.contain("must not contain '//' when type one of ['Exact', 'PathPrefix']");
  });
});
