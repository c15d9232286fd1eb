import { CustomObjectsApi, type V1Deployment } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { failure, json, raw, start } from './apiserver.helpers.js';

/**
 * `fieldValidation` on built-in kinds, as kube-apiserver decodes them: a field the kind's schema
 * does not declare is dropped and warned of (Warn, the default: `Warning: 299 - "unknown field
 * \"spec.foo\""`), rejected (Strict: 400 `... cannot be handled as a Deployment: strict decoding
 * error: unknown field "spec.foo"`, for a patch a 422 on the field `patch`) or dropped quietly
 * (Ignore), on create, update, patch and apply.
 */

const path = '/apis/apps/v1/namespaces/default/deployments';

function deployment(name: string, container: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'nginx', image: 'nginx', ...container }] } },
    },
  };
}

const typo = { imagePullPolicyy: 'Always' };
const typoField = 'spec.template.spec.containers[0].imagePullPolicyy';

function warnings(headers: Record<string, string | string[] | undefined>): string[] {
  const value = headers.warning;
  return value === undefined ? [] : Array.isArray(value) ? value : value.split(/,\s*(?=299)/);
}

describe('embedded API server: fieldValidation on built-in kinds', function () {
  this.timeout(20_000);
  let server: ApiServer;
  beforeEach(async () => {
    server = await start();
  });
  afterEach(() => server.close());

  it('rejects an unknown field on create under Strict, in kube\'s words, and stores nothing', async () => {
    const res = await json(server, 'POST', `${path}?fieldValidation=Strict`, deployment('web', typo));
    expect(res.status).to.equal(400);
    expect(res.json()).to.deep.include({
      reason: 'BadRequest',
      message: `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "${typoField}"`,
    });
    expect((await raw(server, 'GET', `${path}/web`)).status).to.equal(404);
  });

  it('names every unknown field, nested and in metadata', async () => {
    const body = deployment('web', typo) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
    body.metadata.labelz = { a: 'b' };
    body.spec.replicaz = 2;
    const res = await json(server, 'POST', `${path}?fieldValidation=Strict`, body);
    expect(res.json().message).to.equal(
      // In the order the document has them, as kube's decoder meets them.
      `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "metadata.labelz", unknown field "${typoField}", unknown field "spec.replicaz"`,
    );
  });

  it('warns by default and under Warn, dropping the field as kube\'s decoder does', async () => {
    for (const [name, query] of [['by-default', ''], ['warned', '?fieldValidation=Warn']]) {
      const res = await json(server, 'POST', `${path}${query}`, deployment(name, typo));
      expect(res.status).to.equal(201);
      expect(warnings(res.headers)).to.deep.equal([`299 - ${JSON.stringify(`unknown field "${typoField}"`)}`]);
      const stored = (await raw(server, 'GET', `${path}/${name}`)).json() as unknown as V1Deployment;
      // The typo is gone; what is left is the container with kube's defaults.
      expect(stored.spec?.template.spec?.containers[0]).to.deep.equal({
        name: 'nginx',
        image: 'nginx',
        imagePullPolicy: 'Always',
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        resources: {},
      });
    }
  });

  it('drops it without a word under Ignore', async () => {
    const res = await json(server, 'POST', `${path}?fieldValidation=Ignore`, deployment('quiet', typo));
    expect(res.status).to.equal(201);
    expect(res.headers.warning).to.equal(undefined);
    expect(JSON.stringify(res.json())).to.not.contain('imagePullPolicyy');
  });

  it('checks updates, merge and strategic merge patches, and applies the same way', async () => {
    const created = (await json(server, 'POST', path, deployment('web'))).json() as { metadata: { resourceVersion: string } };
    const put = await json(server, 'PUT', `${path}/web?fieldValidation=Strict`, { ...deployment('web', typo), metadata: { name: 'web', resourceVersion: created.metadata.resourceVersion } });
    expect([put.status, put.json().message]).to.deep.equal([400, `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "${typoField}"`]);
    const patch = { spec: { template: { spec: { containers: [{ name: 'nginx', ...typo }] } } } };
    // A patch that fails strict decoding is a 422 on the field "patch", showing the patch as Go prints
    // the decoded map (strategic merge), or the patched object's JSON (merge and JSON patches).
    const strategic = await json(server, 'PATCH', `${path}/web?fieldValidation=Strict`, patch, 'application/strategic-merge-patch+json');
    expect([strategic.status, strategic.json().message]).to.deep.equal([
      422,
      ` "" is invalid: patch: Invalid value: "map[spec:map[template:map[spec:map[containers:[map[imagePullPolicyy:Always name:nginx]]]]]]": strict decoding error: unknown field "${typoField}"`,
    ]);
    const merge = await json(server, 'PATCH', `${path}/web?fieldValidation=Strict`, patch, 'application/merge-patch+json');
    expect(merge.status).to.equal(422);
    expect(merge.json().message).to.match(/^ "" is invalid: patch: Invalid value: "\{\\"apiVersion\\":\\"apps\/v1\\",/);
    expect(merge.json().message).to.contain(`\\"imagePullPolicyy\\":\\"Always\\"`);
    expect(merge.json().message).to.match(new RegExp(`: strict decoding error: unknown field "${typoField.replace(/[[\].]/g, '\\$&')}"$`));
    const warned = await json(server, 'PATCH', `${path}/web`, patch, 'application/strategic-merge-patch+json');
    expect([warned.status, warnings(warned.headers).length]).to.deep.equal([200, 1]);
    const apply = await json(server, 'PATCH', `${path}/web?fieldManager=me&fieldValidation=Strict`, deployment('web', typo), 'application/apply-patch+yaml');
    expect([apply.status, apply.json().message]).to.deep.equal([400, `strict decoding error: unknown field "${typoField}"`]);
    const applied = await json(server, 'PATCH', `${path}/web?fieldManager=me&fieldValidation=Ignore`, deployment('web', typo), 'application/apply-patch+yaml');
    expect(applied.status).to.equal(200);
    expect(JSON.stringify(applied.json())).to.not.contain('imagePullPolicyy');
  });

  it('keeps what the schema leaves open: RawExtension data, managedFields, maps of strings', async () => {
    const revision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'r1', annotations: { anything: 'goes' } },
      revision: 1,
      data: { spec: { template: { anyField: { deep: true } } } },
    };
    const res = await json(server, 'POST', '/apis/apps/v1/namespaces/default/controllerrevisions?fieldValidation=Strict', revision);
    expect(res.status, res.text).to.equal(201);
    const stored = res.json() as { data: unknown; metadata: { managedFields: { fieldsV1: Record<string, unknown> }[] } };
    expect(stored.data).to.deep.equal(revision.data);
    expect(Object.keys(stored.metadata.managedFields[0].fieldsV1)).to.include('f:data');
  });

  it('reaches client-node callers as a 400 they can read', async () => {
    // The typed clients drop fields their models do not know before sending; an untyped body keeps them.
    const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
    const { code, body } = await failure(
      custom.createNamespacedCustomObject({ group: 'apps', version: 'v1', namespace: 'default', plural: 'deployments', body: deployment('web', typo), fieldValidation: 'Strict' }),
    );
    expect(code).to.equal(400);
    expect(body.message).to.contain(`strict decoding error: unknown field "${typoField}"`);
  });
});
