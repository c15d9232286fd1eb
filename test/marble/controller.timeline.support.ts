import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import { controller, exponentialFailureRateLimiter, silentLogger, type ControllerOptions, type KubeObject, type Logger } from 'rxkube';
import { memoryClient, memoryRecorder, type MemoryClient, type TimelineEntry } from 'rxkube/testing';
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
export function scriptedController(extra: Partial<ControllerOptions<KubeObject>> = {}, logger: Logger = silentLogger) {
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
    ...extra,
  });
  return { scheduler, client, ctl };
}

type Of<K extends TimelineEntry['type']> = Extract<TimelineEntry, { type: K }>;

/** The entries of one type. */
export function only<K extends TimelineEntry['type']>(entries: readonly TimelineEntry[], type: K): Of<K>[] {
  return entries.filter((e): e is Of<K> => e.type === type);
}

const legal: Record<string, readonly string[]> = {
  idle: ['waiting', 'running'],
  waiting: ['running', 'idle'],
  running: ['waiting', 'delayed', 'idle'],
  delayed: ['waiting', 'idle'],
};

/**
 * The checks every complete timeline passes: entries in time order; each
 * key's queue states move only as the queue can (idle → waiting/running,
 * waiting → running/idle, running → waiting/delayed/idle, delayed →
 * waiting/idle), a run-start at each `running` and a run-end before the
 * key leaves `running`; every run-start has an earlier trigger of its key
 * (a retry's, before the first run of the series); every write and Event
 * lies between a run-start and the run-end of its key.
 */
export function expectComplete(entries: readonly TimelineEntry[]): void {
  for (let i = 1; i < entries.length; i++) {
    expect(entries[i]?.at, `entry ${i} comes after entry ${i - 1}`).to.be.at.least(entries[i - 1]?.at ?? 0);
  }
  const state = new Map<string, string>();
  const inRun = new Set<string>();
  const triggered = new Set<string>();
  for (const [i, e] of entries.entries()) {
    const where = `entry ${i} (${JSON.stringify(e)})`;
    switch (e.type) {
      case 'trigger':
        triggered.add(e.key);
        break;
      case 'queue': {
        const from = state.get(e.key) ?? 'idle';
        expect(legal[from], `${where}: ${from} → ${e.state}`).to.include(e.state);
        if (from === 'running') expect(inRun.has(e.key), `${where}: the run ended before the key left running`).to.equal(false);
        state.set(e.key, e.state);
        break;
      }
      case 'run-start':
        expect(state.get(e.key), `${where}: a run starts while running`).to.equal('running');
        expect(triggered.has(e.key), `${where}: a run with no trigger before it`).to.equal(true);
        expect(inRun.has(e.key), `${where}: two runs at once`).to.equal(false);
        inRun.add(e.key);
        break;
      case 'run-end':
        expect(inRun.has(e.key), `${where}: a run ends that never started`).to.equal(true);
        inRun.delete(e.key);
        break;
      case 'write':
      case 'event':
        expect(inRun.has(e.key), `${where}: outside a run of its key`).to.equal(true);
        break;
      default:
        break;
    }
  }
}
