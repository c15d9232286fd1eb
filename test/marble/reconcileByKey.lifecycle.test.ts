import { expect } from 'chai';
import { Observable, Subject, map, timer, type Subscription } from 'rxjs';
import { silentLogger, exponentialFailureRateLimiter, reconcileByKey, type ReconcileOutcome, type Reconciler } from 'rxkube';
import { type WorkqueueInspector, type WorkqueueObserver } from '../../src/operators/reconcileByKey.js';
import { testScheduler } from '../support/objects.js';

const work = (frames: number) => timer(frames).pipe(map(() => undefined));
const sizes = (q: WorkqueueInspector | undefined) => q && { keys: q.keys, waiting: q.waiting, running: q.running, delayed: q.delayed };
const empty = { keys: 0, waiting: 0, running: 0, delayed: 0 };

describe('reconcileByKey: memory', () => {
  it('holds no state for 100,000 distinct keys once they are idle, while the input is still open', () => {
    let inspector: WorkqueueInspector | undefined;
    const limiter = exponentialFailureRateLimiter(5, 1000);
    testScheduler().run(({ flush }) => {
      const keys = new Subject<string>();
      const failedOnce = new Set<string>();
      const reconcile: Reconciler = (key) => {
        const n = Number(key.slice(3));
        // Some keys fail once (a delayed retry), some ask for a requeueAfter once.
        if (n % 1000 === 0 && !failedOnce.has(key)) {
          failedOnce.add(key);
          throw new Error('transient');
        }
        if (n % 700 === 0 && !failedOnce.has(key)) {
          failedOnce.add(key);
          return { requeueAfter: 50 };
        }
        return work(1 + (n % 3));
      };
      const outcomes: ReconcileOutcome[] = [];
      keys
        .pipe(reconcileByKey(reconcile, { concurrency: 100, rateLimiter: limiter, logger: silentLogger, inspect: (q) => (inspector = q) }))
        .subscribe((o) => outcomes.push(o));
      for (let i = 0; i < 100_000; i++) keys.next(`ns/${i}`);
      expect(sizes(inspector)).to.deep.include({ keys: 100_000, running: 100 });
      flush();
      expect(outcomes.filter((o) => o.result === 'success')).to.have.length(100_000);
      expect(sizes(inspector)).to.deep.equal(empty);
      expect(outcomes.filter((o) => o.result === 'error')).to.have.length(100);
      expect(outcomes.filter((o) => o.result === 'requeue_after')).to.have.length(143 - 15);
      expect(limiter.retries('ns/1000')).to.equal(0);
    });
  });
});

describe('reconcileByKey: completion', () => {
  it('finishes runs in flight, drains waiting keys, drops delayed retries, then completes', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const reconcile: Reconciler = (key) =>
        work(3).pipe(
          map(() => {
            if (key === 'f') throw new Error('fails, retry would come 100 ms later');
          }),
        );
      const limiter = exponentialFailureRateLimiter(100, 1000);
      // f runs 1-4 and fails; w waits for the worker; the input completes at 3.
      const out = cold('-fw|').pipe(reconcileByKey(reconcile, { rateLimiter: limiter, logger: silentLogger }));
      expectObservable(out.pipe(map((o) => `${o.key}:${o.result}`))).toBe('----f--(w|)', { f: 'f:error', w: 'w:success' });
    });
  });

  it('drops a retry that is already waiting out its delay when the input completes, and completes at once', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const reconcile: Reconciler = () => {
        throw new Error('always');
      };
      const out = cold('a-----|').pipe(
        reconcileByKey(reconcile, { rateLimiter: exponentialFailureRateLimiter(100, 1000), logger: silentLogger }),
      );
      expectObservable(out.pipe(map((o) => o.result))).toBe('a-----|', { a: 'error' });
    });
  });

  it('still runs a key that was triggered during its last run when the input completes', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const out = cold('aa|').pipe(reconcileByKey(() => work(5), { logger: silentLogger }));
      expectObservable(out.pipe(map((o) => o.key))).toBe('-----a----(a|)');
    });
  });

  it('completes at once on an empty input', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('--|').pipe(reconcileByKey(() => undefined))).toBe('--|');
    });
  });

  it('errors at once when the input errors, aborting the runs in flight', () => {
    const signals: AbortSignal[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const reconcile: Reconciler = (_key, ctx) => {
        signals.push(ctx.signal);
        return work(10);
      };
      expectObservable(cold('a-#').pipe(reconcileByKey(reconcile, { logger: silentLogger }))).toBe('--#');
    });
    expect(signals.map((s) => s.aborted)).to.deep.equal([true]);
  });

  it('errors, naming the fault, when the input carries something that is not a key', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const input = cold('ab', { a: 'ns/a', b: { type: 'Added' } as unknown as string });
      expectObservable(input.pipe(reconcileByKey(() => undefined, { logger: silentLogger }), map((o) => o.key))).toBe(
        'a#',
        { a: 'ns/a' },
        new TypeError('reconcileByKey expects object keys ("namespace/name" or "name") or { key, priority }, got an object whose key is undefined'),
      );
    });
  });

  it('errors, naming the fault, when a trigger carries a priority that is not a finite number', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const input = cold('ab', { a: { key: 'ns/a', priority: -100 }, b: { key: 'ns/b', priority: Number.NaN } });
      expectObservable(input.pipe(reconcileByKey(() => undefined, { logger: silentLogger }), map((o) => o.key))).toBe(
        'a#',
        { a: 'ns/a' },
        new TypeError('reconcileByKey expects object keys ("namespace/name" or "name") or { key, priority }, got an object whose priority is NaN, not a finite number'),
      );
    });
  });
});

describe('reconcileByKey: unsubscribing', () => {
  it('aborts every run in flight through its signal, unsubscribes observable reconciles and cancels timers', () => {
    const scheduler = testScheduler();
    const signals = new Map<string, AbortSignal>();
    let torndown = 0;
    let calls = 0;
    let inspector: WorkqueueInspector | undefined;
    const reconcile: Reconciler = (key, ctx) => {
      calls++;
      signals.set(key, ctx.signal);
      if (key === 'failing') throw new Error('retry in 10');
      if (key === 'promise') return new Promise<void>(() => {});
      return new Observable<void>(() => () => torndown++);
    };
    const keys = new Subject<string>();
    const sub: Subscription = keys
      .pipe(
        reconcileByKey(reconcile, {
          scheduler,
          concurrency: 2,
          rateLimiter: exponentialFailureRateLimiter(10, 100),
          logger: silentLogger,
          inspect: (q) => (inspector = q),
        }),
      )
      .subscribe();
    keys.next('failing');
    keys.next('promise');
    keys.next('observable');
    keys.next('waiting');
    expect(sizes(inspector)).to.deep.equal({ keys: 4, waiting: 1, running: 2, delayed: 1 });
    sub.unsubscribe();
    expect(signals.get('promise')?.aborted).to.equal(true);
    expect(signals.get('promise')?.reason).to.have.property('name', 'AbortError');
    expect(signals.get('observable')?.aborted).to.equal(true);
    expect(signals.get('failing')?.aborted).to.equal(false); // it had already finished
    expect(torndown).to.equal(1);
    // The queue's counters are reset by the teardown itself, so they cannot tell; the scheduler can: the
    // failing key's retry timer must be gone from it, not merely ignored when it fires.
    expect(scheduler.actions, 'timers left on the scheduler after unsubscribe').to.deep.equal([]);
    const before = calls;
    scheduler.flush();
    keys.next('after');
    expect(calls).to.equal(before);
  });

  it('gives a reconcile that reads its signal only after the abort an aborted signal', () => {
    const keys = new Subject<string>();
    let ctxSeen: { signal: AbortSignal } | undefined;
    const sub = keys
      .pipe(reconcileByKey((_key, ctx) => ((ctxSeen = ctx), new Promise<void>(() => {})), { logger: silentLogger }))
      .subscribe();
    keys.next('a');
    sub.unsubscribe();
    expect(ctxSeen?.signal.aborted).to.equal(true);
  });
});

describe('reconcileByKey: observer', () => {
  it('reports adds, depth, starts, finishes, retries and active workers at the moments its doc says', () => {
    const calls: string[] = [];
    const scheduler = testScheduler();
    const observer: WorkqueueObserver = {
      added: (k) => calls.push(`added ${k}`),
      depth: (n) => calls.push(`depth ${n}`),
      started: (k, q) => calls.push(`started ${k} queued ${q}`),
      finished: (k, w) => calls.push(`finished ${k} work ${w}`),
      retried: (k) => calls.push(`retried ${k}`),
      activeWorkers: (n) => calls.push(`active ${n}`),
    };
    const reconcile: Reconciler = (key, ctx) =>
      timer(4, scheduler).pipe(
        map(() => {
          if (key === 'a' && ctx.attempt === 0) throw new Error('once');
        }),
      );
    const keys = new Subject<string>();
    const sub = keys
      .pipe(
        reconcileByKey(reconcile, { scheduler, observer, logger: silentLogger, rateLimiter: exponentialFailureRateLimiter(10, 100) }),
      )
      .subscribe({ next: (o) => calls.push(`outcome ${o.key} ${o.result}`) });
    keys.next('a'); // 0: starts at once
    keys.next('b'); // 0: waits
    keys.next('b'); // 0: coalesces, not counted
    scheduler.frame = 1;
    keys.next('a'); // 1: during a's run: marked, counted
    keys.next('a'); // 1: already marked, not counted
    scheduler.flush(); // 4: a fails; b starts; 8: b done, a reruns; 12: a done
    sub.unsubscribe();
    expect(calls).to.deep.equal([
      'added a',
      'active 1',
      'started a queued 0',
      'added b',
      'depth 1',
      'added a',
      'finished a work 4',
      'active 0',
      'retried a',
      'depth 2',
      'outcome a error',
      'depth 1',
      'active 1',
      'started b queued 4',
      'finished b work 4',
      'active 0',
      'outcome b success',
      'depth 0',
      'active 1',
      'started a queued 4',
      'finished a work 4',
      'active 0',
      'outcome a success',
    ]);
  });

  it('keeps the queue running when an observer throws, and logs it', () => {
    const logged: string[] = [];
    const out: ReconcileOutcome[] = [];
    new Observable<string>((s) => {
      s.next('a');
      s.next('b');
      s.complete();
    })
      .pipe(
        reconcileByKey(() => undefined, {
          observer: {
            started() {
              throw new Error('metrics broke');
            },
          },
          logger: { ...silentLogger, error: (_f, m) => logged.push(String(m)) },
        }),
      )
      .subscribe((o) => out.push(o));
    expect(out.map((o) => o.result)).to.deep.equal(['success', 'success']);
    expect(logged).to.deep.equal(['workqueue observer threw', 'workqueue observer threw']);
  });

  it('calls the methods of an observer object with the object as this', () => {
    class Counter implements WorkqueueObserver {
      n = 0;
      added(): void {
        this.n++;
      }
    }
    const counter = new Counter();
    new Observable<string>((s) => s.next('a')).pipe(reconcileByKey(() => undefined, { observer: counter })).subscribe();
    expect(counter.n).to.equal(1);
  });
});

describe('reconcileByKey: options', () => {
  it('refuses options it cannot honour, naming them', () => {
    const none = () => undefined;
    expect(() => reconcileByKey(none, { concurrency: 0 })).to.throw(RangeError, 'concurrency must be a positive integer (or Infinity), got 0');
    expect(() => reconcileByKey(none, { concurrency: 1.5 })).to.throw(RangeError, 'concurrency');
    expect(() => reconcileByKey(none, { timeout: -1 })).to.throw(RangeError, 'timeout must be a finite number of ms > 0, got -1');
    expect(() => reconcileByKey(none, { maxRetries: -1 })).to.throw(RangeError, 'maxRetries must be an integer >= 0, got -1');
    expect(() => reconcileByKey(undefined as unknown as Reconciler)).to.throw(TypeError, 'needs a reconcile function, got undefined');
  });
});
