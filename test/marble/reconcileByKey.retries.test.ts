import { expect } from 'chai';
import { map, timer } from 'rxjs';
import {
  controllerMetrics,
  exponentialFailureRateLimiter,
  reconcileByKey,
  silentLogger,
  TerminalError,
  type ReconcileResult,
  type Reconciler,
} from 'rxkube';
import type { WorkqueueObserver } from '../../src/operators/reconcileByKey.js';
import { sampleValue } from '../sinks/prometheus.js';
import { testScheduler } from '../support/objects.js';

/** Runs `reconcile` over `keys` (a marble), recording when `retried` was called and each outcome, in virtual time. */
function retriesOf(keys: string, reconcile: Reconciler, options: { maxRetries?: number; stopAt?: number } = {}): string[] {
  const scheduler = testScheduler();
  const seen: string[] = [];
  const observer: WorkqueueObserver = { retried: (key) => seen.push(`${scheduler.now()}:retried ${key}`) };
  scheduler.run(({ cold, hot, flush }) => {
    const stop = options.stopAt === undefined ? undefined : hot(`${' '.repeat(options.stopAt)}s`);
    cold(keys)
      .pipe(
        reconcileByKey(reconcile, {
          scheduler,
          observer,
          rateLimiter: exponentialFailureRateLimiter(10, 1000),
          logger: silentLogger,
          ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
          ...(stop !== undefined ? { stop } : {}),
        }),
      )
      .subscribe((o) => seen.push(`${scheduler.now()}:${o.result} ${o.key}`));
    flush();
  });
  return seen;
}

/** A reconcile whose nth run (from 0) takes 2 ms and ends as `ends[n]` says; later runs succeed. */
function scripted(...ends: Array<'fail' | 'terminal' | ReconcileResult>): Reconciler {
  let n = 0;
  return () =>
    timer(2).pipe(
      map(() => {
        const end = ends[n++];
        if (end === 'fail') throw new Error('boom');
        if (end === 'terminal') throw new TerminalError('never');
        return end;
      }),
    );
}

describe('reconcileByKey: workqueue retries, counted as client-go and controller-runtime count them', () => {
  it('counts a rate-limited retry for each failure and each requeue: true', () => {
    expect(retriesOf('a', scripted('fail', { requeue: true }))).to.deep.equal([
      '2:retried a',
      '2:error a',
      // retried after 10 ms, at 12; its requeue: true is retried after 20 ms
      '14:retried a',
      '14:requeue a',
      '36:success a',
    ]);
  });

  it('counts each requeueAfter, as AddAfter counts every delayed add', () => {
    expect(retriesOf('a', scripted({ requeueAfter: 5 }, { requeueAfter: 5 }))).to.deep.equal([
      '2:retried a',
      '2:requeue_after a',
      '9:retried a',
      '9:requeue_after a',
      '16:success a',
    ]);
  });

  it('counts the rerun asked for even when a trigger during the run makes it come at once', () => {
    // The trigger at 1 lands during the first run: the rerun follows at 2, not 10 ms later.
    expect(retriesOf('aa', scripted('fail'))).to.deep.equal(['2:retried a', '2:error a', '4:success a']);
  });

  it('counts nothing for a success, a key dropped after maxRetries, or a TerminalError', () => {
    expect(retriesOf('a', scripted(undefined as unknown as ReconcileResult))).to.deep.equal(['2:success a']);
    expect(retriesOf('a', scripted('fail', 'fail'), { maxRetries: 1 })).to.deep.equal(['2:retried a', '2:error a', '14:dropped a']);
    expect(retriesOf('a', scripted('terminal'))).to.deep.equal(['2:dropped a']);
  });

  it('counts nothing for a rerun that will not happen because the input completed or stop came', () => {
    expect(retriesOf('a|', scripted('fail')), 'input completed').to.deep.equal(['2:error a']);
    expect(retriesOf('a', scripted({ requeueAfter: 5 }), { stopAt: 1 }), 'stopping').to.deep.equal(['2:requeue_after a']);
  });

  it('feeds workqueue_retries_total through controllerMetrics', async () => {
    const scheduler = testScheduler();
    const m = controllerMetrics({ controller: 'c', scheduler });
    scheduler.run(({ cold, flush }) => {
      cold('a')
        .pipe(reconcileByKey(scripted('fail', { requeueAfter: 5 }, { requeue: true }), { scheduler, observer: m.observer, logger: silentLogger }))
        .subscribe();
      flush();
    });
    expect(await sampleValue(m.registry, 'workqueue_retries_total', { name: 'c', controller: 'c' })).to.equal(3);
  });
});
