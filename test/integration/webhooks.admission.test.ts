import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, ApiException, ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type V1ConfigMap } from '@kubernetes/client-node';
import { expect } from 'chai';
import { VirtualTimeScheduler } from 'rxjs';
import { stringify } from 'yaml';
import type { ApiServer } from 'rxkube/testing';
import { allow, deny, mutatingWebhook, selfSignedCertificates, startWebhookServer, validatingWebhook, type AdmissionRequest, type SelfSignedCertificates, type WebhookServer } from 'rxkube/webhooks';
import { eventually, modelCrd, start, widgetCrd } from './apiserver.helpers.js';
import { itKubectl, kubectlPath } from './kubectl.helpers.js';

/**
 * The embedded API server calling admission webhooks that rxkube serves,
 * through the real client-node and kubectl: what kube-apiserver does with
 * a ValidatingWebhookConfiguration or a MutatingWebhookConfiguration.
 */


function configMap(name: string, namespace = 'default', labels?: Record<string, string>, data: Record<string, string> = { a: '1' }): V1ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...(labels !== undefined ? { labels } : {}) }, data };
}

async function failureOf(promise: Promise<unknown>): Promise<{ code: number; message: string; reason: string }> {
  try {
    await promise;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const body = JSON.parse(String(error.body)) as { message: string; reason: string };
    return { code: error.code, message: body.message, reason: body.reason };
  }
  throw new Error('the request succeeded');
}

describe('the embedded API server calling admission webhooks', function () {
  this.timeout(60_000);
  let certs: SelfSignedCertificates;
  let webhooks: WebhookServer;
  let server: ApiServer;
  let core: CoreV1Api;
  let admission: AdmissionregistrationV1Api;
  let dir: string;
  let kubeconfig: string;
  const seen: AdmissionRequest[] = [];
  const never = new VirtualTimeScheduler();

  before(async () => {
    certs = await selfSignedCertificates();
    webhooks = await startWebhookServer({
      port: 0,
      host: '127.0.0.1',
      tls: certs,
      // The webhook server's own deadlines never pass: the API server's timeoutSeconds is what a test of a slow webhook sees.
      scheduler: never,
      webhooks: {
        '/deny-big': validatingWebhook((request) => {
          seen.push(request);
          const data = (request.object as V1ConfigMap | null)?.data ?? {};
          return Object.keys(data).length > 2 ? deny('a ConfigMap may have at most 2 keys', { code: 403 }) : allow(['counted the keys']);
        }),
        '/deny-all': validatingWebhook((request) => {
          seen.push(request);
          return deny(`no ${request.operation} here`);
        }),
        '/default-labels': mutatingWebhook<V1ConfigMap & { metadata: object }>((object, request) => {
          seen.push(request);
          object.metadata.labels = { ...object.metadata.labels, defaulted: 'true' };
        }),
        '/require-defaulted': validatingWebhook((request) => {
          seen.push(request);
          return (request.object as V1ConfigMap).metadata?.labels?.defaulted === 'true' ? allow() : deny('not defaulted');
        }),
        '/label-a': mutatingWebhook<V1ConfigMap & { metadata: { labels?: Record<string, string> } }>((object, request) => {
          seen.push(request);
          object.metadata.labels = { ...object.metadata.labels, 'seen-b': object.metadata.labels?.b ?? 'none' };
        }),
        '/label-b': mutatingWebhook<V1ConfigMap & { metadata: { labels?: Record<string, string> } }>((object, request) => {
          seen.push(request);
          object.metadata.labels = { ...object.metadata.labels, b: '1' };
        }),
        '/slow': validatingWebhook((request, signal) => {
          seen.push(request);
          return new Promise((resolve) => signal.addEventListener('abort', () => resolve(allow())));
        }),
      },
    });
    server = await start();
    const kc = server.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    admission = kc.makeApiClient(AdmissionregistrationV1Api);
    dir = await mkdtemp(join(tmpdir(), 'rxkube-webhooks-'));
    kubeconfig = join(dir, 'kubeconfig');
    await server.writeKubeconfig(kubeconfig);
  });
  after(async () => {
    await server?.close();
    await webhooks?.close();
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    seen.length = 0;
    for (const c of (await admission.listValidatingWebhookConfiguration()).items) await admission.deleteValidatingWebhookConfiguration({ name: c.metadata?.name as string });
    for (const c of (await admission.listMutatingWebhookConfiguration()).items) await admission.deleteMutatingWebhookConfiguration({ name: c.metadata?.name as string });
    for (const cm of (await core.listNamespacedConfigMap({ namespace: 'default' })).items) await core.deleteNamespacedConfigMap({ name: cm.metadata?.name as string, namespace: 'default' });
  });

  interface HookOptions {
    name?: string;
    path: string;
    operations?: string[];
    resources?: string[];
    failurePolicy?: 'Fail' | 'Ignore';
    url?: string;
    caBundle?: string;
    timeoutSeconds?: number;
    sideEffects?: string;
    namespaceSelector?: object;
    objectSelector?: object;
    reinvocationPolicy?: string;
  }

  function hook(o: HookOptions): Record<string, unknown> {
    return {
      name: o.name ?? `${o.path.slice(1)}.rxkube.dev`,
      admissionReviewVersions: ['v1'],
      sideEffects: o.sideEffects ?? 'None',
      failurePolicy: o.failurePolicy ?? 'Fail',
      ...(o.timeoutSeconds !== undefined ? { timeoutSeconds: o.timeoutSeconds } : {}),
      ...(o.namespaceSelector !== undefined ? { namespaceSelector: o.namespaceSelector } : {}),
      ...(o.objectSelector !== undefined ? { objectSelector: o.objectSelector } : {}),
      ...(o.reinvocationPolicy !== undefined ? { reinvocationPolicy: o.reinvocationPolicy } : {}),
      clientConfig: { url: o.url ?? `${webhooks.url}${o.path}`, caBundle: o.caBundle ?? certs.caBundle },
      rules: [{ operations: o.operations ?? ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: o.resources ?? ['configmaps'], scope: '*' }],
    };
  }

  async function validating(...hooks: HookOptions[]): Promise<void> {
    await admission.createValidatingWebhookConfiguration({ body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: `v-${hooks[0]?.path.slice(1)}` }, webhooks: hooks.map(hook) as never } });
  }
  async function mutating(...hooks: HookOptions[]): Promise<void> {
    await admission.createMutatingWebhookConfiguration({ body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: `m-${hooks[0]?.path.slice(1)}` }, webhooks: hooks.map(hook) as never } });
  }

  function kubectl(args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(kubectlPath, ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], { env: { PATH: process.env.PATH ?? '', HOME: dir } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(stdin);
    });
  }

  it('refuses a write the validating webhook denies, worded as kube words it, and stores nothing', async () => {
    await validating({ path: '/deny-big' });
    const failure = await failureOf(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('big', 'default', undefined, { a: '1', b: '2', c: '3' }) }));
    expect(failure).to.deep.equal({ code: 403, reason: 'Forbidden', message: 'admission webhook "deny-big.rxkube.dev" denied the request: a ConfigMap may have at most 2 keys' });
    expect((await core.listNamespacedConfigMap({ namespace: 'default' })).items).to.have.length(0);
    expect(seen.map((r) => [r.operation, r.kind, r.resource, r.namespace, r.name, r.dryRun])).to.deep.equal([
      ['CREATE', { group: '', version: 'v1', kind: 'ConfigMap' }, { group: '', version: 'v1', resource: 'configmaps' }, 'default', 'big', false],
    ]);
    await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('small') });
  });

  itKubectl('shows kubectl the denial and the webhook warnings', async () => {
    await validating({ path: '/deny-big' });
    const denied = await kubectl(['create', '-f', '-'], stringify(configMap('big', 'default', undefined, { a: '1', b: '2', c: '3' })));
    expect(denied.code).to.equal(1);
    expect(denied.stderr).to.equal('Error from server (Forbidden): error when creating "STDIN": admission webhook "deny-big.rxkube.dev" denied the request: a ConfigMap may have at most 2 keys\n');
    const created = await kubectl(['create', '-f', '-'], stringify(configMap('small')));
    expect(created.stdout).to.equal('configmap/small created\n');
    expect(created.stderr).to.equal('Warning: counted the keys\n');
  });

  it('stores what the mutating webhook made of the object, and validates the mutated object', async () => {
    await mutating({ path: '/default-labels' });
    await validating({ path: '/require-defaulted' });
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('m', 'default', { app: 'web' }) });
    expect(created.metadata?.labels).to.deep.equal({ app: 'web', defaulted: 'true' });
    const stored = await core.readNamespacedConfigMap({ name: 'm', namespace: 'default' });
    expect(stored.metadata?.labels).to.deep.equal({ app: 'web', defaulted: 'true' });
    expect(stored.metadata?.uid).to.equal(created.metadata?.uid);
    expect(seen.map((r) => r.uid).length).to.equal(2);
    // An update through a patch goes through both again, with the live object as oldObject.
    seen.length = 0;
    await core.patchNamespacedConfigMap({ name: 'm', namespace: 'default', body: { metadata: { labels: { defaulted: null } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect((await core.readNamespacedConfigMap({ name: 'm', namespace: 'default' })).metadata?.labels).to.deep.equal({ app: 'web', defaulted: 'true' });
    expect(seen.map((r) => [r.operation, r.oldObject?.metadata.labels])).to.deep.equal([
      ['UPDATE', { app: 'web', defaulted: 'true' }],
      ['UPDATE', { app: 'web', defaulted: 'true' }],
    ]);
  });

  it('calls webhooks on delete with the live object as oldObject', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('kept') });
    await validating({ path: '/deny-all', operations: ['DELETE'] });
    const failure = await failureOf(core.deleteNamespacedConfigMap({ name: 'kept', namespace: 'default' }));
    expect(failure.message).to.equal('admission webhook "deny-all.rxkube.dev" denied the request: no DELETE here');
    expect(seen[0]?.object).to.equal(null);
    expect(seen[0]?.oldObject?.metadata.name).to.equal('kept');
    await core.readNamespacedConfigMap({ name: 'kept', namespace: 'default' });
  });

  describe('with the webhook down', () => {
    let downUrl: string;
    before(async () => {
      const gone = await startWebhookServer({ port: 0, host: '127.0.0.1', tls: certs, webhooks: {} });
      downUrl = `${gone.url}/deny-all`;
      await gone.close();
    });

    it('fails the write under failurePolicy Fail, naming the webhook and the refused connection', async () => {
      await validating({ path: '/deny-all', url: downUrl, failurePolicy: 'Fail' });
      const failure = await failureOf(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('x') }));
      expect(failure.code).to.equal(500);
      expect(failure.reason).to.equal('InternalError');
      const port = new URL(downUrl).port;
      expect(failure.message).to.equal(`Internal error occurred: failed calling webhook "deny-all.rxkube.dev": failed to call webhook: Post "https://127.0.0.1:${port}/deny-all?timeout=10s": dial tcp 127.0.0.1:${port}: connect: connection refused`);
    });

    it('lets the write through under failurePolicy Ignore', async () => {
      await validating({ path: '/deny-all', url: downUrl, failurePolicy: 'Ignore' });
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('x') });
      await core.readNamespacedConfigMap({ name: 'x', namespace: 'default' });
    });
  });

  it('gives up on a webhook after its timeoutSeconds, with kube\'s "context deadline exceeded"', async () => {
    await validating({ path: '/slow', timeoutSeconds: 1 });
    const failure = await failureOf(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('slow') }));
    expect(failure.code).to.equal(500);
    expect(failure.message).to.equal(`Internal error occurred: failed calling webhook "slow.rxkube.dev": failed to call webhook: Post "${webhooks.url.replace('localhost', '127.0.0.1')}/slow?timeout=1s": context deadline exceeded`);
    expect(seen).to.have.length(1);
  });

  it('sends a request only where the namespaceSelector matches the namespace labels', async () => {
    await core.createNamespace({ body: { metadata: { name: 'guarded', labels: { guarded: 'true' } } } });
    try {
      await validating({ path: '/deny-all', namespaceSelector: { matchLabels: { guarded: 'true' } } });
      const failure = await failureOf(core.createNamespacedConfigMap({ namespace: 'guarded', body: configMap('g', 'guarded') }));
      expect(failure.message).to.equal('admission webhook "deny-all.rxkube.dev" denied the request: no CREATE here');
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('free') });
      expect(seen).to.have.length(1);
    } finally {
      await core.deleteNamespace({ name: 'guarded' });
    }
  });

  it('sends a request only where the objectSelector matches the object labels', async () => {
    await validating({ path: '/deny-all', objectSelector: { matchExpressions: [{ key: 'review', operator: 'In', values: ['yes'] }] } });
    const failure = await failureOf(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('r', 'default', { review: 'yes' }) }));
    expect(failure.message).to.equal('admission webhook "deny-all.rxkube.dev" denied the request: no CREATE here');
    await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('unreviewed', 'default', { review: 'no' }) });
    expect(seen).to.have.length(1);
  });

  it('sends a dry run with dryRun: true, answers with the mutated object, and stores nothing', async () => {
    await mutating({ path: '/default-labels' });
    const answer = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('dry'), dryRun: 'All' });
    expect(answer.metadata?.labels).to.deep.equal({ defaulted: 'true' });
    expect(seen.map((r) => r.dryRun)).to.deep.equal([true]);
    expect((await core.listNamespacedConfigMap({ namespace: 'default' })).items).to.have.length(0);
  });

  it('refuses a dry run that a webhook with side effects would see, without calling it', async () => {
    await validating({ path: '/deny-big', sideEffects: 'Some' });
    const failure = await failureOf(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('dry'), dryRun: 'All' }));
    expect(failure).to.deep.equal({ code: 400, reason: 'BadRequest', message: 'admission webhook "deny-big.rxkube.dev" does not support dry run' });
    expect(seen).to.have.length(0);
    await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('wet') });
    expect(seen).to.have.length(1);
  });

  it('rejects a webhook whose certificate the caBundle did not sign, as kube does', async () => {
    const other = await selfSignedCertificates();
    await validating({ path: '/deny-big', caBundle: other.caBundle });
    const failure = await failureOf(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('x') }));
    expect(failure.code).to.equal(500);
    expect(failure.message).to.match(/^Internal error occurred: failed calling webhook "deny-big.rxkube.dev": failed to call webhook: Post ".*": tls: failed to verify certificate: x509: certificate signed by unknown authority$/);
    expect(seen).to.have.length(0);
  });

  it('rejects a webhook whose certificate has expired', async () => {
    const expired = await selfSignedCertificates({ ipAddresses: ['127.0.0.1'], notBefore: new Date('2020-01-01T00:00:00Z'), notAfter: new Date('2021-01-01T00:00:00Z') });
    const old = await startWebhookServer({ port: 0, host: '127.0.0.1', tls: expired, webhooks: { '/deny-all': validatingWebhook(() => deny('never reached')) } });
    try {
      await validating({ path: '/deny-all', url: `${old.url}/deny-all`, caBundle: expired.caBundle });
      const failure = await failureOf(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('x') }));
      expect(failure.message).to.match(/tls: failed to verify certificate: x509: certificate has expired or is not yet valid$/);
    } finally {
      await old.close();
    }
  });

  for (const policy of ['IfNeeded', 'Never'] as const) {
    it(`${policy === 'IfNeeded' ? 'calls' : 'does not call'} a mutating webhook again after a later one changed the object, under reinvocationPolicy ${policy}`, async () => {
      await mutating({ path: '/label-a', reinvocationPolicy: policy });
      // Configurations run in the order of their names: m-label-a, then m-label-b.
      await mutating({ path: '/label-b' });
      const created = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('re') });
      expect(created.metadata?.labels).to.deep.equal(policy === 'IfNeeded' ? { 'seen-b': '1', b: '1' } : { 'seen-b': 'none', b: '1' });
      expect(seen).to.have.length(policy === 'IfNeeded' ? 3 : 2);
    });
  }

  it('calls a webhook for a subresource only when its rules name the subresource', async () => {
    const crds = server.kubeConfig().makeApiClient(ApiextensionsV1Api);
    const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
    await crds.createCustomResourceDefinition({ body: modelCrd(widgetCrd()) });
    try {
      await eventually(async () => (await crds.readCustomResourceDefinition({ name: 'widgets.example.com' })).status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));
      const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } };
      await custom.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', body: widget });
      await admission.createValidatingWebhookConfiguration({
        body: {
          metadata: { name: 'status-only' },
          webhooks: [{ ...hook({ path: '/deny-all', operations: ['UPDATE'] }), rules: [{ operations: ['UPDATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets/status'] }] } as never],
        },
      });
      const ref = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', name: 'w' };
      await custom.patchNamespacedCustomObject({ ...ref, body: { spec: { size: 2 } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      expect(seen).to.have.length(0);
      const failure = await failureOf(custom.patchNamespacedCustomObjectStatus({ ...ref, body: { status: { ready: true } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
      expect(failure.message).to.equal('admission webhook "deny-all.rxkube.dev" denied the request: no UPDATE here');
      expect(seen.map((r) => [r.subResource, r.resource.resource, (r.object as { status?: unknown }).status])).to.deep.equal([['status', 'widgets', { ready: true }]]);
    } finally {
      await crds.deleteCustomResourceDefinition({ name: 'widgets.example.com' });
    }
  });

  for (const matchPolicy of ['Equivalent', 'Exact'] as const) {
    it(`${matchPolicy === 'Equivalent' ? 'sends' : 'does not send'} a write through v2 to a webhook whose rules name v1, under matchPolicy ${matchPolicy}`, async () => {
      const crds = server.kubeConfig().makeApiClient(ApiextensionsV1Api);
      const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
      const crd = widgetCrd() as { spec: { versions: Record<string, unknown>[] } };
      crd.spec.versions.push({ ...crd.spec.versions[0], name: 'v2', storage: false });
      await crds.createCustomResourceDefinition({ body: modelCrd(crd as Record<string, unknown>) });
      try {
        await eventually(async () => (await crds.readCustomResourceDefinition({ name: 'widgets.example.com' })).status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));
        await admission.createValidatingWebhookConfiguration({
          body: { metadata: { name: 'v1-only' }, webhooks: [{ ...hook({ path: '/deny-all' }), matchPolicy, rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }] } as never] },
        });
        const write = custom.createNamespacedCustomObject({ group: 'example.com', version: 'v2', namespace: 'default', plural: 'widgets', body: { apiVersion: 'example.com/v2', kind: 'Widget', metadata: { name: 'w2' }, spec: {} } });
        if (matchPolicy === 'Exact') {
          await write;
          expect(seen).to.have.length(0);
        } else {
          expect((await failureOf(write)).message).to.equal('admission webhook "deny-all.rxkube.dev" denied the request: no CREATE here');
          expect(seen.map((r) => [r.kind.version, r.requestKind?.version, r.object?.apiVersion])).to.deep.equal([['v1', 'v2', 'example.com/v1']]);
        }
      } finally {
        await crds.deleteCustomResourceDefinition({ name: 'widgets.example.com' });
      }
    });
  }

  it('calls no webhook for a resource or operation its rules do not name', async () => {
    await validating({ path: '/deny-all', operations: ['DELETE'], resources: ['secrets'] });
    await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('c') });
    await core.deleteNamespacedConfigMap({ name: 'c', namespace: 'default' });
    expect(seen).to.have.length(0);
  });
});
