import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { CoordinationV1Api, CoreV1Api, EventsV1Api, KubeConfig, VersionApi } from '@kubernetes/client-node';
import { expect } from 'chai';
import { runCli } from '../../src/cli.js';
import type { ApiServer } from 'rxkube/testing';
import { eventually, failure, json, raw, start, widgetCrd } from './apiserver.helpers.js';

describe('embedded API server: discovery, versions and OpenAPI', () => {
  let server: ApiServer;
  beforeEach(async () => (server = await start()));
  afterEach(() => server.close());

  it('serves /version in the shape client-node and kubectl read', async () => {
    const info = await server.kubeConfig().makeApiClient(VersionApi).getCode();
    expect(info.major).to.equal('1');
    expect(info.minor).to.equal('32');
    expect(info.gitVersion).to.match(/^v1\.32\./);
  });

  it('lists the core API versions at /api and the groups at /apis', async () => {
    const api = (await raw(server, 'GET', '/api')).json();
    expect(api).to.deep.include({ kind: 'APIVersions', versions: ['v1'] });
    const groups = (await raw(server, 'GET', '/apis')).json() as { groups: { name: string; preferredVersion: { groupVersion: string } }[] };
    expect(groups.groups.map((g) => g.name)).to.deep.equal([
      'apps',
      'events.k8s.io',
      'authentication.k8s.io',
      'authorization.k8s.io',
      'batch',
      'networking.k8s.io',
      'policy',
      'rbac.authorization.k8s.io',
      'storage.k8s.io',
      'admissionregistration.k8s.io',
      'apiextensions.k8s.io',
      'coordination.k8s.io',
      'discovery.k8s.io',
    ]);
    expect(groups.groups[0].preferredVersion.groupVersion).to.equal('apps/v1');
    expect((await raw(server, 'GET', '/apis/apps')).json()).to.deep.include({ kind: 'APIGroup', name: 'apps' });
  });

  it('describes each group version with real scopes, short names, categories and subresources', async () => {
    const core = (await raw(server, 'GET', '/api/v1')).json() as { groupVersion: string; resources: { name: string; namespaced: boolean; kind: string; shortNames?: string[]; verbs: string[] }[] };
    expect(core.groupVersion).to.equal('v1');
    const byName = new Map(core.resources.map((r) => [r.name, r]));
    expect(byName.get('pods')).to.deep.include({ namespaced: true, kind: 'Pod', shortNames: ['po'] });
    expect(byName.get('namespaces')).to.deep.include({ namespaced: false, shortNames: ['ns'] });
    expect(byName.get('pods/status')?.verbs).to.deep.equal(['get', 'patch', 'update']);
    expect([...byName.keys()]).to.include.members(['configmaps', 'secrets', 'services', 'events', 'namespaces/finalize']);
    const apps = (await raw(server, 'GET', '/apis/apps/v1')).json() as { resources: { name: string; kind: string; group?: string }[] };
    expect(apps.resources.find((r) => r.name === 'deployments/scale')).to.deep.include({ kind: 'Scale', group: 'autoscaling' });
    const leases = (await raw(server, 'GET', '/apis/coordination.k8s.io/v1')).json() as { resources: { name: string }[] };
    expect(leases.resources.map((r) => r.name)).to.deep.equal(['leases']);
  });

  it('serves aggregated discovery (apidiscovery.k8s.io/v2) to clients that ask for it', async () => {
    const res = await raw(server, 'GET', '/apis', {
      headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' },
    });
    expect(res.headers['content-type']).to.equal('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    const doc = res.json() as { kind: string; items: { metadata: { name: string }; versions: { version: string; resources: { resource: string; scope: string }[] }[] }[] };
    expect(doc.kind).to.equal('APIGroupDiscoveryList');
    const appsGroup = doc.items.find((g) => g.metadata.name === 'apps');
    expect(appsGroup?.versions[0].resources.find((r) => r.resource === 'deployments')?.scope).to.equal('Namespaced');
  });

  it('adds a CRD to discovery, with its short names and status subresource', async () => {
    await json(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd());
    const groups = (await raw(server, 'GET', '/apis')).json() as { groups: { name: string }[] };
    expect(groups.groups.map((g) => g.name)).to.include('example.com');
    const doc = (await raw(server, 'GET', '/apis/example.com/v1')).json() as { resources: { name: string; shortNames?: string[] }[] };
    expect(doc.resources.map((r) => r.name)).to.deep.equal(['widgets', 'widgets/status']);
    expect(doc.resources[0].shortNames).to.deep.equal(['wd']);
  });

  it('serves the OpenAPI v3 index and group-version documents that mark fieldValidation support', async () => {
    const index = (await raw(server, 'GET', '/openapi/v3')).json() as { paths: Record<string, { serverRelativeURL: string }> };
    expect(Object.keys(index.paths)).to.include.members(['api/v1', 'apis/apps/v1']);
    const doc = (await raw(server, 'GET', index.paths['api/v1'].serverRelativeURL)).json() as { paths: Record<string, { patch?: { parameters: { name: string }[]; 'x-kubernetes-group-version-kind': object } }> };
    const podPatch = doc.paths['/api/v1/namespaces/{namespace}/pods/{name}'].patch;
    expect(podPatch?.['x-kubernetes-group-version-kind']).to.deep.equal({ group: '', version: 'v1', kind: 'Pod' });
    expect(podPatch?.parameters.map((p) => p.name)).to.deep.equal(['fieldValidation']);
  });

  it('serves Kubernetes\'s schemas of the built-ins in /openapi/v3 and /openapi/v2, and a CRD version\'s own', async () => {
    const index = (await raw(server, 'GET', '/openapi/v3')).json() as { paths: Record<string, { serverRelativeURL: string }> };
    const apps = (await raw(server, 'GET', index.paths['apis/apps/v1'].serverRelativeURL)).json() as { components: { schemas: Record<string, Record<string, unknown>> } };
    const deployment = apps.components.schemas['io.k8s.api.apps.v1.Deployment'];
    expect(deployment['x-kubernetes-group-version-kind']).to.deep.equal([{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
    expect(apps.components.schemas['io.k8s.api.apps.v1.DeploymentSpec'].required).to.deep.equal(['selector', 'template']);
    // What the kinds refer to comes along; what no kind of the group uses does not.
    expect(apps.components.schemas).to.have.property('io.k8s.api.core.v1.Container');
    expect(apps.components.schemas).to.not.have.property('io.k8s.api.batch.v1.JobSpec');

    await json(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      ...widgetCrd(),
      spec: { ...(widgetCrd().spec as object), versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }] },
    });
    const withCrd = (await raw(server, 'GET', '/openapi/v3')).json() as { paths: Record<string, { serverRelativeURL: string }> };
    const example = (await raw(server, 'GET', withCrd.paths['apis/example.com/v1'].serverRelativeURL)).json() as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
    const widget = example.components.schemas['com.example.v1.Widget'];
    expect(widget.properties.spec).to.deep.equal({ type: 'object', properties: { size: { type: 'integer' } } });
    expect(widget.properties.metadata).to.deep.include({ allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }] });
    expect(example.components.schemas).to.have.property('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');

    const v2 = await raw(server, 'GET', '/openapi/v2', { headers: { Accept: 'application/json' } });
    const doc = v2.json() as { swagger: string; definitions: Record<string, { properties?: Record<string, { $ref?: string }> }> };
    expect(doc.swagger).to.equal('2.0');
    expect(doc.definitions['io.k8s.api.apps.v1.Deployment'].properties?.spec.$ref).to.equal('#/definitions/io.k8s.api.apps.v1.DeploymentSpec');
    expect(doc.definitions).to.have.property('com.example.v1.Widget');
    // kubectl and client-go ask for protobuf only (gnostic's openapi.v2.Document), by its old name; kube answers with the new one.
    const proto = await rawBytes(server, '/openapi/v2', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf');
    expect([proto.status, proto.contentType]).to.deep.equal([200, 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf']);
    const top = topFields(proto.body);
    expect(top.get(1)?.[0]?.toString('utf8')).to.equal('2.0');
    const definitionNames = topFields(top.get(9)?.[0] ?? Buffer.alloc(0)).get(1)?.map((entry) => topFields(entry).get(1)?.[0]?.toString('utf8'));
    expect(definitionNames).to.deep.equal(Object.keys(doc.definitions));
    expect((await rawBytes(server, '/openapi/v2', '*/*')).contentType).to.equal('application/json');
    expect((await rawBytes(server, '/openapi/v2', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf;q=0.9, application/json;q=0.5')).contentType).to.equal(
      'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
    );
    expect((await rawBytes(server, '/openapi/v2', 'text/html')).status).to.equal(406);
  });

  it('answers health checks', async () => {
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const res = await raw(server, 'GET', path);
      expect([res.status, res.text]).to.deep.equal([200, 'ok']);
    }
  });

  it('serves a kubectl-style Table when asked for one', async () => {
    await json(server, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'a' }, data: { x: '1', y: '2' } });
    const res = await raw(server, 'GET', '/api/v1/namespaces/default/configmaps', {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    });
    const table = res.json() as { kind: string; columnDefinitions: { name: string }[]; rows: { cells: unknown[]; object: { kind: string } }[] };
    expect(table.kind).to.equal('Table');
    expect(table.columnDefinitions.map((c) => c.name)).to.deep.equal(['Name', 'Data', 'Age']);
    expect(table.rows[0].cells.slice(0, 2)).to.deep.equal(['a', 2]);
    expect(table.rows[0].object.kind).to.equal('PartialObjectMetadata');
  });
});

describe('embedded API server: bad input', () => {
  let server: ApiServer;
  beforeEach(async () => (server = await start()));
  afterEach(() => server.close());

  const cmPath = '/api/v1/namespaces/default/configmaps';

  it('answers malformed JSON with 400 BadRequest', async () => {
    const res = await raw(server, 'POST', cmPath, { body: '{"metadata": {"name": ', headers: { 'Content-Type': 'application/json' } });
    expect(res.status).to.equal(400);
    expect(res.json()).to.deep.include({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect(String(res.json().message)).to.contain('not valid JSON');
  });

  it('answers a body that is not an object with 400', async () => {
    const res = await raw(server, 'POST', cmPath, { body: '[1,2]', headers: { 'Content-Type': 'application/json' } });
    expect(res.status).to.equal(400);
  });

  it('answers a content type it cannot read with 415', async () => {
    const res = await raw(server, 'POST', cmPath, { body: 'name=a', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(res.status).to.equal(415);
    expect(res.json().reason).to.equal('UnsupportedMediaType');
  });

  it('takes YAML bodies', async () => {
    const res = await raw(server, 'POST', cmPath, { body: 'metadata:\n  name: y\ndata:\n  k: v\n', headers: { 'Content-Type': 'application/yaml' } });
    expect(res.status).to.equal(201);
  });

  it('reads Kubernetes protobuf bodies of the kinds kubectl builds, and refuses what it cannot read with 415', async () => {
    const str = (field: number, value: string): Buffer => message(field, Buffer.from(value));
    const message = (field: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([(field << 3) | 2, body.length]), body]);
    const envelope = (kind: string, raw: Buffer): Buffer =>
      Buffer.concat([Buffer.from('k8s\u0000', 'latin1'), message(1, Buffer.concat([str(1, 'v1'), str(2, kind)])), message(2, raw)]);
    const configMap = Buffer.concat([message(1, str(1, 'from-proto')), message(2, Buffer.concat([str(1, 'k'), str(2, 'v')]))]);
    const headers = { 'Content-Type': 'application/vnd.kubernetes.protobuf', Accept: 'application/vnd.kubernetes.protobuf,application/json' };
    const created = await raw(server, 'POST', cmPath, { body: envelope('ConfigMap', configMap), headers });
    expect(created.status).to.equal(201);
    expect(created.headers['content-type']).to.equal('application/json');
    expect(created.json()).to.deep.include({ kind: 'ConfigMap', data: { k: 'v' } });
    const withUnknownField = Buffer.concat([configMap, str(15, 'surprise')]);
    const refused = await raw(server, 'POST', cmPath, { body: envelope('ConfigMap', withUnknownField), headers });
    expect(refused.status).to.equal(415);
    expect(refused.json().message).to.match(/field 15 of the object is not supported/);
    const otherKind = await raw(server, 'POST', cmPath, { body: envelope('ReplicationController', configMap), headers });
    expect(otherKind.status).to.equal(415);
  });

  it('answers an unknown resource, group or path with 404 NotFound', async () => {
    for (const path of ['/api/v1/namespaces/default/widgets', '/apis/nope.example.com/v1/things', '/apis/apps/v9/deployments', '/nothing/here']) {
      const res = await raw(server, 'GET', path);
      expect(res.status, path).to.equal(404);
      expect(res.json()).to.deep.include({ reason: 'NotFound', message: 'the server could not find the requested resource' });
    }
  });

  it('answers a cluster-scoped resource addressed in a namespace with 404', async () => {
    expect((await raw(server, 'GET', '/api/v1/namespaces/default/namespaces/default')).status).to.equal(404);
  });

  it('answers a body whose name differs from the URL with 400', async () => {
    await json(server, 'POST', cmPath, { metadata: { name: 'a' } });
    const res = await json(server, 'PUT', `${cmPath}/a`, { metadata: { name: 'b' } });
    expect(res.status).to.equal(400);
    expect(res.json().message).to.equal('the name of the object (b) does not match the name on the URL (a)');
  });

  it('answers a body whose namespace differs from the URL with 400', async () => {
    const res = await json(server, 'POST', cmPath, { metadata: { name: 'a', namespace: 'other' } });
    expect(res.status).to.equal(400);
    expect(res.json().message).to.equal('the namespace of the provided object does not match the namespace sent on the request');
  });

  it('answers a body of another kind or apiVersion with 400', async () => {
    expect((await json(server, 'POST', cmPath, { kind: 'Secret', metadata: { name: 'a' } })).status).to.equal(400);
    const res = await json(server, 'POST', cmPath, { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'a' } });
    expect(res.status).to.equal(400);
    expect(res.json().message).to.equal('the API version in the data (apps/v1) does not match the expected API version (v1)');
  });

  it('answers methods a path does not take with 405', async () => {
    expect((await json(server, 'POST', `${cmPath}/a`, { metadata: { name: 'a' } })).status).to.equal(405);
    expect((await json(server, 'PUT', cmPath, { metadata: { name: 'a' } })).status).to.equal(405);
    expect((await raw(server, 'DELETE', '/apis')).status).to.equal(405);
  });

  it('answers an oversized body with 413', async () => {
    const res = await raw(server, 'POST', cmPath, {
      body: JSON.stringify({ metadata: { name: 'big' }, data: { k: 'x'.repeat(4 * 1024 * 1024) } }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).to.equal(413);
  });

  it('answers bad list and watch parameters with 400, never a 5xx', async () => {
    const cases = [`${cmPath}?limit=abc`, `${cmPath}?resourceVersion=abc`, `${cmPath}?watch=true&timeoutSeconds=-1`, `${cmPath}?watch=true&resourceVersion=x1`];
    for (const path of cases) expect((await raw(server, 'GET', path)).status, path).to.equal(400);
  });

  it('answers a bad propagationPolicy with 422', async () => {
    await json(server, 'POST', cmPath, { metadata: { name: 'a' } });
    const res = await raw(server, 'DELETE', `${cmPath}/a?propagationPolicy=Sideways`);
    expect(res.status).to.equal(422);
  });

  it('keeps serving after every kind of bad request', async () => {
    const res = await raw(server, 'GET', cmPath);
    expect(res.status).to.equal(200);
  });
});

describe('embedded API server: Leases and Events', () => {
  let server: ApiServer;
  beforeEach(async () => (server = await start()));
  afterEach(() => server.close());

  it('stores coordination.k8s.io/v1 Leases with optimistic concurrency', async () => {
    const leases = server.kubeConfig().makeApiClient(CoordinationV1Api);
    const lease = await leases.createNamespacedLease({
      namespace: 'kube-system',
      body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: new Date() } },
    });
    expect(lease.spec?.holderIdentity).to.equal('a');
    await leases.replaceNamespacedLease({ name: 'leader', namespace: 'kube-system', body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } } });
    const { code } = await failure(leases.replaceNamespacedLease({ name: 'leader', namespace: 'kube-system', body: { ...lease, spec: { ...lease.spec, holderIdentity: 'c' } } }));
    expect(code).to.equal(409);
  });

  it('shares Events between core/v1 and events.k8s.io/v1, renaming fields as kube does', async () => {
    const kc = server.kubeConfig();
    const created = await kc.makeApiClient(EventsV1Api).createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'e1' },
        eventTime: new Date(),
        reportingController: 'rxkube',
        reportingInstance: 'rxkube-1',
        action: 'Reconcile',
        reason: 'Synced',
        note: 'all good',
        type: 'Normal',
        regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
      },
    });
    expect(created.note).to.equal('all good');
    const core = await kc.makeApiClient(CoreV1Api).readNamespacedEvent({ name: 'e1', namespace: 'default' });
    expect(core.message).to.equal('all good');
    expect(core.involvedObject.name).to.equal('p');
    expect(core.reportingComponent).to.equal('rxkube');
  });
});

describe('embedded API server: shutdown', () => {
  it('leaves nothing that keeps the process alive once closed, whatever was open', async () => {
    const testing = fileURLToPath(new URL('../../src/testing/index.ts', import.meta.url));
    const logger = fileURLToPath(new URL('../../src/logger.ts', import.meta.url));
    const script = `
      import { CoreV1Api, Watch } from '@kubernetes/client-node';
      import { request } from 'node:http';
      const { startApiServer } = await import(${JSON.stringify(testing)});
      const { silentLogger } = await import(${JSON.stringify(logger)});
      const server = await startApiServer({ logger: silentLogger, bookmarkIntervalMs: 10 });
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'dangling', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'none' }] } } });
      await new Watch(server.kubeConfig()).watch('/api/v1/configmaps', { allowWatchBookmarks: true, timeoutSeconds: 3600 }, () => {}, () => {});
      request(server.url + '/api/v1/namespaces/default/pods?watch=true').end();
      server.faults.latency(60000, { verb: 'get' });
      core.readNamespace({ name: 'default' }).catch(() => {});
      while (server.openWatches() < 2) await new Promise((r) => setTimeout(r, 5));
      await server.close();
      console.log('closed');
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('../..', import.meta.url)) });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const code = await Promise.race([exited, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 15_000))]);
      expect(code, out).to.equal(0);
      expect(out.trim()).to.equal('closed');
    } finally {
      child.kill();
    }
  });
});

describe('rxkube CLI', () => {
  it('runs the API server, writes a kubeconfig that client-node loads, and stops cleanly', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rxkube-cli-'));
    const path = join(dir, 'kubeconfig');
    const out: string[] = [];
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    // What had been said when it began to listen for Ctrl-C: nothing that invites one yet.
    let saidBeforeListening: string[] | undefined;
    const exit = runCli(['apiserver', '--port', '0', '--kubeconfig', path, '--bookmark-interval-ms', '1000'], {
      out: (line) => out.push(line),
      err: (line) => out.push(line),
      untilStopped: () => {
        saidBeforeListening = [...out];
        return stopped;
      },
    });
    try {
      const url = await eventually(() => /listening on (http:\/\/\S+)/.exec(out.join('\n'))?.[1]);
      expect(out.join('\n')).to.contain(`kubeconfig written to ${path}`);
      expect(saidBeforeListening, 'listening for the signal before "press Ctrl-C to stop" is printed').to.deep.equal([]);
      const kc = new KubeConfig();
      kc.loadFromString(await readFile(path, 'utf8'));
      expect(kc.getCurrentCluster()?.server).to.equal(url);
      const namespaces = await kc.makeApiClient(CoreV1Api).listNamespace();
      expect(namespaces.items.map((n) => n.metadata?.name)).to.include('default');
    } finally {
      stop();
      expect(await exit).to.equal(0);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('explains its usage and fails with a clear message on a bad command or option', async () => {
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), untilStopped: () => Promise.resolve() };
    expect(await runCli(['frobnicate'], io)).to.equal(2);
    expect(lines.join('\n')).to.contain('unknown command "frobnicate"');
    expect(await runCli(['apiserver', '--port', 'eighty'], io)).to.equal(2);
    expect(lines.join('\n')).to.contain('rxkube apiserver: --port must be a non-negative integer, got "eighty"');
    expect(await runCli(['apiserver', '--bogus'], io)).to.equal(2);
    expect(lines.join('\n')).to.contain('rxkube apiserver: unknown option --bogus\n');
    expect(await runCli(['apiserver', '--help'], io)).to.equal(0);
    expect(lines.join('\n')).to.contain('usage: rxkube apiserver');
  });
});

/** A GET's status, content type and raw bytes. */
async function rawBytes(server: ApiServer, path: string, accept: string): Promise<{ status: number; contentType: string; body: Buffer }> {
  const res = await fetch(`${server.url}${path}`, { headers: { Accept: accept } });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: Buffer.from(await res.arrayBuffer()) };
}

/** The length-delimited fields of a protobuf message, by field number (other wire types are skipped). */
function topFields(message: Buffer): Map<number, Buffer[]> {
  const reader = new BinaryReader(message);
  const out = new Map<number, Buffer[]>();
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (wireType !== WireType.LengthDelimited) {
      reader.skip(wireType, field);
      continue;
    }
    out.set(field, [...(out.get(field) ?? []), Buffer.from(reader.bytes())]);
  }
  return out;
}
