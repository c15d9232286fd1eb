import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { concat, map, NEVER, of, timer, type Observable, type SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { controller, silentLogger, type KubeObject, type ListWatchEvent } from 'rxkube';
import { memoryClient, memoryRecorder, runVirtualTime } from 'rxkube/testing';
import { MarbleInformers } from '../../src/testing/marble/marbleInformers.js';

const configMaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret' };

/** A controller for ConfigMaps that also watches Secrets, in virtual time, each source scripted on the scheduler. */
function scripted(sources: (scheduler: SchedulerLike) => Record<string, Observable<ListWatchEvent>>, options: { cacheSyncTimeout?: number } = {}) {
  const scheduler = new TestScheduler(() => undefined);
  const inputs = sources(scheduler);
  const ctl = controller<KubeObject>({
    name: 'ready',
    kubeConfig: new KubeConfig(),
    for: configMaps,
    watches: [{ resource: secrets, map: () => [] }],
    scheduler,
    logger: silentLogger,
    informers: new MarbleInformers((resource) => inputs[resource.resource] ?? NEVER, { scheduler }),
    client: memoryClient({ scheduler }),
    recorder: memoryRecorder({ scheduler }),
    reconcile: () => undefined,
    ...options,
  });
  const outcome: { error?: { at: number; err: Error }; completedAt?: number } = {};
  const probes: { at: number; ready: boolean; synced: boolean; leading: boolean; notReady: string[] }[] = [];
  const probe = (at: number) =>
    scheduler.schedule(() => probes.push({ at, ready: ctl.ready(), synced: ctl.synced(), leading: ctl.leading(), notReady: ctl.notReady() }), at);
  return { scheduler, ctl, outcome, probes, probe };
}

const listed = (rv: string): ListWatchEvent[] => [{ type: 'Restart' }, { type: 'Synced', resourceVersion: rv }];
const syncedAt = (scheduler: SchedulerLike, at: number): Observable<ListWatchEvent> =>
  concat(of<ListWatchEvent>({ type: 'Restart' }), timer(at, scheduler).pipe(map((): ListWatchEvent => ({ type: 'Synced', resourceVersion: '2' }))), NEVER);

async function run(s: ReturnType<typeof scripted>, maxTime = 200_000) {
  s.ctl.subscribe({ error: (err: Error) => (s.outcome.error = { at: s.scheduler.now(), err }), complete: () => (s.outcome.completedAt = s.scheduler.now()) });
  await runVirtualTime(s.scheduler, { maxTime });
}

describe('controller() readiness and CacheSyncTimeout, in virtual time', () => {
  it('errors after the default two minutes when a cache never syncs, naming that resource and why', async () => {
    const s = scripted(() => ({ configmaps: concat(of(...listed('1')), NEVER), secrets: concat(of<ListWatchEvent>({ type: 'Restart' }), NEVER) }));
    s.probe(60_000);
    await run(s);
    expect(s.outcome.error?.at).to.equal(120_000);
    expect(s.outcome.error?.err.name).to.equal('CacheSyncTimeoutError');
    expect(s.outcome.error?.err.message).to.equal('controller "ready": caches did not sync within 120000 ms: secrets: not synced yet (no complete list so far)');
    expect(s.probes[0]).to.deep.include({ ready: false, synced: false, notReady: ['secrets: not synced yet (no complete list so far)'] });
  });

  it('honours its own cacheSyncTimeout', async () => {
    const s = scripted((scheduler) => ({ configmaps: concat(of(...listed('1')), NEVER), secrets: syncedAt(scheduler, 9_000) }), { cacheSyncTimeout: 5_000 });
    await run(s);
    expect(s.outcome.error?.at).to.equal(5_000);
    expect(s.outcome.error?.err.message).to.contain('within 5000 ms: secrets: not synced yet');
  });

  it('raises nothing once the caches synced within the bound, and is ready from then on', async () => {
    const s = scripted((scheduler) => ({ configmaps: concat(of(...listed('1')), NEVER), secrets: syncedAt(scheduler, 119_000) }));
    s.probe(118_000);
    s.probe(119_001);
    s.probe(190_000);
    await run(s);
    expect(s.outcome.error).to.equal(undefined);
    expect(s.probes.map((p) => [p.at, p.ready, p.synced])).to.deep.equal([
      [118_000, false, false],
      [119_001, true, true],
      [190_000, true, true],
    ]);
  });

  it('after ending on a failure is neither ready, synced nor leading, and says why', async () => {
    const failure = new Error('the resource type went away');
    const s = scripted((scheduler) => ({
      configmaps: concat(of(...listed('1')), timer(1_000, scheduler).pipe(map((): ListWatchEvent => { throw failure; }))),
      secrets: concat(of(...listed('1')), NEVER),
    }));
    s.probe(500);
    s.probe(2_000);
    await run(s);
    expect(s.outcome.error?.err).to.equal(failure);
    expect(s.probes[0]).to.deep.include({ ready: true, synced: true, leading: true, notReady: [] });
    expect(s.probes[1]).to.deep.include({ ready: false, synced: false, leading: false, notReady: ['the controller failed: the resource type went away'] });
  });

  it('is not ready before it starts', () => {
    const s = scripted(() => ({}));
    expect([s.ctl.ready(), s.ctl.synced(), s.ctl.leading(), s.ctl.notReady()]).to.deep.equal([false, false, false, ['the controller has not started']]);
  });
});
