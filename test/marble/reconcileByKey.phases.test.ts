import { expect } from 'chai';
import { Subject, map, timer } from 'rxjs';
import { exponentialFailureRateLimiter, reconcileByKey, silentLogger, type Reconciler } from 'rxkube';
import type { WorkqueueObserver } from '../../src/operators/reconcileByKey.js';
import { testScheduler } from '../support/objects.js';

/** The phase hooks only, each call as `frame hook key …`. */
function phaseLog(now: () => number): { calls: string[]; observer: WorkqueueObserver } {
  const calls: string[] = [];
  const log = (line: string) => calls.push(`${now()} ${line}`);
  return {
    calls,
    observer: {
      waiting: (k) => log(`waiting ${k}`),
      started: (k, q, attempt) => log(`running ${k} attempt ${attempt} queued ${q}`),
      ended: (o, requeueAfter) => log(`ended ${o.key} ${o.result} attempt ${o.attempt}${requeueAfter !== undefined ? ` after ${requeueAfter}` : ''}`),
      delayed: (k, ms, reason) => log(`delayed ${k} ${ms} ${reason}`),
      idle: (k) => log(`idle ${k}`),
    },
  };
}

describe('reconcileByKey: observer phases (waiting, running, ended, delayed, idle)', () => {
  it('tells where each key goes, with the delay and reason of a retry and a requeueAfter, at the frames they happen', () => {
    const scheduler = testScheduler();
    const { calls, observer } = phaseLog(() => scheduler.now());
    // a fails once (retry after 10), b asks for requeueAfter 20 once, c waits for the worker.
    const reconcile: Reconciler = (key, ctx) =>
      timer(2, scheduler).pipe(
        map(() => {
          if (key === 'a' && ctx.attempt === 0) throw new Error('once');
          if (key === 'b' && ctx.attempt === 0 && scheduler.now() < 10) return { requeueAfter: 20 };
          return undefined;
        }),
      );
    const keys = new Subject<string>();
    const sub = keys
      .pipe(reconcileByKey(reconcile, { scheduler, observer, logger: silentLogger, rateLimiter: exponentialFailureRateLimiter(10, 100) }))
      .subscribe();
    keys.next('a'); // 0: a finds the worker free
    keys.next('b'); // 0: b waits
    scheduler.flush();
    sub.unsubscribe();
    expect(calls).to.deep.equal([
      '0 running a attempt 0 queued 0',
      '0 waiting b',
      '2 ended a error attempt 0',
      '2 delayed a 10 error',
      '2 running b attempt 0 queued 2',
      '4 ended b requeue_after attempt 0 after 20',
      '4 delayed b 20 requeueAfter',
      '12 waiting a',
      '12 running a attempt 1 queued 0',
      '14 ended a success attempt 1',
      '14 idle a',
      '24 waiting b',
      '24 running b attempt 0 queued 0',
      '26 ended b success attempt 0',
      '26 idle b',
    ]);
  });

  it('makes a key triggered during its run wait at the end of the run, and one triggered during its delay wait at once', () => {
    const scheduler = testScheduler();
    const { calls, observer } = phaseLog(() => scheduler.now());
    const reconcile: Reconciler = (_key, ctx) =>
      timer(2, scheduler).pipe(
        map(() => {
          if (ctx.attempt === 0 && scheduler.now() === 2) throw new Error('first run fails');
        }),
      );
    const keys = new Subject<string>();
    keys.pipe(reconcileByKey(reconcile, { scheduler, observer, logger: silentLogger, rateLimiter: exponentialFailureRateLimiter(50, 100) })).subscribe();
    keys.next('a'); // 0: runs
    scheduler.schedule(() => keys.next('a'), 5); // during its 50-frame delay: the delay is cut short
    scheduler.schedule(() => keys.next('a'), 6); // during its second run: one more run after it
    scheduler.flush();
    expect(calls).to.deep.equal([
      '0 running a attempt 0 queued 0',
      '2 ended a error attempt 0',
      '2 delayed a 50 error',
      '5 waiting a',
      '5 running a attempt 1 queued 0',
      '7 ended a success attempt 1',
      '7 waiting a',
      '7 running a attempt 0 queued 0',
      '9 ended a success attempt 0',
      '9 idle a',
    ]);
  });

  it('makes dropped keys idle: waiting and delayed ones at stop, delayed ones when the input completes, all of them at teardown', () => {
    const scheduler = testScheduler();
    const { calls, observer } = phaseLog(() => scheduler.now());
    const fails: Reconciler = () =>
      timer(2, scheduler).pipe(
        map(() => {
          throw new Error('always');
        }),
      );
    const stop = new Subject<void>();
    const keys = new Subject<string>();
    keys.pipe(reconcileByKey(fails, { scheduler, observer, logger: silentLogger, stop, rateLimiter: exponentialFailureRateLimiter(100, 100) })).subscribe();
    keys.next('a');
    keys.next('b');
    scheduler.schedule(() => stop.next(), 3); // a delayed, b running
    scheduler.flush();
    expect(calls).to.deep.equal([
      '0 running a attempt 0 queued 0',
      '0 waiting b',
      '2 ended a error attempt 0',
      '2 delayed a 100 error',
      '2 running b attempt 0 queued 2',
      '3 idle a',
      '4 ended b error attempt 0',
      '4 idle b',
    ]);

    calls.length = 0;
    const input = new Subject<string>();
    input.pipe(reconcileByKey(fails, { scheduler, observer, logger: silentLogger, rateLimiter: exponentialFailureRateLimiter(100, 100) })).subscribe();
    input.next('c');
    scheduler.schedule(() => input.complete(), 4);
    scheduler.flush();
    expect(calls.map((c) => c.replace(/^\d+ /, ''))).to.deep.equal(['running c attempt 0 queued 0', 'ended c error attempt 0', 'delayed c 100 error', 'idle c']);

    calls.length = 0;
    const more = new Subject<string>();
    const sub = more.pipe(reconcileByKey(fails, { scheduler, observer, logger: silentLogger })).subscribe();
    more.next('d');
    more.next('e');
    sub.unsubscribe(); // d running (aborted: no `ended`), e waiting
    expect(calls.map((c) => c.replace(/^\d+ /, ''))).to.deep.equal(['running d attempt 0 queued 0', 'waiting e', 'idle d', 'idle e']);
  });
});
