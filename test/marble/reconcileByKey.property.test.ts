import { expect } from 'chai';
import fc from 'fast-check';
import { Observable, asyncScheduler, defer, finalize, map, timer } from 'rxjs';
import { silentLogger, fastSlowRateLimiter, reconcileByKey, type ReconcileOutcome, type ReconcileResult } from 'rxkube';
import { type WorkqueueInspector } from '../../src/operators/reconcileByKey.js';
import { testScheduler } from '../support/objects.js';

interface Trigger {
  key: string;
  gap: number;
}
interface Behaviour {
  frames: number;
  ends: 'success' | 'error' | 'requeue' | 'requeueAfter';
}

const triggerArb = fc.record({ key: fc.constantFrom('a', 'b', 'c', 'd'), gap: fc.integer({ min: 0, max: 4 }) });
const behaviourArb = fc.record({
  frames: fc.integer({ min: 0, max: 6 }),
  ends: fc.constantFrom<Behaviour['ends']>('success', 'success', 'success', 'error', 'requeue', 'requeueAfter'),
});

describe('reconcileByKey: properties', () => {
  it('for any triggers and run behaviours: one run per key at a time, at most `concurrency` in all, every trigger followed by a run, no run without a cause, and nothing left at the end', () => {
    fc.assert(
      fc.property(
        fc.array(triggerArb, { minLength: 1, maxLength: 40 }),
        fc.array(behaviourArb, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 3 }),
        (triggers: Trigger[], behaviours: Behaviour[], concurrency: number) => {
          const runs: { key: string; start: number; end: number }[] = [];
          const triggeredAt: { key: string; at: number }[] = [];
          const outcomes: ReconcileOutcome[] = [];
          let errored = false;
          let completed = false;
          let inspector: WorkqueueInspector | undefined;
          // Sampled the moment the output completes, before the subscription's teardown clears the queue.
          let leftAtCompletion: number[] | undefined;
          const inFlight = new Set<string>();
          let sameKeyOverlaps = 0;
          let maxInFlight = 0;
          // In run mode timer() and asyncScheduler.now() are virtual.
          testScheduler().run(({ flush }) => {
            const input = new Observable<string>((subscriber) => {
              let at = 0;
              const subs = triggers.map((t) => {
                at += t.gap;
                const when = at;
                return timer(when).subscribe(() => {
                  triggeredAt.push({ key: t.key, at: when });
                  subscriber.next(t.key);
                });
              });
              const done = timer(at + 1).subscribe(() => subscriber.complete());
              return () => [...subs, done].forEach((s) => s.unsubscribe());
            });
            let n = 0;
            const reconcile = (key: string) =>
              defer(() => {
                const b = behaviours[n++ % behaviours.length] as Behaviour;
                const run = { key, start: asyncScheduler.now(), end: -1 };
                runs.push(run);
                if (inFlight.has(key)) sameKeyOverlaps++;
                inFlight.add(key);
                maxInFlight = Math.max(maxInFlight, inFlight.size);
                return timer(b.frames).pipe(
                  map((): ReconcileResult | void => {
                    if (b.ends === 'error') throw new Error('fails');
                    if (b.ends === 'requeue') return { requeue: true };
                    if (b.ends === 'requeueAfter') return { requeueAfter: 3 };
                  }),
                  finalize(() => {
                    run.end = asyncScheduler.now();
                    inFlight.delete(key);
                  }),
                );
              });
            input
              .pipe(
                reconcileByKey(reconcile, {
                  concurrency,
                  rateLimiter: fastSlowRateLimiter(2, 7, 2),
                  logger: silentLogger,
                  inspect: (q) => (inspector = q),
                }),
              )
              .subscribe({ next: (o) => outcomes.push(o), error: () => (errored = true), complete: () => {
                  completed = true;
                  leftAtCompletion = inspector && [inspector.keys, inspector.waiting, inspector.running, inspector.delayed];
                },
              });
            flush();
          });

          expect(errored, 'the output never errors').to.equal(false);
          expect(completed, 'the output completes after the input').to.equal(true);
          expect(outcomes).to.have.length(runs.length);
          for (const r of runs) expect(r.end, 'every run ended').to.be.at.least(r.start);
          expect(sameKeyOverlaps, 'a key started while it was running').to.equal(0);
          expect(maxInFlight).to.be.at.most(concurrency);
          // No trigger is lost: a run of its key starts at or after it.
          for (const t of triggeredAt) {
            expect(runs.some((r) => r.key === t.key && r.start >= t.at), `run after trigger of ${t.key} at ${t.at}`).to.equal(true);
          }
          // No run without a cause: triggers plus reruns asked for by outcomes.
          for (const key of ['a', 'b', 'c', 'd']) {
            const causes =
              triggeredAt.filter((t) => t.key === key).length +
              outcomes.filter((o) => o.key === key && o.result !== 'success' && o.result !== 'dropped').length;
            expect(runs.filter((r) => r.key === key).length).to.be.at.most(causes);
          }
          expect(leftAtCompletion, 'keys, waiting, running, delayed when the output completed').to.deep.equal([0, 0, 0, 0]);
        },
      ),
      { numRuns: 300 },
    );
  });
});
