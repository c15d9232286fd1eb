import { expect } from 'chai';
import { NEVER, Subject, Observable, of } from 'rxjs';
import { silentLogger, type Logger, type RateLimiter, reconcileByKey, type ReconcileOutcome, type Reconciler } from 'rxkube';
import { type ReconcileOptions, type WorkqueueInspector } from '../../src/operators/reconcileByKey.js';
import { testScheduler } from '../support/objects.js';

const boom = new Error('boom');

/** A limiter that answers 10 ms and throws from the named method. */
function throwingLimiter(method: 'when' | 'forget'): RateLimiter {
  return {
    when() {
      if (method === 'when') throw boom;
      return 10;
    },
    forget() {
      if (method === 'forget') throw boom;
    },
    retries: () => 0,
  };
}

/** Collects uncaught exceptions and unhandled rejections until `stop`. */
function uncaught() {
  const seen: unknown[] = [];
  const record = (err: unknown) => seen.push(err);
  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
  return {
    seen,
    stop: () => {
      process.off('uncaughtException', record);
      process.off('unhandledRejection', record);
    },
  };
}

/** Lets promise callbacks, and anything RxJS reports asynchronously (a zero-delay timer), run: one turn of the event loop, not a sleep. */
const turn = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

/** Runs the operator on a TestScheduler outside `run()`, so that promises settle between steps. */
function harness(reconcile: Reconciler, options: ReconcileOptions = {}) {
  const scheduler = testScheduler();
  const keys = new Subject<string>();
  const outcomes: ReconcileOutcome[] = [];
  const errors: unknown[] = [];
  let completed = false;
  let inspector: WorkqueueInspector | undefined;
  const subscription = keys
    .pipe(reconcileByKey(reconcile, { scheduler, logger: silentLogger, inspect: (q) => (inspector = q), ...options }))
    .subscribe({ next: (o) => outcomes.push(o), error: (e: unknown) => errors.push(e), complete: () => (completed = true) });
  return {
    scheduler,
    keys,
    outcomes,
    errors,
    subscription,
    completed: () => completed,
    sizes: () => inspector && { keys: inspector.keys, waiting: inspector.waiting, running: inspector.running, delayed: inspector.delayed },
  };
}

function expectLimiterError(err: unknown, call: string): void {
  expect(err).to.be.instanceOf(Error);
  expect((err as Error).message).to.equal(`${call} threw: boom`);
  expect((err as Error).cause).to.equal(boom);
}

describe('reconcileByKey: a rate limiter that throws', () => {
  let watch: ReturnType<typeof uncaught>;
  beforeEach(() => {
    watch = uncaught();
  });
  afterEach(() => watch.stop());

  const failures: [string, Reconciler][] = [
    [
      'a synchronous reconcile',
      () => {
        throw new Error('reconcile failed');
      },
    ],
    ['an async reconcile', () => Promise.reject(new Error('reconcile failed'))],
  ];
  for (const [kind, reconcile] of failures) {
    it(`errors the output, naming the call and the key, when when() throws after ${kind} fails; runs in flight are aborted, nothing is thrown into the event loop`, async () => {
      const signals = new Map<string, AbortSignal>();
      const h = harness(
        (key, ctx) => {
          signals.set(key, ctx.signal);
          return key === 'default/slow' ? NEVER : reconcile(key, ctx);
        },
        { concurrency: 2, rateLimiter: throwingLimiter('when') },
      );
      h.keys.next('default/slow');
      h.keys.next('default/web');
      h.keys.next('default/waiting');
      await turn();
      expect(h.errors).to.have.length(1);
      expectLimiterError(h.errors[0], 'rateLimiter.when("default/web")');
      expect(h.outcomes, 'no outcome for the run whose retry could not be scheduled').to.deep.equal([]);
      expect(signals.get('default/slow')?.aborted, 'the run in flight is aborted').to.equal(true);
      expect(signals.has('default/waiting'), 'nothing starts after the error').to.equal(false);
      expect(h.sizes()).to.deep.equal({ keys: 0, waiting: 0, running: 0, delayed: 0 });
      h.keys.next('default/later');
      expect(signals.has('default/later')).to.equal(false);
      await turn();
      expect(watch.seen).to.deep.equal([]);
    });
  }

  const successes: [string, Reconciler][] = [
    ['a synchronous reconcile', () => undefined],
    ['an async reconcile', () => Promise.resolve()],
    ['an observable reconcile', () => of({ requeueAfter: 5 })],
  ];
  for (const [kind, reconcile] of successes) {
    it(`errors the output when forget() throws after ${kind} succeeds`, async () => {
      const h = harness(reconcile, { rateLimiter: throwingLimiter('forget') });
      h.keys.next('default/web');
      await turn();
      expect(h.outcomes).to.deep.equal([]);
      expect(h.errors).to.have.length(1);
      expectLimiterError(h.errors[0], 'rateLimiter.forget("default/web")');
      await turn();
      expect(watch.seen).to.deep.equal([]);
    });
  }

  it('errors the output when forget() throws for a delayed retry dropped because the input completed', () => {
    let forgets = 0;
    const limiter: RateLimiter = {
      when: () => 10,
      forget() {
        if (++forgets === 1) throw boom;
      },
      retries: () => 0,
    };
    const h = harness(
      () => {
        throw new Error('fails');
      },
      { rateLimiter: limiter },
    );
    h.keys.next('default/web');
    expect(h.outcomes.map((o) => o.result)).to.deep.equal(['error']);
    h.keys.complete();
    expectLimiterError(h.errors[0], 'rateLimiter.forget("default/web")');
    expect(h.completed()).to.equal(false);
  });

  it('errors the output when forget() throws for a key dropped by stop', () => {
    const stop = new Subject<void>();
    const h = harness(() => NEVER, { rateLimiter: throwingLimiter('forget'), stop });
    h.keys.next('default/running');
    h.keys.next('default/waiting');
    stop.next();
    expectLimiterError(h.errors[0], 'rateLimiter.forget("default/waiting")');
    expect(h.sizes()).to.deep.equal({ keys: 0, waiting: 0, running: 0, delayed: 0 });
  });

  it('logs, and does not throw, when forget() throws while the queue is torn down', () => {
    const logged: string[] = [];
    const logger: Logger = { ...silentLogger, error: (_fields, message) => logged.push(String(message)) };
    const h = harness(
      () => {
        throw new Error('fails');
      },
      { rateLimiter: throwingLimiter('forget'), logger },
    );
    h.keys.next('default/web'); // fails, and waits out its delay: attempt 1
    expect(() => h.subscription.unsubscribe()).to.not.throw();
    expect(logged).to.include('rateLimiter.forget threw while the queue was torn down');
  });

  it('names a thrown value that is not an Error, and keeps it as the cause', () => {
    const h = harness(
      () => {
        throw new Error('fails');
      },
      {
        rateLimiter: {
          when() {
            throw 'no delay for you';
          },
          forget() {},
          retries: () => 0,
        },
      },
    );
    h.keys.next('web');
    expect((h.errors[0] as Error).message).to.equal('rateLimiter.when("web") threw: no delay for you');
    expect((h.errors[0] as Error).cause).to.equal('no delay for you');
  });

  it('errors the output when when() throws for requeue: true from an observable reconcile that ends later', () => {
    const scheduler = testScheduler();
    const keys = new Subject<string>();
    const errors: unknown[] = [];
    keys
      .pipe(
        reconcileByKey(() => new Observable((s) => void scheduler.schedule(() => (s.next({ requeue: true }), s.complete()), 5)), {
          scheduler,
          rateLimiter: throwingLimiter('when'),
          logger: silentLogger,
        }),
      )
      .subscribe({ error: (e: unknown) => errors.push(e) });
    keys.next('ns/a');
    scheduler.flush();
    expectLimiterError(errors[0], 'rateLimiter.when("ns/a")');
  });
});
