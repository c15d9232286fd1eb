import { expect } from 'chai';
import { delay } from '../../src/util/wait.js';
import { testScheduler } from '../support/objects.js';
import { rejection } from './rejection.js';

describe('delay', () => {
  it('resolves once the scheduler reaches the delay, not before', async () => {
    const scheduler = testScheduler();
    let done = false;
    const waiting = delay(250, scheduler).then(() => (done = true));
    scheduler.flush();
    await waiting;
    expect(done).to.equal(true);
    expect(scheduler.now()).to.equal(250);
  });

  it('rejects at once with the reason of a signal already aborted, scheduling nothing', async () => {
    const scheduler = testScheduler();
    const controller = new AbortController();
    const reason = new Error('stopped');
    controller.abort(reason);
    expect(await rejection(delay(250, scheduler, controller.signal))).to.equal(reason);
    expect(scheduler.actions).to.have.length(0);
  });

  it('rejects with the reason when the signal aborts while waiting, and cancels the scheduled wait', async () => {
    const scheduler = testScheduler();
    const controller = new AbortController();
    const waiting = rejection(delay(250, scheduler, controller.signal));
    expect(scheduler.actions).to.have.length(1);
    controller.abort(new Error('stopped'));
    expect(String(await waiting)).to.equal('Error: stopped');
    expect(scheduler.actions.every((a) => a.closed)).to.equal(true);
  });
});
