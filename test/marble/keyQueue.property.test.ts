import { expect } from 'chai';
import fc from 'fast-check';
import { KeyQueue, type AfterRun, type KeyEntry, type Phase, type QueueMode, type ReconcileOutcomeResult, type RunEnd } from '../../src/operators/keyQueue.js';

// Fixed, so that a failure reproduces: fast-check would otherwise seed from the clock.
const SEED = 20_240_611;

type Step =
  | { kind: 'trigger'; key: string; mayStart: boolean; priority: number }
  | { kind: 'finish'; pick: number; end: RunEnd; delay: number; after: number }
  | { kind: 'fire'; pick: number }
  | { kind: 'timeout'; pick: number; delay: number }
  | { kind: 'complete' }
  | { kind: 'stop' };

const keys = ['a', 'b', 'c', 'd', 'e'];
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({ kind: fc.constant('trigger' as const), key: fc.constantFrom(...keys), mayStart: fc.boolean(), priority: fc.constantFrom(-100, 0, 0, 7) }),
  },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('finish' as const),
      pick: fc.nat(9),
      end: fc.constantFrom<RunEnd>('success', 'success', 'failure', 'terminal', 'requeue', 'requeueAfter'),
      delay: fc.constantFrom(0, 3, 7),
      after: fc.constantFrom(1, 4),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('fire' as const), pick: fc.nat(9) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('timeout' as const), pick: fc.nat(9), delay: fc.constantFrom(0, 5) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('complete' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stop' as const) }) },
);

/** A waiting key in the model: ranked by the effective priority it has at any one time, ties to the first in. */
interface Waiting {
  key: string;
  priority: number;
  at: number;
  n: number;
}

/**
 * The same queue written the obvious way (arrays and sets, no links and no
 * counters, effective priorities computed at each take), to hold the
 * KeyQueue's answers against.
 */
class Model {
  readonly phase = new Map<string, Phase>();
  readonly dirty = new Set<string>();
  readonly attempt = new Map<string, number>();
  readonly since = new Map<string, number>();
  /** The priority of each key's run or pending run, and of the triggers during its run. */
  readonly priority = new Map<string, number>();
  readonly dirtyPriority = new Map<string, number>();
  fifo: Waiting[] = [];
  mode: QueueMode = 'open';
  #arrivals = 0;

  constructor(
    readonly concurrency: number,
    readonly maxRetries: number | undefined,
    readonly aging: number,
  ) {}

  /**
   * The effective priority of a waiting key at `now` (100 points more for
   * every `aging` of waiting), times `aging` to stay in whole numbers; with
   * `aging` 0, the earlier in, the higher.
   */
  effective(w: Waiting, now: number): number {
    return this.aging === 0 ? -w.at : w.priority * this.aging + (now - w.at) * 100;
  }

  count(phase: Phase): number {
    return [...this.phase.values()].filter((p) => p === phase).length;
  }
  freeWorker(): boolean {
    return this.count('running') < this.concurrency;
  }
  enqueue(key: string, now: number): void {
    this.phase.set(key, 'waiting');
    this.since.set(key, now);
    this.fifo.push({ key, priority: this.priority.get(key) ?? 0, at: now, n: this.#arrivals++ });
  }
  forget(key: string): void {
    this.phase.delete(key);
    this.dirty.delete(key);
    this.attempt.delete(key);
    this.since.delete(key);
    this.priority.delete(key);
    this.dirtyPriority.delete(key);
    this.fifo = this.fifo.filter((w) => w.key !== key);
  }
  /** What `trigger` should answer: the phase of the entry it returns, with `started` for a key that starts at once. */
  trigger(key: string, now: number, mayStart: boolean, priority: number): 'started' | Phase | 'marked' | 'moved' | undefined {
    if (this.mode !== 'open') return undefined;
    const phase = this.phase.get(key);
    if (phase === undefined) {
      this.attempt.set(key, 0);
      this.priority.set(key, priority);
      if (mayStart && this.fifo.length === 0 && this.freeWorker()) {
        this.phase.set(key, 'running');
        this.since.set(key, now);
        return 'started';
      }
      this.enqueue(key, now);
      return 'waiting';
    }
    if (phase === 'running') {
      this.dirtyPriority.set(key, Math.max(priority, this.dirtyPriority.get(key) ?? -Infinity));
      if (this.dirty.has(key)) return undefined;
      this.dirty.add(key);
      return 'marked';
    }
    if (phase === 'delayed') {
      this.priority.set(key, Math.max(priority, this.priority.get(key) ?? -Infinity));
      return 'delayed';
    }
    // Waiting: it moves if the trigger's priority, fresh, beats the effective priority its wait gave it.
    const w = this.fifo.find((x) => x.key === key) as Waiting;
    const fresh: Waiting = { key, priority, at: now, n: this.#arrivals };
    if (priority <= w.priority || this.effective(fresh, now) <= this.effective(w, now)) return undefined;
    this.fifo = this.fifo.filter((x) => x !== w);
    this.fifo.push(fresh);
    this.#arrivals++;
    this.priority.set(key, priority);
    return 'moved';
  }
  take(now: number): { key: string; waited: number } | undefined {
    if (this.fifo.length === 0 || !this.freeWorker()) return undefined;
    let best = this.fifo[0] as Waiting;
    for (const w of this.fifo) {
      const [e, b] = [this.effective(w, now), this.effective(best, now)];
      if (e > b || (e === b && w.n < best.n)) best = w;
    }
    const key = best.key;
    this.fifo = this.fifo.filter((x) => x !== best);
    const waited = now - (this.since.get(key) ?? NaN);
    this.phase.set(key, 'running');
    this.since.set(key, now);
    return { key, waited };
  }
  judge(key: string, end: RunEnd): ReconcileOutcomeResult {
    if (end === 'terminal') return 'dropped';
    if (end === 'failure') return this.maxRetries !== undefined && (this.attempt.get(key) ?? 0) >= this.maxRetries ? 'dropped' : 'error';
    return end === 'requeueAfter' ? 'requeue_after' : end;
  }
  finish(key: string, now: number, result: ReconcileOutcomeResult, delay: number): AfterRun {
    const counted = result === 'error' || result === 'requeue';
    this.attempt.set(key, counted ? (this.attempt.get(key) ?? 0) + 1 : 0);
    if (this.dirty.delete(key)) {
      const during = this.dirtyPriority.get(key) as number;
      this.dirtyPriority.delete(key);
      // The triggers during the run ask for the rerun; the run's own priority too, if it asked for one.
      this.priority.set(key, delay < 0 ? during : Math.max(during, this.priority.get(key) as number));
      this.enqueue(key, now);
      return 'again';
    }
    if (delay < 0 || this.mode !== 'open') {
      this.forget(key);
      return delay < 0 ? 'idle' : 'dropped';
    }
    if (delay === 0) {
      this.enqueue(key, now);
      return 'queued';
    }
    this.phase.set(key, 'delayed');
    this.since.set(key, now);
    return 'delayed';
  }
  wake(key: string, now: number): void {
    this.enqueue(key, now);
  }
  /** Drops the keys in the given phases, and returns them sorted. */
  drop(phases: Phase[]): string[] {
    const dropped = [...this.phase].filter(([, p]) => phases.includes(p)).map(([k]) => k);
    dropped.forEach((k) => this.forget(k));
    return dropped.sort();
  }
}

/** A timer the driver armed, to check that the queue hands back exactly the one it holds. */
interface Timer {
  key: string;
  kind: 'delay' | 'timeout';
  n: number;
}

describe('KeyQueue: properties', () => {
  it(`for any sequence of triggers, finished runs, timers, timeouts, input completion and stop: the invariants hold after every step and the queue answers as the model does (fast-check seed ${SEED})`, () => {
    fc.assert(
      fc.property(
        // With each step, whether the shell starts waiting keys right after it: it
        // may not, as when a trigger comes while an outcome is being emitted.
        fc.array(fc.tuple(stepArb, fc.boolean()), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 4 }),
        fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
        fc.boolean(),
        fc.constantFrom(0, 1, 3, 10, 1000),
        (steps, concurrency, maxRetries, timeouts, aging) => {
          const q = new KeyQueue<number, Timer>({ concurrency, maxRetries, timeouts, aging });
          const model = new Model(concurrency, maxRetries, aging);
          const inFlight = new Map<string, KeyEntry<number, Timer>>();
          /** Triggers that came during the run in flight of each key. */
          const triggersDuringRun = new Map<string, number>();
          let runs = 0;
          let timers = 0;
          let now = 0;

          const arm = (e: KeyEntry<number, Timer>, kind: Timer['kind']): Timer => {
            const timer = { key: e.key, kind, n: timers++ };
            q.arm(e, timer);
            return timer;
          };
          const began = (e: KeyEntry<number, Timer>, waited: number): void => {
            expect(inFlight.has(e.key), `"${e.key}" started while it was running`).to.equal(false);
            expect(e).to.include({ phase: 'running', since: now, waited, dirty: false });
            expect(e.attempt).to.equal(model.attempt.get(e.key));
            inFlight.set(e.key, e);
            triggersDuringRun.set(e.key, 0);
            e.run = runs++;
            if (timeouts) arm(e, 'timeout');
          };
          // What the shell does after every step: start waiting keys while workers are free.
          const pump = (): void => {
            for (;;) {
              const expected = model.take(now);
              const e = q.take(now);
              expect(e?.key, 'the next key to start is the waiting one of highest effective priority, ties to the first in').to.equal(expected?.key);
              if (e !== undefined) expect(e.priority, `the priority "${e.key}" runs at`).to.equal(model.priority.get(e.key));
              if (e === undefined || expected === undefined) return;
              began(e, expected.waited);
            }
          };
          const pickFrom = <V>(values: V[], pick: number): V | undefined => values[pick % Math.max(1, values.length)];
          const running = () => [...inFlight.values()].sort((x, y) => x.key.localeCompare(y.key));
          const delayed = () => keys.map((k) => q.get(k)).filter((e) => e !== undefined && e.phase === 'delayed');

          const end = (e: KeyEntry<number, Timer>, how: RunEnd, delay: number, after: number): void => {
            const timer = q.disarm(e);
            if (timeouts) expect(timer, 'the run held its timeout').to.include({ key: e.key, kind: 'timeout' });
            else expect(timer).to.equal(undefined);
            const result = q.judge(e, how);
            expect(result).to.equal(model.judge(e.key, how));
            const asks = result === 'error' || result === 'requeue' ? delay : result === 'requeue_after' ? after : -1;
            const wasDirty = e.dirty;
            expect(wasDirty).to.equal(model.dirty.has(e.key));
            expect(wasDirty, 'dirty exactly when a trigger came during the run (and no stop since)').to.equal(
              (triggersDuringRun.get(e.key) ?? 0) > 0 && model.mode !== 'stopping',
            );
            const next = q.finish(e, now, result, asks);
            expect(next).to.equal(model.finish(e.key, now, result, asks));
            if (wasDirty) expect(next, 'a trigger during the run means one more run').to.equal('again');
            expect(e.run, 'the run is over').to.equal(undefined);
            inFlight.delete(e.key);
            if (next === 'delayed') arm(e, 'delay');
            if (next === 'idle' || next === 'dropped') expect(q.get(e.key), 'an idle key has no state').to.equal(undefined);
          };

          const step = (s: Step): void => {
            switch (s.kind) {
              case 'trigger': {
                const waitingBefore = q.waiting;
                const expected = model.trigger(s.key, now, s.mayStart, s.priority);
                const e = q.trigger(s.key, now, s.mayStart, s.priority);
                if (expected === undefined) {
                  expect(e, `trigger of "${s.key}" coalesces`).to.equal(undefined);
                  expect(q.waiting, 'a coalesced trigger queues nothing').to.equal(waitingBefore);
                  return;
                }
                expect(e, `trigger of "${s.key}"`).to.not.equal(undefined);
                if (e === undefined) return;
                if (expected === 'started') return began(e, 0);
                if (expected === 'moved') {
                  expect(e).to.include({ phase: 'waiting', priority: s.priority });
                  expect(e.moved, 'the lane it left').to.be.below(s.priority);
                  expect(q.waiting, 'a move queues nothing more').to.equal(waitingBefore);
                  return;
                }
                expect(e.moved, 'a fresh entry did not move').to.equal(undefined);
                if (expected === 'marked') {
                  expect(e).to.include({ phase: 'running', dirty: true });
                  triggersDuringRun.set(s.key, (triggersDuringRun.get(s.key) ?? 0) + 1);
                  return;
                }
                expect(e.phase).to.equal(expected);
                if (expected === 'delayed') {
                  // The earliest pending run wins: the shell cancels the delay and wakes the key now.
                  expect(q.wake(e, now), 'wake hands back the delay to cancel').to.include({ key: s.key, kind: 'delay' });
                  model.wake(s.key, now);
                }
                return;
              }
              case 'finish': {
                const e = pickFrom(running(), s.pick);
                if (e !== undefined) end(e, s.end, s.delay, s.after);
                return;
              }
              case 'timeout': {
                const e = pickFrom(running(), s.pick);
                if (e !== undefined && timeouts) end(e, 'failure', s.delay, 0);
                return;
              }
              case 'fire': {
                const e = pickFrom(delayed(), s.pick);
                if (e === undefined) return;
                expect(q.wake(e, now), 'the timer that fires is the one the key held').to.include({ key: e.key, kind: 'delay' });
                model.wake(e.key, now);
                return;
              }
              case 'complete': {
                const dropped = q.complete();
                if (model.mode === 'open') model.mode = 'draining';
                expect(dropped.map((e) => e.key).sort()).to.deep.equal(model.drop(['delayed']));
                for (const e of dropped) expect(e.timer, 'a dropped delay is handed back to cancel').to.include({ kind: 'delay' });
                return;
              }
              case 'stop': {
                const dropped = q.stop();
                model.mode = 'stopping';
                model.dirty.clear();
                expect(dropped.map((e) => e.key).sort()).to.deep.equal(model.drop(['waiting', 'delayed']));
                for (const e of dropped) expect(e.timer === undefined, 'only a delayed key held a timer').to.equal(e.phase === 'waiting');
              }
            }
          };

          const check = (pumped: boolean): void => {
            q.checkInvariants();
            expect([q.keys, q.waiting, q.running, q.delayed]).to.deep.equal([
              model.phase.size,
              model.count('waiting'),
              model.count('running'),
              model.count('delayed'),
            ]);
            expect(q.mode).to.equal(model.mode);
            expect(inFlight.size, 'runs in flight').to.equal(q.running);
            expect(q.running, 'at most `concurrency` runs in flight').to.be.at.most(concurrency);
            if (pumped && q.waiting > 0) expect(q.running, 'no worker idles while a key waits').to.equal(concurrency);
            if (model.mode === 'stopping') expect(q.waiting + q.delayed, 'nothing waits once stopped').to.equal(0);
            expect(q.done).to.equal(model.mode !== 'open' && model.phase.size === 0);
          };

          for (const [s, pumps] of steps) {
            now += 1;
            step(s);
            if (pumps) pump();
            check(pumps);
          }
          pump();
          // The end: the input completes and every run succeeds; nothing may be left.
          q.complete();
          model.mode = model.mode === 'open' ? 'draining' : model.mode;
          model.drop(['delayed']);
          for (let guard = 0; inFlight.size > 0; guard++) {
            expect(guard, 'the queue drains').to.be.below(100);
            now += 1;
            for (const e of running()) end(e, 'success', -1, 0);
            pump();
            check(true);
          }
          expect(q.done, 'done once drained').to.equal(true);
          expect(q.keys).to.equal(0);
        },
      ),
      { seed: SEED, numRuns: 1000 },
    );
  });
});
