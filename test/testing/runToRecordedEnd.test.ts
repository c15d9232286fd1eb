import { expect } from 'chai';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { runToRecordedEnd } from '../../src/testing/replay/runToRecordedEnd.js';

const start = 1_000;
const end = start + 10;

function clock(): VirtualTimeScheduler {
  return new VirtualTimeScheduler(VirtualAction, Infinity);
}

function turnOfTheEventLoop(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Something outside virtual time (a reconcile awaiting a real callback)
 * that, `times` times, waits a turn of the event loop and then schedules
 * an action at once: virtual time is idle before each.
 */
function outsideWork(scheduler: VirtualTimeScheduler, times: number): { ran: () => number; done: Promise<void> } {
  let ran = 0;
  let stopped = false;
  const done = (async () => {
    for (let i = 0; i < times && !stopped; i++) {
      await turnOfTheEventLoop();
      await new Promise<void>((resolve) => scheduler.schedule(() => {
        ran++;
        resolve();
      }));
    }
  })();
  return {
    ran: () => ran,
    done: done.finally(() => (stopped = true)),
  };
}

describe('runToRecordedEnd (how replay waits at the end of a recording)', () => {
  it('warns, naming the runs in flight and the frame, when more than 20 idle turns each schedule more', async () => {
    const scheduler = clock();
    scheduler.frame = start;
    scheduler.schedule(() => {}, 4);
    const work = outsideWork(scheduler, 40);
    const warning = await runToRecordedEnd(scheduler, end, { start, completed: () => false, inFlight: () => ['run 3 of "default/a"'] });
    expect(warning).to.equal(
      'replay stopped waiting after 21 idle turns at 4 ms (nothing scheduled in virtual time before the recording\'s end): still in flight: run 3 of "default/a"',
    );
    expect(work.ran()).to.be.within(20, 39);
    // Let the outside work finish its own way, so the test leaves nothing behind.
    while (work.ran() < 40) {
      await turnOfTheEventLoop();
      scheduler.flush();
    }
    await work.done;
  });

  it('says when no run was in flight', async () => {
    const scheduler = clock();
    scheduler.frame = start;
    const work = outsideWork(scheduler, 25);
    const warning = await runToRecordedEnd(scheduler, end, { start, completed: () => false, inFlight: () => [] });
    expect(warning).to.match(/^replay stopped waiting after 21 idle turns at 0 ms .*: no run was in flight$/);
    while (work.ran() < 25) {
      await turnOfTheEventLoop();
      scheduler.flush();
    }
    await work.done;
  });

  it('answers no warning when the idle turns stop scheduling, or the output completes', async () => {
    const scheduler = clock();
    scheduler.frame = start;
    const work = outsideWork(scheduler, 5);
    expect(await runToRecordedEnd(scheduler, end, { start, completed: () => false, inFlight: () => ['run 1 of "a"'] })).to.equal(undefined);
    expect(work.ran()).to.equal(5);
    await work.done;
    const busy = outsideWork(scheduler, 40);
    expect(await runToRecordedEnd(scheduler, end, { start, completed: () => busy.ran() >= 3, inFlight: () => ['run 1 of "a"'] })).to.equal(undefined);
    expect(busy.ran()).to.equal(3);
    while (busy.ran() < 40) {
      await turnOfTheEventLoop();
      scheduler.flush();
    }
    await busy.done;
  });
});
