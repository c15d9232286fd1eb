import { expect } from 'chai';
import { config, filter, map } from 'rxjs';
import { silentLogger, type Logger } from 'rxkube';
import { inMemoryLeaseClient, runVirtualTime, type TimelineEntry } from 'rxkube/testing';
import { TimelineHub } from '../../src/observe/timelineHub.js';
import { heldBy } from './leaderElection.support.js';
import { only, scriptedController } from './controller.timeline.support.js';

/** Counts the entries built (each is built in `publish`'s argument) and the informer events handed to the hub, for as long as `body` runs. */
async function counting<R>(body: () => Promise<R>): Promise<{ result: R; built: number; informerCalls: number }> {
  const proto = TimelineHub.prototype;
  const { publish, informerEvent } = proto;
  let built = 0;
  let informerCalls = 0;
  proto.publish = function (this: TimelineHub, entry: TimelineEntry) {
    built++;
    publish.call(this, entry);
  };
  proto.informerEvent = function (this: TimelineHub, ...args: Parameters<TimelineHub['informerEvent']>) {
    informerCalls++;
    informerEvent.apply(this, args);
  };
  try {
    return { result: await body(), built, informerCalls };
  } finally {
    proto.publish = publish;
    proto.informerEvent = informerEvent;
  }
}

describe('controller().timeline: what it costs, and who can break it', () => {
  it('builds no entry, hears no informer event and wraps no client while nobody subscribes', async () => {
    const { result, built, informerCalls } = await counting(async () => {
      const s = scriptedController();
      const outcomes: string[] = [];
      s.ctl.subscribe((o) => outcomes.push(o.result));
      await runVirtualTime(s.scheduler, { until: 5_000 });
      return { outcomes, requests: s.client.requests.length };
    });
    expect(result.outcomes.length, 'the controller ran').to.be.greaterThan(3);
    expect(result.requests).to.be.greaterThan(3);
    expect(built).to.equal(0);
    expect(informerCalls).to.equal(0);
  });

  it('gives each run the controller client itself while nobody subscribes, and a traced one while someone does', async () => {
    const seen: string[] = [];
    const given: { client?: unknown } = {};
    const s = scriptedController({
      // Read-your-own-writes gives each run a client that records its writes: off here, where the timeline's own wrapping is the question.
      readYourWrites: false,
      reconcile: (key, ctx) => {
        seen.push(`${key} ${ctx.client === given.client ? 'the client' : 'traced'}`);
      },
    });
    given.client = s.client;
    s.ctl.subscribe();
    await runVirtualTime(s.scheduler, { until: 10 });
    const sub = s.ctl.timeline.subscribe(() => undefined);
    // Awaited below: a failed create fails this test, not the process with an unhandled rejection.
    const created = s.client.as('someone').create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'third', namespace: 'default' } });
    await runVirtualTime(s.scheduler, { until: 20 });
    sub.unsubscribe();
    expect((await created).metadata?.name).to.equal('third');
    expect(seen).to.include.members(['default/good the client', 'default/bad the client']);
    expect(seen.at(-1)).to.equal('default/third traced');
    expect(seen.filter((line) => line.endsWith('traced'))).to.have.length(1);
  });

  it('builds exactly the entries its subscribers get, once for all of them', async () => {
    const { result, built } = await counting(async () => {
      const s = scriptedController();
      const a: TimelineEntry[] = [];
      const b: TimelineEntry[] = [];
      s.ctl.timeline.subscribe((e) => a.push(e));
      s.ctl.timeline.subscribe((e) => b.push(e));
      s.ctl.subscribe();
      await runVirtualTime(s.scheduler, { until: 5_000 });
      return { a, b };
    });
    expect(result.a.length).to.be.greaterThan(20);
    expect(result.b).to.deep.equal(result.a);
    expect(built).to.equal(result.a.length);
  });

  it('keeps the controller and the other subscribers going when a subscriber throws, and logs it', async () => {
    const logged: string[] = [];
    const logger: Logger = { ...silentLogger, error: (_fields, message) => logged.push(String(message)) };
    const calm = scriptedController();
    const calmOutcomes: string[] = [];
    calm.ctl.subscribe((o) => calmOutcomes.push(`${o.key}:${o.result}:${o.attempt}`));
    await runVirtualTime(calm.scheduler, { until: 5_000 });

    const s = scriptedController({}, logger);
    let thrown = 0;
    s.ctl.timeline.subscribe(() => {
      thrown++;
      throw new Error('a broken dashboard');
    });
    const others: TimelineEntry[] = [];
    s.ctl.timeline.subscribe({ next: (e) => others.push(e) });
    const outcomes: string[] = [];
    s.ctl.subscribe((o) => outcomes.push(`${o.key}:${o.result}:${o.attempt}`));
    await runVirtualTime(s.scheduler, { until: 5_000 });
    expect(outcomes).to.deep.equal(calmOutcomes);
    expect(thrown).to.equal(others.length);
    expect(only(others, 'run-end')).to.have.length(outcomes.length);
    expect(logged.filter((m) => m === 'a timeline subscriber threw; the controller goes on')).to.have.length(thrown);
  });

  it('keeps guarding through operator chains: a throwing subscriber of timeline.pipe(map(...)) is logged, a failed chain without an error callback too, and RxJS rethrows nothing', async () => {
    const logged: string[] = [];
    const logger: Logger = { ...silentLogger, error: (_fields, message) => logged.push(String(message)) };
    // RxJS's path for an error nobody handles (it would rethrow it from a timer, an uncaught exception): caught here instead.
    const unhandled: unknown[] = [];
    const onUnhandledError = config.onUnhandledError;
    config.onUnhandledError = (err) => unhandled.push(err);
    try {
      const calm = scriptedController();
      const calmOutcomes: string[] = [];
      calm.ctl.subscribe((o) => calmOutcomes.push(`${o.key}:${o.result}:${o.attempt}`));
      await runVirtualTime(calm.scheduler, { until: 5_000 });

      const s = scriptedController({}, logger);
      let thrown = 0;
      s.ctl.timeline.pipe(map((e) => e.type)).subscribe(() => {
        thrown++;
        throw new Error('a broken dashboard');
      });
      s.ctl.timeline
        .pipe(
          filter((e) => e.type === 'run-end'),
          map(() => {
            throw new Error('a broken projection');
          }),
        )
        .subscribe(() => undefined);
      const outcomes: string[] = [];
      s.ctl.subscribe((o) => outcomes.push(`${o.key}:${o.result}:${o.attempt}`));
      await runVirtualTime(s.scheduler, { until: 5_000 });
      // RxJS reports an unhandled error from a (real) timeout of 0: let it run.
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(outcomes).to.deep.equal(calmOutcomes);
      expect(thrown).to.be.greaterThan(20);
      expect(logged.filter((m) => m === 'a timeline subscriber threw; the controller goes on')).to.have.length(thrown);
      expect(logged.filter((m) => m === 'a timeline subscription failed and had no error callback; the controller goes on')).to.have.length(1);
      expect(unhandled).to.deep.equal([]);
    } finally {
      config.onUnhandledError = onUnhandledError;
    }
  });

  it('says when the controller starts and stops leading under leader election, with its identity', async () => {
    const stop = new AbortController();
    const { scheduler, ctl } = scriptedController((scheduler) => {
      const leases = inMemoryLeaseClient({ scheduler });
      // Held by b, who never renews: a takes it once it has seen no change for the lease's 15 s.
      leases.put(heldBy('b'));
      return { leaderElection: { lease: 'default/lock', identity: 'a', client: leases }, signal: stop.signal };
    });
    const entries: TimelineEntry[] = [];
    ctl.timeline.subscribe((e) => entries.push(e));
    ctl.subscribe();
    scheduler.schedule(() => stop.abort(), 40_000);
    await runVirtualTime(scheduler, { until: 60_000 });
    const leadership = only(entries, 'leadership').map((l) => `${l.at} ${l.leading} ${l.identity}`);
    expect(leadership[0]).to.equal('0 false a');
    expect(leadership.slice(1).map((l) => l.split(' ').slice(1).join(' '))).to.deep.equal(['true a', 'false a']);
    const [, gained, lost] = only(entries, 'leadership');
    const starts = only(entries, 'run-start');
    expect(starts.length).to.be.greaterThan(0);
    expect(starts.every((r) => r.at >= (gained?.at ?? Infinity))).to.equal(true);
    expect(lost?.at).to.be.at.least(40_000);
  });
});
