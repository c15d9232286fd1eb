import { expect } from 'chai';
import { map, merge, timer } from 'rxjs';
import { type TimelineEntry, runVirtualTime } from 'rxkube/testing';
import { MarbleInformers } from '../../src/testing/marble/marbleInformers.js';
import { expectComplete, only, scriptedController } from './controller.timeline.support.js';

async function recorded(until = 5_000) {
  const s = scriptedController();
  const entries: TimelineEntry[] = [];
  s.ctl.timeline.subscribe((e) => entries.push(e));
  const outcomes: string[] = [];
  s.ctl.subscribe((o) => outcomes.push(`${o.key}:${o.result}`));
  await runVirtualTime(s.scheduler, { until });
  return { ...s, entries, outcomes };
}

describe('controller().timeline, in virtual time', () => {
  it('is complete for a scripted run: every run has a cause, every write and Event a run, queue states in a legal order', async () => {
    const { entries, outcomes } = await recorded();
    expect(outcomes).to.include.members(['default/good:success', 'default/bad:error', 'default/bad:success']);
    expectComplete(entries);
    expect(only(entries, 'run-end')).to.have.length(outcomes.length);
    expect(entries.every((e) => e.controller === 'mirror')).to.equal(true);
    // Each write has its answer: the Secret created (201), then, on the run its Added triggers, found unchanged.
    const writes = only(entries, 'write');
    expect(writes.filter((w) => w.key === 'default/good').map((w) => [w.verb, w.resource, w.objectKey, w.code])).to.deep.equal([
      ['createOrUpdate', 'Secret', 'default/good', 201],
      ['createOrUpdate', 'Secret', 'default/good', 200],
    ]);
    expect((writes[0]?.body as { result: string; object: { metadata: { uid?: string } } }).result).to.equal('created');
    const [badEvent] = only(entries, 'event').filter((e) => e.key === 'default/bad');
    expect(badEvent).to.deep.equal({
      type: 'event',
      at: badEvent?.at,
      controller: 'mirror',
      key: 'default/bad',
      eventType: 'Normal',
      reason: 'Synced',
      message: 'Sync',
      action: 'Sync',
      regarding: 'default/bad',
    });
  });

  it('names the cause of each trigger: the primary delta, the owned object mapped to its owner, the watched one through its map', async () => {
    const { entries } = await recorded();
    const causes = only(entries, 'trigger').map((t) => `${t.key} ← ${t.cause.via} ${t.cause.resource} ${t.cause.delta} ${t.cause.objectKey}${t.cause.initial === true ? ' (initial)' : ''}`);
    expect(causes).to.include.members([
      'default/good ← for configmaps Added default/good (initial)',
      'default/bad ← for configmaps Added default/bad (initial)',
      'default/good ← watches services Added default/good (initial)',
      'default/good ← owns secrets Added default/good',
      'default/bad ← owns secrets Added default/bad',
    ]);
    // The Secret's Added reached the informer before it triggered its owner, with the object received.
    const secretAdded = entries.findIndex((e) => e.type === 'informer' && e.resource === 'secrets' && e.event === 'Added' && e.key === 'default/good');
    const ownerTrigger = entries.findIndex((e) => e.type === 'trigger' && e.cause.via === 'owns' && e.key === 'default/good');
    expect(secretAdded).to.be.greaterThan(-1);
    expect(secretAdded).to.be.lessThan(ownerTrigger);
    const added = entries[secretAdded];
    expect(added?.type === 'informer' && added.object?.metadata.ownerReferences?.[0]?.name).to.equal('good');
    expect(added?.type === 'informer' && added.resourceVersion).to.equal(added?.type === 'informer' ? added.object?.metadata.resourceVersion : 'none');
  });

  it('shows each informer list: Restart, every object Listed with its resourceVersion, then Synced', async () => {
    const { entries } = await recorded();
    const configMapEvents = only(entries, 'informer').filter((e) => e.resource === 'configmaps');
    expect(configMapEvents.slice(0, 4).map((e) => `${e.event} ${e.key ?? e.resourceVersion ?? ''}`)).to.deep.equal([
      'Restart ',
      'Listed default/bad',
      'Listed default/good',
      `Synced ${configMapEvents[3]?.resourceVersion ?? '?'}`,
    ]);
    expect(configMapEvents[1]?.object?.metadata.name).to.equal('bad');
    expect(configMapEvents[1]?.resourceVersion).to.be.a('string');
  });

  it('shows a failing key delayed by the rate limiter, then retried with the next attempt', async () => {
    const { entries } = await recorded();
    const bad = entries.filter((e) => 'key' in e && e.key === 'default/bad' && (e.type === 'queue' || e.type === 'run-start' || e.type === 'run-end'));
    const lines = bad.map((e) => {
      if (e.type === 'queue') return `queue ${e.state}${e.delay !== undefined ? ` ${e.delay} ${e.reason}` : ''}`;
      if (e.type === 'run-start') return `start ${e.attempt}`;
      return e.type === 'run-end' ? `end ${e.attempt} ${e.result}${e.error !== undefined ? ` ${e.error}` : ''}` : '';
    });
    // bad, listed first, finds the worker free: it runs without waiting.
    expect(lines.slice(0, 9)).to.deep.equal([
      'start 1',
      'end 1 error not yet (failure 1)',
      'queue delayed 100 error',
      'queue waiting',
      'start 2',
      'end 2 error not yet (failure 2)',
      'queue delayed 200 error',
      'queue waiting',
      'start 3',
    ]);
    const delayed = bad.filter((e) => e.type === 'queue' && e.state === 'delayed');
    const retried = only(bad, 'run-start').filter((r) => r.attempt > 1);
    expect(retried.map((r, i) => r.at - (delayed[i]?.at ?? NaN))).to.deep.equal([100, 200]);
    const ends = only(bad, 'run-end');
    expect(ends[0]?.duration).to.be.a('number');
    expect(ends.at(-1)?.result).to.equal('success');
  });

  it('says the controller leads, once, at the start, without leader election', async () => {
    const { entries } = await recorded();
    const leadership = only(entries, 'leadership');
    expect(leadership.map((l) => l.leading)).to.deep.equal([true]);
    expect(entries.findIndex((e) => e.type === 'leadership')).to.be.lessThan(entries.findIndex((e) => e.type === 'run-start'));
  });

  it('is hot: subscribing to it starts nothing, and a later subscriber sees what happens from then on', async () => {
    const s = scriptedController();
    const early: TimelineEntry[] = [];
    s.ctl.timeline.subscribe((e) => early.push(e));
    await runVirtualTime(s.scheduler);
    expect(early).to.deep.equal([]);
    expect(s.client.requests).to.deep.equal([]);
    expect(s.ctl.store.size).to.equal(0);
    s.ctl.subscribe();
    await runVirtualTime(s.scheduler, { until: 200 });
    const late: TimelineEntry[] = [];
    const sub = s.ctl.timeline.subscribe((e) => late.push(e));
    await runVirtualTime(s.scheduler, { until: 5_000 });
    sub.unsubscribe();
    expect(early.length).to.be.greaterThan(late.length);
    expect(late.every((e) => e.at >= 200)).to.equal(true);
    // bad's third attempt (at 300: 100 + 200) comes after the late subscriber; its first two before.
    expect(only(late, 'run-start').map((r) => `${r.key} ${r.attempt}`)).to.include('default/bad 3').and.not.include('default/bad 2');
  });

  it('names a periodic resync as the cause of the triggers it makes', async () => {
    const s = scriptedController({ resyncPeriod: 1_000 });
    const entries: TimelineEntry[] = [];
    s.ctl.timeline.subscribe((e) => entries.push(e));
    s.ctl.subscribe();
    await runVirtualTime(s.scheduler, { until: 2_500 });
    const resyncs = only(entries, 'trigger').filter((t) => t.cause.via === 'resync');
    expect(resyncs.map((t) => `${t.key} ${t.cause.resource} ${t.cause.delta}`)).to.include.members(['default/good configmaps Sync', 'default/bad configmaps Sync']);
    // Spread over the period in 10 slices of 100 ms, the first once the cache has synced.
    expect(resyncs.map((t) => t.at)).to.deep.equal([100, 200, 1_100, 1_200, 2_100, 2_200]);
    expect(only(entries, 'trigger').filter((t) => t.cause.via === 'for').every((t) => t.cause.delta !== 'Sync')).to.equal(true);
    expectComplete(entries);
  });

  it('shows an informer that fails for good as a Failure with its error', async () => {
    const s = scriptedController((scheduler, client) => ({
      informers: new MarbleInformers(
        (resource, selectors) =>
          resource.resource === 'secrets'
            ? merge(client.watch(resource, selectors), timer(50, scheduler).pipe(map(() => { throw new Error('the secrets went away'); })))
            : client.watch(resource, selectors),
        { scheduler },
      ),
    }));
    const entries: TimelineEntry[] = [];
    s.ctl.timeline.subscribe((e) => entries.push(e));
    let failed: unknown;
    s.ctl.subscribe({ error: (err: unknown) => (failed = err) });
    await runVirtualTime(s.scheduler, { until: 5_000 });
    expect(failed).to.be.instanceOf(Error);
    const failures = only(entries, 'informer').filter((e) => e.event === 'Failure');
    expect(failures.map((f) => [f.at, f.resource, f.error, f.retryIn])).to.deep.equal([[50, 'secrets', 'the secrets went away', undefined]]);
  });
});
