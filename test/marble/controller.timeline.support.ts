import { KubeConfig } from '@kubernetes/client-node';
import { TestScheduler } from 'rxjs/testing';
import { controller, exponentialFailureRateLimiter, silentLogger, type ControllerOptions, type KubeObject, type Logger } from 'rxkube';
import { memoryClient, memoryRecorder, type MemoryClient } from 'rxkube/testing';
import { MarbleInformers } from '../../src/testing/marble/marbleInformers.js';

export const configMaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
export const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret' };
export const services = { group: '', version: 'v1', resource: 'services', kind: 'Service' };

/**
 * The scripted run of the timeline tests: ConfigMaps `default/good` and
 * `default/bad`, each reconciled into a Secret it owns and a `Synced`
 * Event; `bad`'s first two runs fail (retried after 100 then 200 ms);
 * Services are watched and mapped to the ConfigMap of their name. All in
 * virtual time, on a memory cluster whose watches feed the real informers.
 */
export function scriptedController(
  extra: Partial<ControllerOptions<KubeObject>> | ((scheduler: TestScheduler, client: MemoryClient) => Partial<ControllerOptions<KubeObject>>) = {},
  logger: Logger = silentLogger,
) {
  const scheduler = new TestScheduler(() => undefined);
  const client: MemoryClient = memoryClient({ scheduler, latency: 1 });
  client.seed(
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'good', namespace: 'default' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bad', namespace: 'default' } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'good', namespace: 'default' } },
  );
  let badFailures = 0;
  const ctl = controller<KubeObject>({
    name: 'mirror',
    kubeConfig: new KubeConfig(),
    for: configMaps,
    owns: [secrets],
    watches: [{ resource: services, map: (delta) => delta.key }],
    scheduler,
    logger,
    informers: new MarbleInformers((resource, selectors) => client.watch(resource, selectors), { scheduler }),
    client,
    recorder: memoryRecorder({ scheduler }),
    rateLimiter: exponentialFailureRateLimiter(100, 10_000),
    reconcile: async (key, ctx) => {
      if (key === 'default/bad' && badFailures < 2) throw new Error(`not yet (failure ${++badFailures})`);
      const owner = ctx.object;
      if (owner === undefined) return;
      const uid = owner.metadata.uid ?? '';
      await ctx.client.createOrUpdate(
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: ctx.name, namespace: ctx.namespace ?? 'default' } } as KubeObject,
        (secret) => {
          secret.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: ctx.name, uid, controller: true }];
          return secret;
        },
        { signal: ctx.signal },
      );
      ctx.recorder.record(owner, { type: 'Normal', reason: 'Synced', action: 'Sync' });
    },
    ...(typeof extra === 'function' ? extra(scheduler, client) : extra),
  });
  return { scheduler, client, ctl };
}

export { expectComplete, only } from '../support/timelineChecks.js';
