import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Subscription } from 'rxjs';
import { controller, isNotFound, silentLogger, type KubeObject, type ReconcileOutcome } from 'rxkube';
import { startApiServer, type ApiServer, type TimelineEntry } from 'rxkube/testing';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { expectComplete, only } from '../support/timelineChecks.js';
import { waitFor } from '../support/waitFor.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default' };
const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespace: 'default' };

describe('controller().timeline against the embedded API server', () => {
  let server: ApiServer;
  let kc: KubeConfig;
  let core: CoreV1Api;
  const running: Subscription[] = [];

  beforeEach(async () => {
    server = await startApiServer();
    kc = server.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
  });

  afterEach(async () => {
    for (const s of running.splice(0)) s.unsubscribe();
    await server.close();
  });

  it('records a real run: list failures and their retry, the objects listed and watched, requests with their codes, Events', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { v: '1' } } });
    // The first list of Secrets fails: the source backs off and lists again.
    server.faults.failNext(1, { code: 500, verb: 'list', resource: 'secrets' });
    const c = controller<KubeObject>({
      name: 'timeline',
      kubeConfig: kc,
      for: configmaps,
      owns: [secrets],
      logger: silentLogger,
      // Time runs 100× faster: the backoff after the failed list is milliseconds of wall time.
      scheduler: dilatedScheduler(100),
      cacheSyncTimeout: 100 * 120_000,
      reconcile: async (_key, ctx) => {
        const owner = ctx.object;
        if (owner === undefined) return;
        const missing = await ctx.client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'missing' }, { signal: ctx.signal }).catch((err: unknown) => err);
        if (!isNotFound(missing)) throw new Error('expected a 404 for the missing ConfigMap');
        await ctx.client.createOrUpdate(
          { apiVersion: 'v1', kind: 'Secret', metadata: { name: ctx.name, namespace: 'default' } } as KubeObject,
          (secret) => {
            secret.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: ctx.name, uid: owner.metadata.uid ?? '', controller: true }];
            return secret;
          },
          { signal: ctx.signal },
        );
        ctx.recorder.record(owner, { type: 'Normal', reason: 'Mirrored', action: 'Mirror', note: `secret ${ctx.name} in place` });
      },
    });
    const entries: TimelineEntry[] = [];
    const outcomes: ReconcileOutcome[] = [];
    running.push(c.timeline.subscribe((e) => entries.push(e)));
    running.push(c.subscribe((o) => outcomes.push(o)));
    await waitFor(() => outcomes.some((o) => o.key === 'default/a' && o.result === 'success'), 'the first reconcile of a');
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'b' } } });
    await waitFor(() => entries.some((e) => e.type === 'informer' && e.resource === 'secrets' && e.event === 'Added' && e.key === 'default/b'), 'the Secret of b, watched');
    await waitFor(() => outcomes.filter((o) => o.key === 'default/b').length >= 2, 'the run of b its Secret triggered');

    expectComplete(entries);
    const failure = only(entries, 'informer').find((e) => e.event === 'Failure');
    expect(failure).to.deep.include({ resource: 'secrets', code: 500 });
    expect(failure?.error).to.match(/^list: /);
    expect(failure?.retryIn).to.be.a('number');
    // The list began, failed, began again after the backoff, and completed (there were no Secrets yet).
    const secretEvents = only(entries, 'informer').filter((e) => e.resource === 'secrets').map((e) => e.event);
    expect(secretEvents.slice(0, 4)).to.deep.equal(['Restart', 'Failure', 'Restart', 'Synced']);
    const watched = only(entries, 'informer').find((e) => e.resource === 'configmaps' && e.event === 'Added' && e.key === 'default/b');
    expect(watched?.object?.metadata.uid).to.be.a('string');
    expect(watched?.resourceVersion).to.equal(watched?.object?.metadata.resourceVersion);

    const writesOfB = only(entries, 'write').filter((w) => w.key === 'default/b');
    expect(writesOfB.slice(0, 2).map((w) => [w.verb, w.resource, w.objectKey, w.code])).to.deep.equal([
      ['get', 'ConfigMap', 'default/missing', 404],
      ['createOrUpdate', 'Secret', 'default/b', 201],
    ]);
    expect((writesOfB[0]?.body as { reason?: string } | undefined)?.reason).to.equal('NotFound');
    expect(writesOfB[0]?.error).to.contain('not found');
    expect((writesOfB[1]?.body as { object: KubeObject }).object.metadata.ownerReferences?.[0]?.name).to.equal('b');
    const events = only(entries, 'event').filter((e) => e.key === 'default/b');
    expect(events[0]).to.deep.include({ eventType: 'Normal', reason: 'Mirrored', message: 'secret b in place', regarding: 'default/b' });
    expect(only(entries, 'trigger').some((t) => t.key === 'default/b' && t.cause.via === 'owns' && t.cause.objectKey === 'default/b')).to.equal(true);
  });
});
