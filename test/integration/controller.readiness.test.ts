import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { runController, silentLogger, type KubeObject, type RunningController } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default' };
const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespace: 'default' };

/**
 * Readiness over real HTTP: a controller whose informer is forbidden keeps
 * running, answers `/readyz` 503 naming the resource and the server's
 * message, counts the retries, and becomes ready once RBAC allows it; one
 * whose caches cannot sync in time errors naming the resource and the 403.
 */
describe('controller readiness against the embedded API server', () => {
  let server: ApiServer;
  let run: RunningController<KubeObject> | undefined;

  beforeEach(async () => {
    server = await startApiServer();
  });

  afterEach(async () => {
    run?.stop();
    await run?.done.catch(() => undefined);
    run = undefined;
    await server.close();
  });

  it('answers /readyz 503 with the reason while an informer is forbidden, counts the 403s, and becomes ready once allowed', async () => {
    await server.kubeConfig().makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    server.faults.forbid({ verb: ['list', 'watch'], resource: 'secrets' });
    const reconciled: string[] = [];
    run = await runController<KubeObject>({
      name: 'readiness',
      kubeConfig: server.kubeConfig(),
      for: configmaps,
      watches: [{ resource: secrets, map: () => [] }],
      logger: silentLogger,
      scheduler: dilatedScheduler(100),
      cacheSyncTimeout: Infinity,
      handleSignals: false,
      health: { port: 0, host: '127.0.0.1' },
      reconcile: (key) => void reconciled.push(key),
    });
    const url = run.health?.url as string;
    const controller = run.controller;
    await waitFor(() => controller.store.synced && controller.notReady().some((r) => r.startsWith('secrets: not answering')), 'the secrets informer to be failing');
    const unready = await fetch(`${url}/readyz`);
    expect(unready.status).to.equal(503);
    const body = await unready.text();
    expect(body).to.match(/\[-\]ready failed: secrets: not answering: list failing: 403 Forbidden: .*cannot list .*secrets/);
    expect(controller.ready()).to.equal(false);
    expect(reconciled).to.deep.equal([]);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).to.match(/rxkube_source_auth_retries_total\{resource="secrets",verb="list",code="403"\} [1-9]/);
    expect(metrics).to.contain('rxkube_source_failing{resource="secrets"} 1');

    server.faults.allow();
    await waitFor(() => controller.ready(), 'ready once allowed');
    expect((await fetch(`${url}/readyz`)).status).to.equal(200);
    expect(await (await fetch(`${url}/metrics`)).text()).to.contain('rxkube_source_failing{resource="secrets"} 0');
    await waitFor(() => reconciled.includes('default/a'), 'the reconcile');
  });

  it('errors when the caches do not sync within cacheSyncTimeout, naming the resource and its 403', async () => {
    server.faults.forbid({ verb: 'list', resource: 'secrets' });
    run = await runController<KubeObject>({
      name: 'slow-sync',
      kubeConfig: server.kubeConfig(),
      for: configmaps,
      watches: [{ resource: secrets, map: () => [] }],
      logger: silentLogger,
      scheduler: dilatedScheduler(100),
      cacheSyncTimeout: 30_000,
      handleSignals: false,
      health: false,
      reconcile: () => undefined,
    });
    const error = await run.done.then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(error?.name).to.equal('CacheSyncTimeoutError');
    expect(error?.message).to.match(/^controller "slow-sync": caches did not sync within 30000 ms: secrets: not answering: list failing: 403 Forbidden: /);
    expect(error?.message).not.to.contain('configmaps');
    expect(run.controller.ready()).to.equal(false);
    expect(run.controller.notReady()[0]).to.match(/^the controller failed: controller "slow-sync": caches did not sync/);
  });
});
