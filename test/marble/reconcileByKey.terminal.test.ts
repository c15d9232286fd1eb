import { expect } from 'chai';
import { Registry } from 'prom-client';
import { map, mergeMap, NEVER, throwError, timer } from 'rxjs';
import {
  controllerMetrics,
  exponentialFailureRateLimiter,
  KubeApiError,
  reconcileByKey,
  silentLogger,
  TerminalError,
  type Logger,
  type RateLimiter,
  type ReconcileOutcome,
  type Reconciler,
} from 'rxkube';
import { sampleValue } from '../sinks/prometheus.js';
import { testScheduler } from '../support/objects.js';

/** A limiter that records what the queue asks of it, delaying every retry by `delay`. */
function recordingLimiter(delay: number): RateLimiter & { calls: string[] } {
  const calls: string[] = [];
  return { calls, when: (key) => (calls.push(`when ${key}`), delay), forget: (key) => void calls.push(`forget ${key}`), retries: () => 0 };
}

/** What a logger was told, at any level (issue 15 may change levels; the message is what counts here). */
function capturingLogger(): Logger & { messages: string[] } {
  const messages: string[] = [];
  const log = (_fields: unknown, message?: string) => void messages.push(String(message));
  return { messages, debug: () => {}, info: log, warn: log, error: log };
}

const brief = (o: ReconcileOutcome) => `${o.key}:${o.result}#${o.attempt}${o.failure !== undefined ? `:${o.failure}` : ''}`;

describe('reconcileByKey: TerminalError', () => {
  it('drops a key whose run throws a TerminalError: no rate-limited retry, count forgotten, and the next trigger runs it again (the diagram of its doc comment)', () => {
    const limiter = recordingLimiter(2);
    const logger = capturingLogger();
    testScheduler().run(({ cold, expectObservable, flush }) => {
      let runs = 0;
      const reconcile: Reconciler = () =>
        timer(3).pipe(
          map(() => {
            if (runs++ === 0) throw new TerminalError('spec.replicas is negative');
          }),
        );
      const out = cold('-a------a---').pipe(reconcileByKey(reconcile, { rateLimiter: limiter, logger }), map(brief));
      // Without the TerminalError the key would run again 2 ms after the failure, at 6.
      expectObservable(out).toBe('----d------s', { d: 'a:dropped#0:terminal', s: 'a:success#0' });
      flush();
      expect(runs).to.equal(2);
    });
    expect(limiter.calls, 'never asked for a delay; forgotten after each run').to.deep.equal(['forget a', 'forget a']);
    expect(logger.messages).to.deep.equal(['reconcile failed with a TerminalError; not retried until the next trigger']);
  });

  it('carries the TerminalError as the outcome error, and is dropped at any attempt, after ordinary failures too', () => {
    const terminal = new TerminalError('cannot ever work');
    testScheduler().run(({ cold, expectObservable }) => {
      const reconcile: Reconciler = (_key, ctx) => {
        throw ctx.attempt < 2 ? new Error('transient') : terminal;
      };
      const out = cold('a').pipe(reconcileByKey(reconcile, { rateLimiter: exponentialFailureRateLimiter(5, 1000), logger: silentLogger }));
      // Fails at 0 and at 5 (retried after 5, then 10 ms), and the third run's TerminalError at 15 ends it.
      expectObservable(out).toBe('a 4ms b 9ms c', {
        a: { key: 'a', result: 'error', error: new Error('transient'), attempt: 0, duration: 0 },
        b: { key: 'a', result: 'error', error: new Error('transient'), attempt: 1, duration: 0 },
        c: { key: 'a', result: 'dropped', error: terminal, failure: 'terminal', attempt: 2, duration: 0 },
      });
    });
  });

  it('treats an error wrapping a TerminalError through its cause as terminal, as errors.Is sees through wrapping', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const reconcile: Reconciler = () =>
        throwError(() => new Error('reconciling default/a', { cause: new Error('validating', { cause: new TerminalError('bad spec') }) }));
      const out = cold('a').pipe(reconcileByKey(reconcile, { logger: silentLogger }), map(brief));
      expectObservable(out).toBe('a', { a: 'a:dropped#0:terminal' });
    });
  });

  it('runs the key again at once when it was triggered during the run that failed terminally', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      let runs = 0;
      const reconcile: Reconciler = () =>
        timer(3).pipe(
          mergeMap(() => (runs++ === 0 ? throwError(() => new TerminalError('stale')) : timer(0).pipe(map(() => undefined)))),
        );
      const out = cold('ab').pipe(
        map(() => 'k'),
        reconcileByKey(reconcile, { rateLimiter: exponentialFailureRateLimiter(100, 1000), logger: silentLogger }),
        map(brief),
      );
      expectObservable(out).toBe('---d--s', { d: 'k:dropped#0:terminal', s: 'k:success#0' });
    });
  });
});

describe('reconcileByKey: the failure kinds of outcomes', () => {
  const run = (thrown: () => unknown): ReconcileOutcome => {
    let outcome: ReconcileOutcome | undefined;
    testScheduler().run(({ cold, flush }) => {
      const reconcile: Reconciler = () => {
        throw thrown();
      };
      // maxRetries 0: one run, dropped, so that virtual time does not retry for ever.
      cold('a').pipe(reconcileByKey(reconcile, { maxRetries: 0, logger: silentLogger })).subscribe((o) => (outcome ??= o));
      flush();
    });
    if (outcome === undefined) throw new Error('no outcome');
    return outcome;
  };

  it('says panic for a throw of something that is not an Error, and for the errors the engine throws for a bug', () => {
    expect(run(() => 'a string').failure).to.equal('panic');
    expect(run(() => undefined).failure).to.equal('panic');
    expect(run(() => ({ message: 'a plain object' })).failure).to.equal('panic');
    const reading = (): unknown => {
      try {
        const missing = undefined as unknown as { spec: { replicas: number } };
        return missing.spec.replicas;
      } catch (err) {
        return err;
      }
    };
    expect(run(reading).failure, 'reading a property of undefined').to.equal('panic');
    expect(run(() => new RangeError('Maximum call stack size exceeded')).failure).to.equal('panic');
    expect(run(() => new ReferenceError('x is not defined')).failure).to.equal('panic');
  });

  it('says nothing for errors a program or library chose to throw, fetch failing included', () => {
    class ValidationError extends TypeError {}
    expect(run(() => new Error('boom')).failure).to.equal(undefined);
    expect(run(() => new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') })).failure).to.equal(undefined);
    expect(run(() => new ValidationError('bad')).failure).to.equal(undefined);
    expect(run(() => new KubeApiError({ verb: 'get', resource: 'configmaps' }, { code: 500, message: 'boom' })).failure).to.equal(undefined);
  });

  it('says timeout for a run that outlived its timeout, and nothing for a result that is not one', () => {
    const outcomes: ReconcileOutcome[] = [];
    testScheduler().run(({ cold, flush }) => {
      const reconcile: Reconciler = (key) => (key === 'slow' ? NEVER : ({ requeueAfterMs: 5 } as never));
      cold('(ab)', { a: 'slow', b: 'typo' })
        .pipe(reconcileByKey(reconcile, { concurrency: 2, timeout: 10, maxRetries: 0, logger: silentLogger }))
        .subscribe((o) => outcomes.push(o));
      flush();
    });
    expect(outcomes.map(brief)).to.deep.equal(['typo:dropped#0', 'slow:dropped#0:timeout']);
  });
});

describe('reconcileByKey and controllerMetrics: panics, timeouts and terminal errors counted', () => {
  it('counts each kind in its own counter, besides the errors, as controller-runtime does', async () => {
    const scheduler = testScheduler();
    const registry = new Registry();
    const m = controllerMetrics({ controller: 'c', registry, scheduler });
    scheduler.run(({ cold, flush }) => {
      const reconcile: Reconciler = (key) => {
        if (key === 'panic') throw 'not an Error';
        if (key === 'terminal') throw new TerminalError('never');
        if (key === 'slow') return NEVER;
        throw new Error('plain');
      };
      cold('(ptse)', { p: 'panic', t: 'terminal', s: 'slow', e: 'error' })
        .pipe(reconcileByKey(reconcile, { scheduler, concurrency: 4, timeout: 10, maxRetries: 0, observer: m.observer, logger: silentLogger }), m.recordOutcomes())
        .subscribe();
      flush();
    });
    const value = (name: string) => sampleValue(registry, name, { controller: 'c' });
    expect(await value('controller_runtime_reconcile_panics_total')).to.equal(1);
    expect(await value('controller_runtime_reconcile_timeouts_total')).to.equal(1);
    // The TerminalError, and the three dropped after maxRetries 0.
    expect(await value('controller_runtime_terminal_reconcile_errors_total')).to.equal(4);
    expect(await value('controller_runtime_reconcile_errors_total')).to.equal(4);
    expect(await sampleValue(registry, 'controller_runtime_reconcile_total', { controller: 'c', result: 'error' })).to.equal(4);
    expect(await sampleValue(registry, 'workqueue_retries_total', { controller: 'c', name: 'c' })).to.equal(0);
  });
});
