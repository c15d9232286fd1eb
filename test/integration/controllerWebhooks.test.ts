import { AdmissionregistrationV1Api, ApiException, CoreV1Api } from '@kubernetes/client-node';
import { webhookPaths } from 'rxkube/webhooks';
import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runController, silentLogger, type RunningController } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { allow, deny, selfSignedCertificates } from 'rxkube/webhooks';
import { waitFor } from '../support/waitFor.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };

describe('runController serving the webhooks of its kind', function () {
  this.timeout(60_000);
  let server: ApiServer;
  let dir: string;
  let running: RunningController<never> | undefined;

  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
    dir = await mkdtemp(join(tmpdir(), 'rxkube-controller-certs-'));
  });
  afterEach(async () => {
    running?.stop();
    await running?.done.catch(() => {});
    running = undefined;
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is unready until the serving certificate appears, then serves the validating webhook at its kubebuilder path', async () => {
    running = (await runController({
      name: 'cm',
      kubeConfig: server.kubeConfig(),
      for: configmaps,
      reconcile: () => undefined,
      health: { port: 0, host: '127.0.0.1' },
      handleSignals: false,
      logger: silentLogger,
      webhooks: {
        tls: { certDir: dir },
        port: 0,
        host: '127.0.0.1',
        validate: (request) => ((request.object as { data?: Record<string, string> } | null)?.data?.forbidden !== undefined ? deny('forbidden is a forbidden key') : allow()),
      },
    })) as unknown as RunningController<never>;
    const health = running.health?.url as string;
    await waitFor(() => (running as RunningController<never>).controller.synced(), 'the store to sync');
    const unready = await fetch(`${health}/readyz`);
    expect(unready.status).to.equal(503);
    expect(await unready.text()).to.include('[-]webhooks failed');

    const certs = await selfSignedCertificates();
    await writeFile(join(dir, 'tls.key'), certs.key);
    await writeFile(join(dir, 'tls.crt'), certs.cert);
    const webhooks = await (running.webhooks as Promise<{ url: string }>);
    expect((await fetch(`${health}/readyz`)).status).to.equal(200);

    const kc = server.kubeConfig();
    await kc.makeApiClient(AdmissionregistrationV1Api).createValidatingWebhookConfiguration({
      body: {
        metadata: { name: 'cm' },
        webhooks: [
          {
            name: 'validate.cm.rxkube.dev',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            clientConfig: { url: `${webhooks.url.replace('localhost', '127.0.0.1')}${webhookPaths(configmaps).validate}`, caBundle: certs.caBundle },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          },
        ],
      },
    });
    const core = kc.makeApiClient(CoreV1Api);
    let error: unknown;
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'bad' }, data: { forbidden: 'x' } } }).catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(ApiException);
    expect(JSON.parse(String((error as ApiException<string>).body)).message).to.equal('admission webhook "validate.cm.rxkube.dev" denied the request: forbidden is a forbidden key');
    expect(webhookPaths(configmaps).validate).to.equal('/validate-core-v1-configmap');
    expect(await (await fetch(`${health}/metrics`)).text()).to.include('controller_runtime_webhook_requests_total{webhook="/validate-core-v1-configmap",code="200"} 1');

    running.stop();
    await running.done;
    let refused: unknown;
    await fetch(webhooks.url).catch((e: unknown) => (refused = e));
    expect(refused).to.be.instanceOf(Error);
  });
});
