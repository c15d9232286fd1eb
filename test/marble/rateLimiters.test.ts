import { expect } from 'chai';
import { map } from 'rxjs';
import { bucketRateLimiter, defaultControllerRateLimiter, exponentialFailureRateLimiter, fastSlowRateLimiter, maxOfRateLimiter, type RateLimiter } from 'rxkube';
import { testScheduler } from '../support/objects.js';

function delays(limiter: RateLimiter, key: string, times: number): number[] {
  return Array.from({ length: times }, () => limiter.when(key));
}

/**
 * The scenario client-go runs against each per-key limiter: key "one" fails
 * five times, "two" twice, then "one" is forgotten and starts over while
 * "two" keeps its count.
 */
function expectPerKeyCounting(limiter: RateLimiter, one: number[], two: number[]): void {
  expect(delays(limiter, 'one', 5)).to.deep.equal(one);
  expect(limiter.retries('one')).to.equal(5);
  expect(delays(limiter, 'two', 2)).to.deep.equal(two);
  expect(limiter.retries('two')).to.equal(2);
  limiter.forget('one');
  expect(limiter.retries('one')).to.equal(0);
  expect(limiter.when('one')).to.equal(one[0]);
  expect(limiter.retries('two')).to.equal(2);
}

// The inputs and expected delays below are those of client-go's
// util/workqueue/default_rate_limiters_test.go, in ms.
describe('exponentialFailureRateLimiter', () => {
  it('doubles the delay per failure of a key, counts them, and starts over once forgotten', () => {
    expectPerKeyCounting(exponentialFailureRateLimiter(1, 1000), [1, 2, 4, 8, 16], [1, 2]);
  });

  it('stops at the cap however many failures pile up, without overflowing', () => {
    const limiter = exponentialFailureRateLimiter(1, 1_000_000);
    delays(limiter, 'one', 5);
    expect(limiter.when('one')).to.equal(32);
    delays(limiter, 'overflow1', 1000);
    expect(limiter.when('overflow1')).to.equal(1_000_000);

    const minutes = exponentialFailureRateLimiter(60_000, 1000 * 3_600_000);
    delays(minutes, 'two', 2);
    expect(minutes.when('two')).to.equal(4 * 60_000);
    delays(minutes, 'overflow2', 1000);
    expect(minutes.when('overflow2')).to.equal(1000 * 3_600_000);
  });

  it('rejects delays that are not finite non-negative numbers, naming the argument', () => {
    expect(() => exponentialFailureRateLimiter(-1, 10)).to.throw(RangeError, 'baseMs must be a finite number of ms >= 0, got -1');
    expect(() => exponentialFailureRateLimiter(1, Number.NaN)).to.throw(RangeError, 'maxMs');
  });
});

describe('fastSlowRateLimiter', () => {
  it('answers the fast delay for the first attempts of a key, then the slow one, until forgotten', () => {
    expectPerKeyCounting(fastSlowRateLimiter(5, 10_000, 3), [5, 5, 5, 10_000, 10_000], [5, 5]);
  });

  it('rejects a fractional or negative number of fast attempts', () => {
    expect(() => fastSlowRateLimiter(5, 10, 1.5)).to.throw(RangeError, 'maxFastAttempts must be an integer >= 0, got 1.5');
  });
});

describe('maxOfRateLimiter', () => {
  it('answers the longest delay of its limiters and forgets in all of them', () => {
    const limiter = maxOfRateLimiter(fastSlowRateLimiter(5, 3000, 3), exponentialFailureRateLimiter(1, 1000));
    expectPerKeyCounting(limiter, [5, 5, 5, 3000, 3000], [5, 5]);
  });

  it('asks every limiter each time, so the exponential one keeps counting under a longer fast-slow delay', () => {
    const exponential = exponentialFailureRateLimiter(1, 1_000_000);
    const limiter = maxOfRateLimiter(fastSlowRateLimiter(100, 100, 0), exponential);
    expect(delays(limiter, 'k', 8)).to.deep.equal([100, 100, 100, 100, 100, 100, 100, 128]);
    expect(exponential.retries('k')).to.equal(8);
  });

  it('refuses no limiters and things that are not limiters', () => {
    expect(() => maxOfRateLimiter()).to.throw(RangeError, 'at least one limiter');
    expect(() => maxOfRateLimiter({} as RateLimiter)).to.throw(TypeError, 'argument 0 is not a RateLimiter');
  });
});

describe('bucketRateLimiter', () => {
  it('lets a burst through at once, then spaces calls one interval apart, in virtual time', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const limiter = bucketRateLimiter(10, 3);
      // Four calls at 0 ms: three tokens, then a debt of one (100 ms).
      // At 1000 ms the bucket refilled to its burst of 3 (not 10: it is capped).
      const calls = '(abcd) 994ms (efgh)';
      expectObservable(cold(calls).pipe(map(() => limiter.when('any key')))).toBe(calls, {
        a: 0, b: 0, c: 0, d: 100,
        e: 0, f: 0, g: 0, h: 100,
      });
    });
  });

  it('refills at qps while in debt: the next free token is one interval after the last promised one', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const limiter = bucketRateLimiter(10, 1);
      // t=0: token (0); t=0: debt, 100 ms; t=0: 200 ms; at t=150 the debt
      // has run down to 50 ms, so the next is promised at 300 ms: 150 ms on.
      const calls = '(abc) 145ms d 49ms e';
      expectObservable(cold(calls).pipe(map(() => limiter.when('k')))).toBe(calls, {
        a: 0, b: 100, c: 200,
        d: 150,
        e: 200,
      });
    });
  });

  it('answers whole intervals exactly, with no floating-point residue', () => {
    testScheduler().run(() => {
      const limiter = bucketRateLimiter(10, 1);
      expect(delays(limiter, 'k', 5)).to.deep.equal([0, 100, 200, 300, 400]);
    });
  });

  it('keeps no per-key state', () => {
    const limiter = bucketRateLimiter(1, 1);
    limiter.when('a');
    expect(limiter.retries('a')).to.equal(0);
    limiter.forget('a');
    expect(limiter.when('b')).to.be.greaterThan(0);
  });

  it('never waits at an infinite rate', () => {
    const limiter = bucketRateLimiter(Infinity, 1);
    expect(delays(limiter, 'k', 3)).to.deep.equal([0, 0, 0]);
  });

  it('refuses a rate that is not positive and a burst below one', () => {
    expect(() => bucketRateLimiter(0, 10)).to.throw(RangeError, 'qps must be a number > 0 (or Infinity), got 0');
    expect(() => bucketRateLimiter(10, 0)).to.throw(RangeError, 'burst must be an integer >= 1, got 0');
  });
});

describe('defaultControllerRateLimiter', () => {
  it('backs a key off exponentially from 5 ms to 1000 s', () => {
    testScheduler().run(() => {
      const limiter = defaultControllerRateLimiter();
      expect(delays(limiter, 'k', 4)).to.deep.equal([5, 10, 20, 40]);
      const later = delays(limiter, 'k', 20);
      expect(later[13]).to.equal(5 * 2 ** 17); // the 18th failure: 655.36 s
      expect(later[14]).to.equal(1_000_000); // the 19th: 5 ms × 2¹⁸ is past the cap
      expect(later.at(-1)).to.equal(1_000_000);
      expect(limiter.retries('k')).to.equal(24);
    });
  });

  it('holds all keys together to 10 retries a second once 100 have gone in a burst', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const limiter = defaultControllerRateLimiter();
      const first = Array.from({ length: 100 }, (_, i) => limiter.when(`k${i}`));
      expect(first.every((d) => d === 5)).to.equal(true);
      // The 101st and 102nd first failures of new keys wait for tokens, not 5 ms.
      const calls = '(ab) 996ms c';
      expectObservable(cold(calls).pipe(map((c) => limiter.when(`late-${c}`)))).toBe(calls, { a: 100, b: 200, c: 5 });
    });
  });

  it('reads time from the scheduler it is given', () => {
    const scheduler = testScheduler();
    const limiter = defaultControllerRateLimiter(scheduler);
    for (let i = 0; i < 101; i++) limiter.when(`k${i}`);
    scheduler.frame = 50; // half a token's interval later
    expect(limiter.when('another')).to.equal(150);
  });
});
