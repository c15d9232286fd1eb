import { expect } from 'chai';
import fc from 'fast-check';
import { Observable, asyncScheduler, map, timer } from 'rxjs';
import { LOW_PRIORITY, NORMAL_PRIORITY, reconcileByKey, silentLogger, type KeyTrigger, type RateLimiter, type ReconcileResult } from 'rxkube';
import { replay } from '../support/seed.js';
import { testScheduler } from '../support/objects.js';

interface Arrival {
  key: number;
  gap: number;
  priority: number;
}

const HIGH = 30;
const arrivalArb = fc.record({
  key: fc.nat(7),
  gap: fc.constantFrom(0, 0, 1, 1, 2, 3, 8),
  priority: fc.constantFrom(LOW_PRIORITY, LOW_PRIORITY, NORMAL_PRIORITY, NORMAL_PRIORITY, NORMAL_PRIORITY, HIGH),
});
/**
 * A storm: keys 1 … 7 triggered at normal (or high) priority back to back, faster than the workers drain them,
 * with low triggers among them: what starves a low key under strict priorities.
 */
const stormArb = fc.array(
  fc.record({
    key: fc.nat(7),
    gap: fc.constantFrom(0, 1),
    priority: fc.constantFrom(LOW_PRIORITY, NORMAL_PRIORITY, NORMAL_PRIORITY, NORMAL_PRIORITY, NORMAL_PRIORITY, HIGH),
  }),
  { minLength: 40, maxLength: 200 },
);
const arrivalsArb = fc.oneof(fc.array(arrivalArb, { minLength: 1, maxLength: 120 }), stormArb);
const runArb = fc.record({ frames: fc.integer({ min: 1, max: 6 }), requeue: fc.boolean() });

/** Reruns at once: a requeue goes straight back to waiting, at its run's priority. */
const noDelay: RateLimiter = { when: () => 0, forget: () => undefined, retries: () => 0 };

describe('reconcileByKey: aging bounds every wait (property)', () => {
  it(`under any arrival pattern, no key waits longer than (P - p) × aging / 100 + ⌈K / concurrency⌉ × the longest run (${replay})`, () => {
    fc.assert(
      fc.property(
        arrivalsArb,
        fc.array(runArb, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom(0, 5, 40, 200),
        (arrivals: Arrival[], runs, concurrency, keyCount, aging) => {
          const keys = Array.from({ length: keyCount }, (_, i) => `ns/k${i}`);
          const longest = Math.max(...runs.map((r) => r.frames));
          const highest = Math.max(...arrivals.map((a) => a.priority));
          const waits: { key: string; priority: number; from: number; waited: number }[] = [];
          const since = new Map<string, { at: number; priority: number | undefined }>();
          let justQueued: string | undefined;
          let completed = false;
          testScheduler().run(({ flush }) => {
            const input = new Observable<KeyTrigger>((subscriber) => {
              let at = 0;
              const subs = arrivals.map((a) => {
                at += a.gap;
                const key = keys[a.key % keyCount] as string;
                return timer(at).subscribe(() => subscriber.next(a.priority === NORMAL_PRIORITY && a.key % 2 === 0 ? key : { key, priority: a.priority }));
              });
              subs.push(timer(at + 1).subscribe(() => subscriber.complete()));
              return () => subs.forEach((s) => s.unsubscribe());
            });
            let n = 0;
            const reconcile = () => {
              const run = runs[n++ % runs.length] as (typeof runs)[number];
              return timer(run.frames).pipe(map((): ReconcileResult | undefined => (run.requeue && n % 3 === 0 ? { requeue: true } : undefined)));
            };
            input
              .pipe(
                reconcileByKey(reconcile, {
                  concurrency,
                  aging,
                  rateLimiter: noDelay,
                  logger: silentLogger,
                  observer: {
                    waiting: (key) => {
                      since.set(key, { at: asyncScheduler.now(), priority: undefined }); // virtual in run mode
                      justQueued = key;
                    },
                    // Told right after `waiting`: the lane the key joined.
                    priorityDepth: (priority) => {
                      const entry = justQueued === undefined ? undefined : since.get(justQueued);
                      if (entry !== undefined && entry.priority === undefined) entry.priority = priority;
                      justQueued = undefined;
                    },
                    started: (key, queuedMs) => {
                      const entry = since.get(key);
                      since.delete(key);
                      if (entry === undefined) return expect(queuedMs, `"${key}" started at once`).to.equal(0);
                      expect(entry.priority, `the lane "${key}" joined`).to.be.a('number');
                      waits.push({ key, priority: entry.priority as number, from: entry.at, waited: queuedMs });
                    },
                  },
                }),
              )
              .subscribe({ complete: () => (completed = true) });
            flush();
          });
          expect(completed, 'every key ran and the output completed').to.equal(true);
          expect(since.size, 'no key was left waiting').to.equal(0);
          for (const w of waits) {
            const bound = ((highest - w.priority) * aging) / 100 + Math.ceil(keyCount / concurrency) * longest;
            expect(w.waited, `"${w.key}" (priority ${w.priority}) waited from ${w.from}; bound ${bound}`).to.be.at.most(bound);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
