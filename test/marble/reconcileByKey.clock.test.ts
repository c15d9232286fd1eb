import { expect } from 'chai';
import { map, timer } from 'rxjs';
import { controllerMetrics, reconcileByKey, silentLogger, type ReconcileOutcome } from 'rxkube';
import { highResolutionClock } from '../../src/sinks/metrics/clock.js';
import { sampleValue } from '../sinks/prometheus.js';
import { testScheduler } from '../support/objects.js';

describe('reconcileByKey: the clock durations are measured with', () => {
  it('measures runs and queue times on the scheduler without a clock: virtual time stays virtual', () => {
    const outcomes: ReconcileOutcome[] = [];
    testScheduler().run(({ cold, flush }) => {
      cold('aa').pipe(reconcileByKey(() => timer(3).pipe(map(() => undefined)), { logger: silentLogger })).subscribe((o) => outcomes.push(o));
      flush();
    });
    expect(outcomes.map((o) => o.duration)).to.deep.equal([3, 3]);
  });

  it('measures on the clock given, while every wait still goes through the scheduler', () => {
    const scheduler = testScheduler();
    const outcomes: (ReconcileOutcome & { at: number })[] = [];
    // One virtual ms reads as 1 µs on this clock: the runs of 3 ms take 3 µs by it, but start and end when the scheduler says.
    const clock = () => scheduler.now() / 1000;
    scheduler.run(({ cold, flush }) => {
      cold('a 9ms a')
        .pipe(reconcileByKey(() => timer(3).pipe(map(() => undefined)), { scheduler, clock, logger: silentLogger }))
        .subscribe((o) => outcomes.push({ ...o, at: scheduler.now() }));
      flush();
    });
    expect(outcomes.map((o) => o.at)).to.deep.equal([3, 13]);
    for (const o of outcomes) expect(o.duration).to.be.closeTo(0.003, 1e-12);
  });

  it('puts sub-millisecond runs and queue times into the sub-millisecond buckets of the histograms', async () => {
    const scheduler = testScheduler();
    const clock = () => scheduler.now() / 1000;
    const m = controllerMetrics({ controller: 'fast', scheduler, clock });
    scheduler.run(({ cold, flush }) => {
      // b waits 3 virtual ms (3 µs) for the one worker; each run takes 3 µs, or 50 µs for b.
      cold('ab')
        .pipe(
          reconcileByKey((key) => timer(key === 'b' ? 50 : 3).pipe(map(() => undefined)), { scheduler, clock, observer: m.observer, logger: silentLogger }),
          m.recordOutcomes(),
        )
        .subscribe();
      flush();
    });
    const labels = { name: 'fast', controller: 'fast' };
    const bucket = (name: string, le: number, l: Record<string, string> = labels) => sampleValue(m.registry, `${name}_bucket`, { ...l, le: String(le) });
    expect(await bucket('workqueue_work_duration_seconds', 1e-6)).to.equal(0);
    expect(await bucket('workqueue_work_duration_seconds', 0.00001)).to.equal(1);
    expect(await bucket('workqueue_work_duration_seconds', 0.0001)).to.equal(2);
    expect(await sampleValue(m.registry, 'workqueue_work_duration_seconds_sum', labels)).to.be.closeTo(53e-6, 1e-12);
    // a found the worker free (0); b waited 3 µs.
    expect(await bucket('workqueue_queue_duration_seconds', 1e-8)).to.equal(1);
    expect(await bucket('workqueue_queue_duration_seconds', 0.00001)).to.equal(2);
    expect(await bucket('controller_runtime_reconcile_time_seconds', 0.005, { controller: 'fast' })).to.equal(2);
  });
});

describe('highResolutionClock', () => {
  it('reads ms since the epoch with a fraction of a millisecond, never going back', () => {
    const clock = highResolutionClock();
    const readings = Array.from({ length: 200 }, () => clock());
    expect(Math.abs((readings[0] as number) - Date.now()), 'on the epoch, as Date.now').to.be.below(1000);
    expect(readings.some((r) => !Number.isInteger(r)), 'a fraction of a millisecond').to.equal(true);
    for (let i = 1; i < readings.length; i++) expect(readings[i]).to.be.at.least(readings[i - 1] as number);
  });

  it('catches up with the wall clock after a suspend (the monotonic clock stood still), and never follows a step back', () => {
    let mono = 5_000.25;
    let wall = 1_700_000_000_000;
    const clock = highResolutionClock({ monotonic: () => mono, wall: () => wall });
    const read = (monoStep: number, wallStep: number) => {
      mono += monoStep;
      wall += wallStep;
      return clock();
    };
    expect(read(0, 0)).to.equal(1_700_000_000_000);
    expect(read(0.5, 0.5)).to.equal(1_700_000_000_000.5);
    // Suspended for 8 s: the wall clock moved on, the monotonic one did not.
    expect(read(0, 8_000)).to.equal(1_700_000_000_000.5);
    // Within a second of its own time it looks again, and catches up.
    expect(read(999, 999)).to.equal(1_700_000_000_999.5);
    expect(read(1, 1)).to.equal(1_700_000_009_000.5);
    // Small differences (a slewed wall clock) are left alone; so is a step back of an hour.
    expect(read(1_000, 1_000 + 300)).to.equal(1_700_000_010_000.5);
    const before = read(0, -3_600_000);
    const after = read(1_500, 1_500);
    expect(after - before).to.equal(1_500);
  });
});
