import { expect } from 'chai';
import { NEVER, Observable, Subject, concat, map, mergeMap, of, take, throwError, timer, type SchedulerLike } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { silentLogger, type Logger, exponentialFailureRateLimiter, reconcileByKey, type ReconcileContext, type ReconcileOutcome, type ReconcileResult, type Reconciler } from 'rxkube';
import { ReconcileTimeoutError, type ReconcileOptions } from '../../src/operators/reconcileByKey.js';
import { testScheduler } from '../support/objects.js';

/** Outcomes with the virtual time at which they came, and any error or completion of the output. */
interface Recording {
  outcomes: (ReconcileOutcome & { at: number })[];
  errors: unknown[];
  completed: boolean;
  keys: Subject<string>;
}

/**
 * Runs the operator on a TestScheduler outside `run()`, so that promises can
 * settle between scheduled actions: `advance` executes the actions due, one
 * instant at a time, and lets microtasks run after each.
 */
function harness(reconcile: Reconciler, options: ReconcileOptions & { scheduler?: TestScheduler } = {}) {
  const scheduler = options.scheduler ?? testScheduler();
  const keys = new Subject<string>();
  const rec: Recording = { outcomes: [], errors: [], completed: false, keys };
  const subscription = keys
    .pipe(reconcileByKey(reconcile, { scheduler, logger: silentLogger, ...options }))
    .subscribe({
      next: (o) => rec.outcomes.push({ ...o, at: scheduler.now() }),
      error: (e: unknown) => rec.errors.push(e),
      complete: () => {
        rec.completed = true;
      },
    });
  return { scheduler, rec, keys, subscription, advance: (to: number) => advance(scheduler, to) };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

async function advance(scheduler: TestScheduler, to: number): Promise<void> {
  for (;;) {
    await settle();
    const next = scheduler.actions[0];
    if (next === undefined || next.delay > to) break;
    scheduler.maxFrames = next.delay;
    scheduler.flush();
  }
  scheduler.frame = to;
}

const summary = (rec: Recording) => rec.outcomes.map((o) => `${o.at}:${o.result}#${o.attempt}`);

/** Fails the first `failures` runs of each key in the given way, then succeeds. */
function failing(failures: number, fail: (ctx: ReconcileContext) => ReturnType<Reconciler>): Reconciler {
  return (_key, ctx) => (ctx.attempt < failures ? fail(ctx) : undefined);
}

describe('reconcileByKey: failures', () => {
  const boom = new Error('boom');
  // Each way to fail, given the scheduler of the test, and how long it takes to fail.
  const kinds: [string, (ctx: ReconcileContext, scheduler: SchedulerLike) => ReturnType<Reconciler>, number][] = [
    [
      'throws synchronously',
      () => {
        throw boom;
      },
      0,
    ],
    ['rejects', () => Promise.reject(boom), 0],
    ['errors as an observable', (_ctx, scheduler) => timer(3, scheduler).pipe(mergeMap(() => throwError(() => boom))), 3],
    ['times out', () => NEVER, 5],
  ];

  for (const [kind, fail, runFrames] of kinds) {
    it(`retries a reconcile that ${kind} after exactly the limiter's delay, and never errors the output`, async () => {
      const scheduler = testScheduler();
      const { rec, keys, advance } = harness(failing(2, (ctx) => fail(ctx, scheduler)), {
        scheduler,
        rateLimiter: exponentialFailureRateLimiter(10, 1000),
        timeout: 5,
      });
      keys.next('ns/a');
      await advance(1000);
      // Failure at r, retry 10 ms later, failure, retry 20 ms later, success.
      const r = runFrames;
      expect(summary(rec)).to.deep.equal([`${r}:error#0`, `${2 * r + 10}:error#1`, `${2 * r + 30}:success#2`]);
      expect(rec.errors).to.deep.equal([]);
      expect(rec.completed).to.equal(false);
      const error = rec.outcomes[0]?.error;
      if (kind === 'times out') {
        expect(error).to.be.instanceOf(ReconcileTimeoutError);
        expect((error as Error).message).to.equal('reconcile of "ns/a" timed out after 5 ms');
      } else {
        expect(error).to.equal(boom);
      }
    });
  }

  it('aborts the signal of a run that times out, with the timeout as reason, and unsubscribes an observable reconcile', async () => {
    const signals: AbortSignal[] = [];
    let unsubscribed = 0;
    const { rec, keys, advance } = harness(
      (_key, ctx) => {
        signals.push(ctx.signal);
        return new Observable<void>(() => () => {
          unsubscribed++;
        });
      },
      { timeout: 7, maxRetries: 0 },
    );
    keys.next('a');
    await advance(6);
    expect(signals[0]?.aborted).to.equal(false);
    await advance(7);
    expect(signals).to.have.length(1);
    expect(signals[0]?.aborted).to.equal(true);
    expect(signals[0]?.reason).to.be.instanceOf(ReconcileTimeoutError);
    expect(unsubscribed).to.equal(1);
    expect(summary(rec)).to.deep.equal(['7:dropped#0']);
  });

  it('ignores a promise that settles after its run timed out', async () => {
    let resolveLate: (r: ReconcileResult) => void = () => {};
    const { rec, keys, advance } = harness(
      (_key, ctx) => (ctx.attempt === 0 ? new Promise<ReconcileResult>((r) => (resolveLate = r)) : undefined),
      { timeout: 5, rateLimiter: exponentialFailureRateLimiter(100, 1000) },
    );
    keys.next('a');
    await advance(50);
    resolveLate({ requeueAfter: 1 });
    await advance(200);
    expect(summary(rec)).to.deep.equal(['5:error#0', '105:success#1']);
  });
});

describe('reconcileByKey: results', () => {
  it('reruns after the limiter\'s delay on requeue: true, counting it like a failure, and success forgets the count', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const limiter = exponentialFailureRateLimiter(10, 1000);
      const reconcile: Reconciler = (_key, ctx) => (ctx.attempt < 2 ? { requeue: true } : undefined);
      const out = cold('a 99ms a').pipe(reconcileByKey(reconcile, { rateLimiter: limiter, logger: silentLogger }));
      // 0: requeue, 10: requeue, 30: success. 100: again from attempt 0, base delay.
      expectObservable(out.pipe(map((o) => `${o.result}#${o.attempt}`))).toBe('a 9ms b 19ms c 69ms a 9ms b 19ms c', {
        a: 'requeue#0',
        b: 'requeue#1',
        c: 'success#2',
      });
    });
  });

  it('reruns after exactly requeueAfter and forgets the failure count', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const limiter = exponentialFailureRateLimiter(10, 1000);
      let runs = 0;
      const reconcile: Reconciler = () => {
        runs++;
        if (runs === 1) throw new Error('first run fails');
        if (runs === 2) return { requeueAfter: 50, requeue: true };
        if (runs === 3) throw new Error('fails again');
        return undefined;
      };
      const out = cold('a').pipe(reconcileByKey(reconcile, { rateLimiter: limiter, logger: silentLogger }));
      // 0 error (retry in 10) · 10 requeue_after 50 · 60 error: back to the base delay, 10 · 70 success.
      expectObservable(out.pipe(map((o) => `${o.result}#${o.attempt}`))).toBe('a 9ms b 49ms c 9ms d', {
        a: 'error#0',
        b: 'requeue_after#1',
        c: 'error#0',
        d: 'success#1',
      });
    });
  });

  it('fails a run whose result it cannot act on, naming what was wrong', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const bad: Record<string, unknown> = { n: 42, s: 'done', after: { requeueAfter: -1 }, flag: { requeue: 'yes' } };
      const out = cold('(nsaf)', { n: 'n', s: 's', a: 'after', f: 'flag' }).pipe(
        reconcileByKey((key) => bad[key] as ReconcileResult, { concurrency: 4, maxRetries: 0, logger: silentLogger }),
        map((o) => `${o.result}: ${(o.error as Error).message}`),
      );
      expectObservable(out).toBe('(nsaf)', {
        n: 'dropped: reconcile of "n" returned 42; expected nothing or { requeue?: boolean, requeueAfter?: ms }',
        s: 'dropped: reconcile of "s" returned "done"; expected nothing or { requeue?: boolean, requeueAfter?: ms }',
        a: 'dropped: reconcile of "after" returned requeueAfter: -1; expected a finite number of ms >= 0',
        f: 'dropped: reconcile of "flag" returned requeue: "yes"; expected a boolean',
      });
    });
  });

  it('fails a run whose result has a property it does not know (a typo TypeScript lets through once the object is widened), naming the key and the property, and retries it like any failure', () => {
    const errors: unknown[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const firstResults: Record<string, unknown> = {
        lower: { requeueafter: 1000 },
        ms: { requeue: false, requeueAfterMs: 1000 },
        other: { done: true },
        written: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'default' } },
      };
      const reconcile: Reconciler = (key, ctx) => (ctx.attempt === 0 ? (firstResults[key] as ReconcileResult) : undefined);
      const out = cold('(lmow)', { l: 'lower', m: 'ms', o: 'other', w: 'written' }).pipe(
        reconcileByKey(reconcile, { concurrency: 4, rateLimiter: exponentialFailureRateLimiter(10, 1000), logger: silentLogger }),
        map((o) => {
          if (o.error !== undefined) errors.push(o.error);
          return `${o.key} ${o.result}#${o.attempt}${o.error === undefined ? '' : `: ${(o.error as Error).message}`}`;
        }),
      );
      const expected = 'expected nothing or { requeue?: boolean, requeueAfter?: ms }';
      expectObservable(out).toBe('(lmow) 4ms (LMOW)', {
        l: `lower error#0: reconcile of "lower" returned an unknown property "requeueafter" (did you mean requeueAfter?); ${expected}`,
        m: `ms error#0: reconcile of "ms" returned an unknown property "requeueAfterMs" (did you mean requeueAfter?); ${expected}`,
        o: `other error#0: reconcile of "other" returned an unknown property "done"; ${expected}`,
        w: `written error#0: reconcile of "written" returned a Kubernetes object (ConfigMap default/web), not a result; ${expected} (await the write instead of returning it)`,
        L: 'lower success#1',
        M: 'ms success#1',
        O: 'other success#1',
        W: 'written success#1',
      });
    });
    expect(errors.every((e) => e instanceof TypeError)).to.equal(true);
  });

  it('reads only the own properties of a result: inherited ones are no typo', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const result = Object.assign(Object.create({ inherited: true }) as object, { requeueAfter: 5 }) as ReconcileResult;
      const out = cold('a').pipe(reconcileByKey(() => result, { logger: silentLogger }), take(1));
      expectObservable(out.pipe(map((o) => o.result))).toBe('(a|)', { a: 'requeue_after' });
    });
  });

  it('takes the last value of an observable reconcile as its result', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const out = cold('a').pipe(
        reconcileByKey(() => concat(of({}), timer(2).pipe(map(() => ({ requeueAfter: 100 })))), { logger: silentLogger }),
        take(1),
      );
      expectObservable(out).toBe('--(a|)', { a: { key: 'a', result: 'requeue_after', attempt: 0, duration: 2 } });
    });
  });
});

describe('reconcileByKey: the earliest pending run wins', () => {
  it('runs a key triggered during its backoff delay now, and not again when the delay would have ended', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      let runs = 0;
      const reconcile: Reconciler = () => {
        runs++;
        if (runs === 1) throw new Error('fails once');
      };
      const limiter = exponentialFailureRateLimiter(100, 1000);
      const out = cold('a 9ms a 199ms |').pipe(reconcileByKey(reconcile, { rateLimiter: limiter, logger: silentLogger }));
      // Retry due at 100; the trigger at 10 runs it at once (still attempt 1: the count is kept).
      expectObservable(out.pipe(map((o) => `${o.result}#${o.attempt}`))).toBe('a 9ms b 199ms |', {
        a: 'error#0',
        b: 'success#1',
      });
    });
  });

  it('runs a key triggered before its requeueAfter is due at once, and only then', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      let runs = 0;
      const reconcile: Reconciler = () => (++runs === 1 ? { requeueAfter: 100 } : undefined);
      const out = cold('a 29ms a 199ms |').pipe(reconcileByKey(reconcile, { logger: silentLogger }));
      expectObservable(out.pipe(map((o) => o.result))).toBe('a 29ms b 199ms |', { a: 'requeue_after', b: 'success' });
    });
  });

  it('reruns at once, not after the delay, when a trigger came during a run that then failed', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const reconcile: Reconciler = (_key, ctx) =>
        timer(5).pipe(
          map(() => {
            if (ctx.attempt === 0) throw new Error('first run fails');
          }),
        );
      const limiter = exponentialFailureRateLimiter(100, 1000);
      const out = cold('a-a').pipe(reconcileByKey(reconcile, { rateLimiter: limiter, logger: silentLogger }));
      expectObservable(out.pipe(map((o) => `${o.result}#${o.attempt}`))).toBe('-----a----b', {
        a: 'error#0',
        b: 'success#1',
      });
    });
  });
});

describe('reconcileByKey: maxRetries', () => {
  it('drops a key after maxRetries retries in a row, logs it, forgets its count, and runs it afresh on its next trigger', () => {
    const logged: string[] = [];
    const logger: Logger = { ...silentLogger, error: (_fields, message) => logged.push(String(message)) };
    testScheduler().run(({ cold, expectObservable }) => {
      const limiter = exponentialFailureRateLimiter(10, 1000);
      const reconcile: Reconciler = () => {
        throw new Error('always');
      };
      const out = cold('a 99ms a').pipe(reconcileByKey(reconcile, { rateLimiter: limiter, maxRetries: 2, logger }));
      expectObservable(out.pipe(map((o) => `${o.result}#${o.attempt}#${limiter.retries(o.key)}`))).toBe(
        'a 9ms b 19ms c 69ms a 9ms b 19ms c',
        { a: 'error#0#1', b: 'error#1#2', c: 'dropped#2#0' },
      );
    });
    expect(logged.filter((m) => m.includes('dropping'))).to.deep.equal([
      'reconcile failed after 2 retries; dropping the key',
      'reconcile failed after 2 retries; dropping the key',
    ]);
  });

  it('never drops a key that asks for requeue: true', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const limiter = exponentialFailureRateLimiter(10, 1000);
      const reconcile: Reconciler = (_key, ctx) => (ctx.attempt < 3 ? { requeue: true } : undefined);
      const out = cold('a').pipe(reconcileByKey(reconcile, { rateLimiter: limiter, maxRetries: 1, logger: silentLogger }));
      expectObservable(out.pipe(map((o) => `${o.result}#${o.attempt}`))).toBe('a 9ms b 19ms c 39ms d', {
        a: 'requeue#0',
        b: 'requeue#1',
        c: 'requeue#2',
        d: 'success#3',
      });
    });
  });
});
