import { expect } from 'chai';
import { filter, from, map, merge, take, timer, type Observable, type SchedulerLike } from 'rxjs';
import { reconcileByKey, silentLogger, type Delta, type KubeObject, type Logger } from 'rxkube';
import type { TimelineEntry } from 'rxkube/testing';
import { TimelineHub } from '../../src/observe/timelineHub.js';
import { timelineObserver } from '../../src/observe/timelineQueue.js';
import { triggerKeys } from '../../src/controller/wiring.js';
import { testScheduler } from '../support/objects.js';

/** `scheduler`, counting the reads of its clock. */
function counted(scheduler: SchedulerLike): { scheduler: SchedulerLike; reads: () => number } {
  let reads = 0;
  return {
    scheduler: { now: () => (reads++, scheduler.now()), schedule: scheduler.schedule.bind(scheduler) } as SchedulerLike,
    reads: () => reads,
  };
}

const delta = (name: string): Delta => {
  const object: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' } };
  return { type: 'Added', key: `ns/${name}`, object };
};

/** What an entry says of its key's way through the queue, with its time. */
const line = (e: TimelineEntry) =>
  `${e.at} ${e.type}${e.type === 'queue' ? ` ${e.state}` : ''}${e.type === 'run-end' ? ` ${e.result} ${e.duration}` : ''} ${'key' in e ? e.key : ''}`;

describe('TimelineHub: how entries are delivered and stamped', () => {
  it('calls a plain callback and an observer object (as its `this`) with each entry, and an observer without next still counts as a reader', () => {
    const hub = new TimelineHub('c', testScheduler(), silentLogger, () => () => undefined);
    const seen: string[] = [];
    const counter = {
      count: 0,
      next(this: { count: number }, e: TimelineEntry) {
        this.count++;
        seen.push(`object ${e.type}`);
      },
    };
    const a = hub.timeline.subscribe((e) => seen.push(`fn ${e.type}`));
    const b = hub.timeline.subscribe(counter);
    hub.leadership(true, 'me');
    a.unsubscribe();
    b.unsubscribe();
    expect(hub.active).to.equal(false);
    const c = hub.timeline.subscribe({ complete: () => undefined });
    expect(hub.active).to.equal(true);
    c.unsubscribe();
    expect(seen).to.deep.equal(['fn leadership', 'object leadership']);
    expect(counter.count).to.equal(1);
  });

  it('skips a subscriber from the moment another unsubscribes it during an entry, and one that throws keeps its place', () => {
    const logged: string[] = [];
    const logger: Logger = { ...silentLogger, error: (_fields, message) => logged.push(String(message)) };
    const hub = new TimelineHub('c', testScheduler(), logger, () => () => undefined);
    const seen: string[] = [];
    hub.timeline.subscribe(() => {
      throw new Error('broken');
    });
    const later: { unsubscribe(): void }[] = [];
    hub.timeline.subscribe((e) => {
      seen.push(`first ${String(e.type === 'leadership' && e.leading)}`);
      for (const s of later) s.unsubscribe();
    });
    later[0] = hub.timeline.subscribe((e) => seen.push(`later ${String(e.type === 'leadership' && e.leading)}`));
    hub.leadership(true, 'me');
    hub.leadership(false, 'me');
    expect(seen).to.deep.equal(['first true', 'first false']);
    expect(logged).to.deep.equal(['a timeline subscriber threw; the controller goes on', 'a timeline subscriber threw; the controller goes on']);
  });

  it("stamps the queue's moves of a triggered key with the trigger's time, reading the clock once for a run that returns at once", () => {
    const scheduler = testScheduler();
    const clock = counted(scheduler);
    const hub = new TimelineHub('c', clock.scheduler, silentLogger, () => () => undefined);
    const entries: TimelineEntry[] = [];
    hub.timeline.subscribe((e) => entries.push(e));
    scheduler.run(({ cold, flush }) => {
      const deltas: Observable<Delta> = cold('5ms a', { a: delta('a') });
      deltas
        .pipe(
          triggerKeys(hub, (d: Delta) => d.key, (d, key) => hub.trigger(key, 'for', 'configmaps', d)),
          reconcileByKey(() => undefined, { logger: silentLogger, scheduler, observer: timelineObserver(hub, {}) }),
        )
        .subscribe();
      flush();
    });
    expect(entries.map(line)).to.deep.equal(['5 trigger ns/a', '5 run-start ns/a', '5 run-end success 0 ns/a', '5 queue idle ns/a']);
    expect(clock.reads()).to.equal(1);
  });

  it('reads the clock for what happens after the trigger: a run that takes time, the move after it, a run of a long synchronous reconcile', () => {
    const scheduler = testScheduler();
    const clock = counted(scheduler);
    const hub = new TimelineHub('c', clock.scheduler, silentLogger, () => () => undefined);
    const entries: TimelineEntry[] = [];
    hub.timeline.subscribe((e) => entries.push(e));
    // The queue's own clock, which a synchronous reconcile of `ns/long` moves on by 5 ms while the scheduler stands still.
    let queueClock = 0;
    scheduler.run(({ cold, flush }) => {
      cold('a 9ms b', { a: delta('slow'), b: delta('long') })
        .pipe(
          triggerKeys(hub, (d: Delta) => d.key, (d, key) => hub.trigger(key, 'for', 'configmaps', d)),
          reconcileByKey(
            (key) => {
              if (key === 'ns/long') queueClock += 5;
              else return timer(3, scheduler).pipe(map(() => undefined));
              return undefined;
            },
            { logger: silentLogger, scheduler, clock: () => scheduler.now() + queueClock, observer: timelineObserver(hub, {}) },
          ),
        )
        .subscribe();
      flush();
    });
    expect(entries.map(line)).to.deep.equal([
      '0 trigger ns/slow',
      '0 run-start ns/slow',
      '3 run-end success 3 ns/slow',
      '3 queue idle ns/slow',
      '10 trigger ns/long',
      '10 run-start ns/long',
      '10 run-end success 5 ns/long',
      '10 queue idle ns/long',
    ]);
    // One read for each trigger, one for each run's end.
    expect(clock.reads()).to.equal(4);
  });

  it('gives no stale time to a run of a key whose trigger never reached the queue, when the key comes later another way', () => {
    const scheduler = testScheduler();
    const hub = new TimelineHub('c', scheduler, silentLogger, () => () => undefined);
    const entries: TimelineEntry[] = [];
    hub.timeline.subscribe((e) => entries.push(e));
    scheduler.run(({ cold, flush }) => {
      const triggered = cold('a', { a: delta('a') }).pipe(
        triggerKeys(hub, (d: Delta) => d.key, (d, key) => hub.trigger(key, 'for', 'configmaps', d)),
        // A gate between the trigger and the queue (a shard not owned yet): the key is dropped here...
        filter(() => false),
      );
      // ...and comes to the queue 7 ms later, untraced (the shard was gained).
      merge(triggered, cold('7ms a', { a: 'ns/a' }))
        .pipe(reconcileByKey(() => undefined, { logger: silentLogger, scheduler, observer: timelineObserver(hub, {}) }))
        .subscribe();
      flush();
    });
    expect(entries.map(line)).to.deep.equal(['0 trigger ns/a', '7 run-start ns/a', '7 run-end success 0 ns/a', '7 queue idle ns/a']);
  });

  it('triggerKeys stops at once when its output closes, though a synchronous source goes on: no key is made nor told after', () => {
    const hub = new TimelineHub('c', testScheduler(), silentLogger, () => () => undefined);
    const subscription = hub.timeline.subscribe(() => undefined);
    const made: string[] = [];
    const told: string[] = [];
    const got: string[] = [];
    from([delta('a'), delta('b'), delta('c')])
      .pipe(
        triggerKeys(hub, (d: Delta) => (made.push(d.key), d.key), (d, key) => (told.push(key), hub.trigger(key, 'for', 'configmaps', d))),
        take(1),
      )
      .subscribe((key) => got.push(key));
    subscription.unsubscribe();
    expect({ made, told, got }).to.deep.equal({ made: ['ns/a'], told: ['ns/a'], got: ['ns/a'] });
  });
});

describe('TimelineHub and its tracer', () => {
  it("puts the tracer's trace ID on a run's start entry, and logs a tracer that throws: the entry goes out untraced", () => {
    const logged: string[] = [];
    const logger: Logger = { ...silentLogger, error: (_fields: unknown, message?: string) => void logged.push(String(message)) } as Logger;
    const hub = new TimelineHub('c', testScheduler(), logger, () => () => undefined);
    const entries: TimelineEntry[] = [];
    hub.timeline.subscribe((e) => entries.push(e));
    hub.tracer = { runStart: (key, _at, attempt, queuedMs) => `${key}:${attempt}:${queuedMs}` };
    hub.runStart('ns/a', 0, 7);
    hub.tracer = {
      runStart: () => {
        throw new Error('no span today');
      },
    };
    hub.runStart('ns/b', 1);
    expect(entries.map((e) => (e.type === 'run-start' ? [e.key, e.attempt, e.traceId] : []))).to.deep.equal([
      ['ns/a', 1, 'ns/a:1:7'],
      ['ns/b', 2, undefined],
    ]);
    expect(logged).to.deep.equal(['tracing a run failed; the controller goes on']);
  });
});
