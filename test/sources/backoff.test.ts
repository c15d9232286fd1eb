import { expect } from 'chai';
import { Backoff } from '../../src/sources/backoff.js';
import { testScheduler } from '../support/objects.js';

describe('Backoff', () => {
  it('doubles from 800 ms to a 30 s cap, in virtual time', () => {
    const scheduler = testScheduler();
    scheduler.run(() => {
      const backoff = new Backoff({}, scheduler, () => 0);
      const delays = Array.from({ length: 9 }, () => backoff.next());
      expect(delays).to.deep.equal([800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000]);
    });
  });

  it('adds up to 100% jitter by default', () => {
    const scheduler = testScheduler();
    let r = 0.5;
    const backoff = new Backoff({}, scheduler, () => r);
    expect(backoff.next()).to.equal(1200);
    r = 0.999;
    expect(backoff.next()).to.equal(3198);
  });

  it('starts over after two minutes without a failure, not before', () => {
    const scheduler = testScheduler();
    scheduler.run(({ flush }) => {
      const backoff = new Backoff({}, scheduler, () => 0);
      backoff.next();
      backoff.next();
      expect(backoff.next()).to.equal(3200);
      scheduler.schedule(() => expect(backoff.next()).to.equal(6400), 119_999);
      flush();
      scheduler.schedule(() => expect(backoff.next()).to.equal(800), 120_000);
      flush();
    });
  });

  it('takes its own first delay, cap, factor and jitter', () => {
    const backoff = new Backoff({ initialMs: 10, maxMs: 50, factor: 3, jitter: 0.5 }, testScheduler(), () => 1);
    expect([backoff.next(), backoff.next(), backoff.next()]).to.deep.equal([15, 45, 75]);
  });
});
