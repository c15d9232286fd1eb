import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Subscription } from 'rxjs';
import { deltas, indexer, kubeClient, listWatch, silentLogger, type KubeObject, type Lister, type StoreEvent } from 'rxkube';
import type { ApiServer } from 'rxkube/testing';
import { conversionWebhook, mutatingWebhook, selfSignedCertificates, startWebhookServer, type SelfSignedCertificates, type WebhookServer } from 'rxkube/webhooks';
import { expectOrdinaryPrototypes, expectPrototypesUnchanged, prototypeSnapshot, type PrototypeSnapshot } from '../support/hostileJson.js';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';
import { json, raw, start, widgetCrd } from './apiserver.helpers.js';
import { itKubectl, kubectlIn } from './kubectl.helpers.js';

/**
 * A member named `__proto__` is data on every path of a write and a read,
 * as in kube: a Widget (whose schema keeps unknown fields) holds
 * `spec.__proto__`, a ConfigMap `data.__proto__` (a legal key), and each
 * write below changes something else, or the member itself, over real
 * HTTP. Objects are built from JSON text: an object literal would take the
 * key for its prototype.
 */

const widgets = '/apis/example.com/v1/namespaces/default/widgets';
const configmaps = '/api/v1/namespaces/default/configmaps';
const widgetText = (name: string): string =>
  `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"${name}","namespace":"default"},"spec":{"__proto__":{"polluted":"yes"},"size":1}}`;
const configMapText = (name: string): string => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","namespace":"default"},"data":{"__proto__":"p","a":"1"}}`;

interface Widget extends KubeObject {
  spec: Record<string, unknown>;
}

describe('a member named __proto__ on the embedded API server and the client (issue 35)', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let before: PrototypeSnapshot;
  const running: Subscription[] = [];

  beforeEach(async () => {
    before = prototypeSnapshot();
    server = await start();
    expect((await json(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd())).status).to.equal(201);
  });
  afterEach(async () => {
    for (const s of running.splice(0)) s.unsubscribe();
    await server.close();
    expectPrototypesUnchanged(before);
  });

  async function create(path: string, text: string): Promise<void> {
    const answer = await raw(server, 'POST', path, { body: text, headers: { 'Content-Type': 'application/json' } });
    expect(answer.status, answer.text).to.equal(201);
  }

  async function patch(path: string, contentType: string, body: string): Promise<Record<string, unknown>> {
    const answer = await raw(server, 'PATCH', path, { body, headers: { 'Content-Type': contentType } });
    expect(answer.status, answer.text).to.equal(200);
    return answer.json();
  }

  /** The member's JSON in the object the server holds now. */
  async function storedJson(path: string, field: 'spec' | 'data'): Promise<string> {
    const answer = await raw(server, 'GET', path);
    expect(answer.status).to.equal(200);
    return JSON.stringify(answer.json()[field]);
  }

  it('createOrUpdate that changes only a label keeps spec.__proto__ on the server', async () => {
    await create(widgets, widgetText('w'));
    const client = kubeClient(server.kubeConfig(), { logger: silentLogger });
    const given = JSON.parse(widgetText('w')) as Widget;
    const { result } = await client.createOrUpdate(given, (o) => {
      o.metadata.labels = { team: 'a' };
    });
    expect(result).to.equal('updated');
    const stored = JSON.parse((await raw(server, 'GET', `${widgets}/w`)).text) as Widget;
    expect(stored.metadata.labels).to.deep.equal({ team: 'a' });
    expect(JSON.stringify(stored.spec)).to.equal('{"__proto__":{"polluted":"yes"},"size":1}');
  });

  it('merge patch keeps the member when it changes another and sets it when it names it', async () => {
    await create(widgets, widgetText('w'));
    const patched = await patch(`${widgets}/w`, 'application/merge-patch+json', '{"spec":{"size":2}}');
    expect(JSON.stringify(patched.spec)).to.equal('{"__proto__":{"polluted":"yes"},"size":2}');
    await patch(`${widgets}/w`, 'application/merge-patch+json', '{"spec":{"__proto__":{"polluted":"no","more":1}}}');
    expect(await storedJson(`${widgets}/w`, 'spec')).to.equal('{"__proto__":{"polluted":"no","more":1},"size":2}');
  });

  it('JSON patch keeps the member and writes inside it, through client-node', async () => {
    await create(widgets, widgetText('w'));
    const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
    const at = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', name: 'w' };
    await custom.patchNamespacedCustomObject({ ...at, body: [{ op: 'replace', path: '/spec/size', value: 3 }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
    await custom.patchNamespacedCustomObject({ ...at, body: [{ op: 'replace', path: '/spec/__proto__/polluted', value: 'no' }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
    expect(await storedJson(`${widgets}/w`, 'spec')).to.equal('{"__proto__":{"polluted":"no"},"size":3}');
  });

  it('strategic merge patch keeps a ConfigMap key named __proto__ and sets it', async () => {
    await create(configmaps, configMapText('c'));
    const patched = await patch(`${configmaps}/c`, 'application/strategic-merge-patch+json', '{"data":{"b":"2"}}');
    expect(JSON.stringify(patched.data)).to.equal('{"__proto__":"p","a":"1","b":"2"}');
    await patch(`${configmaps}/c`, 'application/strategic-merge-patch+json', '{"data":{"__proto__":"q"}}');
    expect(await storedJson(`${configmaps}/c`, 'data')).to.equal('{"__proto__":"q","a":"1","b":"2"}');
  });

  it('server-side apply creates the object with the member and another manager\'s apply keeps it', async () => {
    const created = await raw(server, 'PATCH', `${configmaps}/c?fieldManager=one`, { body: configMapText('c'), headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    expect(created.status, created.text).to.equal(201);
    expect(await storedJson(`${configmaps}/c`, 'data')).to.equal('{"__proto__":"p","a":"1"}');
    await patch(`${configmaps}/c?fieldManager=two`, 'application/apply-patch+yaml', '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"b":"2"}}');
    expect(await storedJson(`${configmaps}/c`, 'data')).to.equal('{"__proto__":"p","a":"1","b":"2"}');
  });

  itKubectl('kubectl create (protobuf) and kubectl apply (strategic merge from its diff) keep a ConfigMap key named __proto__', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rxkube-proto-'));
    const kubeconfig = join(dir, 'kubeconfig');
    await server.writeKubeconfig(kubeconfig);
    const kubectl = kubectlIn(dir, kubeconfig);
    try {
      await kubectl.ok(['create', 'configmap', 'k', '--from-literal=__proto__=p', '--from-literal=a=1']);
      expect(await storedJson(`${configmaps}/k`, 'data')).to.equal('{"__proto__":"p","a":"1"}');
      const manifest = (data: string): string => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied","namespace":"default"},"data":${data}}`;
      await kubectl.ok(['apply', '-f', '-'], manifest('{"__proto__":"p","a":"1"}'));
      await kubectl.ok(['apply', '-f', '-'], manifest('{"__proto__":"p","a":"2"}'));
      expect(await storedJson(`${configmaps}/applied`, 'data')).to.equal('{"__proto__":"p","a":"2"}');
      await kubectl.ok(['apply', '-f', '-'], manifest('{"a":"2"}'));
      expect(await storedJson(`${configmaps}/applied`, 'data')).to.equal('{"a":"2"}');
    } finally {
      kubectl.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an informer (list, then watch) hands readers the member as data, in the compact cache and parsed', async () => {
    // At the root too: the compact cache decodes the members past metadata itself.
    const rooted = (name: string): string => widgetText(name).replace('"spec":', '"__proto__":{"root":true},"spec":');
    await create(widgets, rooted('listed'));
    const stores: (Lister | undefined)[] = [undefined, undefined];
    [true, false].forEach((compact, i) => {
      running.push(
        listWatch(server.kubeConfig(), { group: 'example.com', version: 'v1', resource: 'widgets', namespace: 'default' }, { compact, scheduler: dilatedScheduler(100) })
          .pipe(deltas(), indexer())
          .subscribe((e: StoreEvent) => (stores[i] = e.store)),
      );
    });
    await waitFor(() => stores.every((s) => s?.synced === true) && server.openWatches() === 2, 'both informers listed and watching');
    await create(widgets, rooted('watched'));
    await waitFor(() => stores.every((s) => s?.get('default/watched') !== undefined), 'the watched widget in both stores');
    for (const store of stores as Lister[]) {
      for (const name of ['listed', 'watched']) {
        const got = store.get(`default/${name}`) as Widget;
        expect(JSON.stringify(got.spec), name).to.equal('{"__proto__":{"polluted":"yes"},"size":1}');
        expect(Object.hasOwn(got.spec, '__proto__')).to.equal(true);
        expect(JSON.stringify((got as unknown as Record<string, unknown>)['__proto__']), name).to.equal('{"root":true}');
        expect(Object.keys(got)).to.include('__proto__');
        expectOrdinaryPrototypes(JSON.parse(JSON.stringify(got)));
        expect(Object.getPrototypeOf(got.spec)).to.equal(Object.prototype);
      }
    }
  });
});

describe('a member named __proto__ through the webhooks the embedded API server calls (issue 35)', function () {
  this.timeout(30_000);
  let certs: SelfSignedCertificates;
  let webhooks: WebhookServer;
  let server: ApiServer;
  let before: PrototypeSnapshot;
  const gadgets = (version: string): string => `/apis/example.com/${version}/namespaces/default/gadgets`;

  beforeEach(async () => {
    before = prototypeSnapshot();
    certs = await selfSignedCertificates();
    const keep = (o: KubeObject): KubeObject => o;
    webhooks = await startWebhookServer({
      port: 0,
      host: '127.0.0.1',
      tls: certs,
      webhooks: {
        '/default': mutatingWebhook<Widget>((object) => {
          object.spec.size ??= 1;
        }),
        '/convert': conversionWebhook([{ group: 'example.com', kind: 'Gadget', hub: 'v2', spokes: { v1: { toHub: keep, fromHub: keep } } }]),
      },
    });
    server = await start();
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        versions: ['v1', 'v2'].map((name) => ({ name, served: true, storage: name === 'v2', schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } })),
        conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `${webhooks.url}/convert`, caBundle: certs.caBundle } } },
      },
    };
    expect((await json(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).to.equal(201);
    const configuration = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'default-gadgets' },
      webhooks: [
        {
          name: 'default.gadgets.example.com',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          clientConfig: { url: `${webhooks.url}/default`, caBundle: certs.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['gadgets'], scope: '*' }],
        },
      ],
    };
    expect((await json(server, 'POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', configuration)).status).to.equal(201);
  });
  afterEach(async () => {
    await server?.close();
    await webhooks?.close();
    expectPrototypesUnchanged(before);
  });

  it('a mutating webhook defaults past the member, and conversion to the stored version and back keeps it', async () => {
    const text = '{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"__proto__":{"size":5}}}';
    const created = await raw(server, 'POST', gadgets('v1'), { body: text, headers: { 'Content-Type': 'application/json' } });
    expect(created.status, created.text).to.equal(201);
    expect(JSON.stringify(created.json().spec)).to.equal('{"__proto__":{"size":5},"size":1}');
    for (const version of ['v1', 'v2']) {
      const got = await raw(server, 'GET', `${gadgets(version)}/g`);
      expect([got.json().apiVersion, JSON.stringify(got.json().spec)]).to.deep.equal([`example.com/${version}`, '{"__proto__":{"size":5},"size":1}']);
    }
  });
});

describe('a schema property named __proto__ on the embedded API server (issue 35)', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let before: PrototypeSnapshot;
  const things = '/apis/example.com/v1/namespaces/default/things';

  beforeEach(async () => {
    before = prototypeSnapshot();
    server = await start();
    const entry = '{"type":"object","required":["__proto__"],"properties":{"__proto__":{"type":"string"},"v":{"type":"integer"}}}';
    const spec = `{"type":"object","properties":{"__proto__":{"type":"object","default":{"x":1},"properties":{"x":{"type":"integer"}}},"list":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["__proto__"],"items":${entry}}}}`;
    const crd = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"things.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"things","singular":"thing","kind":"Thing"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":${spec}}}}}]}}`;
    const created = await raw(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd, headers: { 'Content-Type': 'application/json' } });
    expect(created.status, created.text).to.equal(201);
  });
  afterEach(async () => {
    await server.close();
    expectPrototypesUnchanged(before);
  });

  it('defaults it as data and keys a map list by it', async () => {
    const send = (name: string, spec: string) =>
      raw(server, 'POST', things, { body: `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"${name}"},"spec":${spec}}`, headers: { 'Content-Type': 'application/json' } });
    const defaulted = await send('d', '{"list":[{"__proto__":"a","v":1},{"__proto__":"b","v":2}]}');
    expect(defaulted.status, defaulted.text).to.equal(201);
    expect(JSON.stringify(defaulted.json().spec)).to.equal('{"list":[{"__proto__":"a","v":1},{"__proto__":"b","v":2}],"__proto__":{"x":1}}');
    const duplicate = await send('dup', '{"list":[{"__proto__":"a","v":1},{"__proto__":"a","v":2}]}');
    expect(duplicate.status, duplicate.text).to.equal(422);
    expect(duplicate.json().message).to.include('spec.list[1]: Duplicate value: map[string]interface {}{"__proto__":"a"}');
  });
});
