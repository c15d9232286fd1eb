import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { ignoreElements, map, merge, NEVER, tap, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { controller, silentLogger, type KubeObject } from 'rxkube';
import { inMemoryLeaseClient, memoryClient, memoryRecorder, runVirtualTime } from 'rxkube/testing';
import { MarbleInformers } from '../../src/testing/marble/marbleInformers.js';

const configMaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };

/**
 * A controller in virtual time over an in-memory cluster of 8 namespaces'
 * ConfigMaps, each reconcile taking 500 ms, shut down at 700 ms.
 */
async function shutDownMidway(concurrency: number, options: { gracePeriod?: number; stopNowAt?: number } = {}) {
  const scheduler = new TestScheduler(() => undefined);
  const client = memoryClient({ scheduler });
  for (let i = 0; i < 8; i++) client.seed({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: `team-${i}` } });
  const runs: { key: string; start: number; end?: number; aborted?: boolean }[] = [];
  const shutdown = new AbortController();
  const stopNow = new AbortController();
  const ctl = controller<KubeObject>({
    name: 'slow',
    kubeConfig: new KubeConfig(),
    for: configMaps,
    concurrency,
    scheduler,
    logger: silentLogger,
    informers: new MarbleInformers((resource, selectors) => client.watch(resource, selectors), { scheduler }),
    client,
    recorder: memoryRecorder({ scheduler }),
    signal: shutdown.signal,
    stopNow: stopNow.signal,
    ...(options.gracePeriod !== undefined ? { gracePeriod: options.gracePeriod } : {}),
    reconcile: (key, ctx) => {
      const run: { key: string; start: number; end?: number; aborted?: boolean } = { key, start: scheduler.now() };
      runs.push(run);
      ctx.signal.addEventListener('abort', () => (run.aborted = true));
      return timer(500, scheduler).pipe(tap({ complete: () => (run.end = scheduler.now()) }), ignoreElements());
    },
  });
  let completedAt: number | undefined;
  ctl.subscribe({ complete: () => (completedAt = scheduler.now()) });
  scheduler.schedule(() => shutdown.abort(), 700);
  if (options.stopNowAt !== undefined) scheduler.schedule(() => stopNow.abort(), options.stopNowAt);
  await runVirtualTime(scheduler, { maxTime: 120_000 });
  return { runs, completedAt };
}

describe('controller() shutdown, in virtual time', () => {
  for (const concurrency of [1, 2, 4]) {
    it(`starts no key after the abort at concurrency ${concurrency}, lets the runs in flight finish, then completes`, async () => {
      const { runs, completedAt } = await shutDownMidway(concurrency);
      // Keys start in waves of `concurrency` every 500 ms: at 0 and 500 before the abort at 700.
      expect(runs.map((r) => r.start)).to.deep.equal([...Array<number>(concurrency).fill(0), ...Array<number>(concurrency).fill(500)]);
      expect(runs.every((r) => r.end === r.start + 500 && r.aborted !== true), 'every run in flight finished').to.equal(true);
      expect(completedAt).to.equal(1000);
    });
  }

  it('aborts the runs still in flight at the end of the grace period, then completes', async () => {
    const { runs, completedAt } = await shutDownMidway(2, { gracePeriod: 100 });
    expect(runs.filter((r) => r.start === 500).map((r) => [r.aborted, r.end])).to.deep.equal([
      [true, undefined],
      [true, undefined],
    ]);
    expect(completedAt).to.equal(800);
  });

  it('ends the grace period at once when stopNow aborts', async () => {
    const { runs, completedAt } = await shutDownMidway(2, { stopNowAt: 750 });
    expect(runs.filter((r) => r.start === 500).every((r) => r.aborted === true)).to.equal(true);
    expect(completedAt).to.equal(750);
  });
});

describe('controller() failing, in virtual time', () => {
  it('on an informer that fails for good, aborts the runs in flight, releases the lease, then errors', async () => {
    const scheduler = new TestScheduler(() => undefined);
    const client = memoryClient({ scheduler });
    client.seed({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' } });
    const leases = inMemoryLeaseClient({ scheduler, latency: 1 });
    const failure = new Error('the resource type went away');
    let aborted = false;
    const ctl = controller<KubeObject>({
      name: 'failing',
      kubeConfig: new KubeConfig(),
      for: configMaps,
      scheduler,
      logger: silentLogger,
      informers: new MarbleInformers(
        (resource, selectors) => merge(client.watch(resource, selectors), timer(100, scheduler).pipe(map(() => { throw failure; }))),
        { scheduler },
      ),
      client,
      recorder: memoryRecorder({ scheduler }),
      leaderElection: { lease: 'default/failing', identity: 'a', client: leases },
      reconcile: (_key, ctx) => {
        ctx.signal.addEventListener('abort', () => (aborted = true));
        return NEVER;
      },
    });
    let error: { at: number; err: unknown } | undefined;
    let holderAtError: string | undefined;
    ctl.subscribe({
      error: (err: unknown) => {
        error = { at: scheduler.now(), err };
        holderAtError = leases.lease('default', 'failing')?.spec?.holderIdentity;
      },
    });
    await runVirtualTime(scheduler, { maxTime: 60_000 });
    expect(aborted, 'the run in flight was aborted').to.equal(true);
    expect(error?.err).to.equal(failure);
    // The release was written (at 101, answered at 102) before the output errored.
    expect(holderAtError).to.equal('');
    expect(error?.at).to.equal(102);
  });
});
