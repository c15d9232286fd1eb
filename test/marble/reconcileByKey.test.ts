import { expect } from 'chai';
import { defer, finalize, from, map, take, timer, type Observable } from 'rxjs';
import { reconcileByKey, type ReconcileOutcome, silentLogger } from 'rxkube';
import { testScheduler } from '../support/objects.js';

/** A reconcile that takes `frames` of virtual time and succeeds. */
const work = (frames: number): Observable<undefined> => timer(frames).pipe(map(() => undefined));

const ok = (key: string, duration: number, attempt = 0): ReconcileOutcome => ({ key, result: 'success', attempt, duration });

/** Counts what is in flight, per key and in all, while the reconciles run. */
function tracker(framesFor: (key: string) => number) {
  const perKey = new Map<string, number>();
  const seen = { maxPerKey: 0, maxInFlight: 0, inFlight: 0, starts: [] as string[] };
  const reconcile = (key: string) =>
    defer(() => {
      const n = (perKey.get(key) ?? 0) + 1;
      perKey.set(key, n);
      seen.inFlight++;
      seen.starts.push(key);
      seen.maxPerKey = Math.max(seen.maxPerKey, n);
      seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
      return work(framesFor(key)).pipe(
        finalize(() => {
          perKey.set(key, (perKey.get(key) ?? 1) - 1);
          seen.inFlight--;
        }),
      );
    });
  return { reconcile, seen };
}

describe('reconcileByKey: the queue', () => {
  it('runs a key once more after a run that it was triggered during, and coalesces triggers while it waits (the diagram of its doc comment)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const keys = cold('-a-a-b--aa----|');
      const out = keys.pipe(reconcileByKey(() => work(3), { logger: silentLogger }));
      expectObservable(out).toBe('----a--a--b--a|', { a: ok('a', 3), b: ok('b', 3) });
    });
  });

  it('never runs one key twice at the same time, whatever the concurrency', () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const { reconcile, seen } = tracker(() => 5);
      const out = cold('-aaaa---|').pipe(reconcileByKey(reconcile, { concurrency: 10, logger: silentLogger }));
      // Three triggers during the first run make one more run, not three.
      expectObservable(out).toBe('------a----(a|)', { a: ok('a', 5) });
      flush();
      expect(seen.maxPerKey).to.equal(1);
      expect(seen.starts).to.deep.equal(['a', 'a']);
    });
  });

  it('reconciles the state that a trigger during a run announced: the last run starts after the last trigger', () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      let version = 1;
      const seenVersions: number[] = [];
      const reconcile = () =>
        defer(() => {
          seenVersions.push(version);
          return work(4);
        });
      // The object changes to version 2 at frame 3, while version 1 is being reconciled.
      const keys = cold('-a-a---|').pipe(
        map((key, i) => {
          version = i + 1;
          return key;
        }),
      );
      expectObservable(keys.pipe(reconcileByKey(reconcile, { logger: silentLogger }))).toBe('-----a---(a|)', {
        a: ok('a', 4),
      });
      flush();
      expect(seenVersions).to.deep.equal([1, 2]);
    });
  });

  it('coalesces any number of triggers of a waiting key into one run', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const out = cold('-baaaaa------|').pipe(reconcileByKey(() => work(10), { logger: silentLogger }));
      expectObservable(out).toBe('-----------b---------(a|)', { a: ok('a', 10), b: ok('b', 10) });
    });
  });

  it('keeps at most `concurrency` runs in flight over all keys', () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const { reconcile, seen } = tracker(() => 4);
      const out = cold('-abcdef--------|').pipe(reconcileByKey(reconcile, { concurrency: 2, logger: silentLogger }));
      expectObservable(out).toBe('-----ab--cd--ef|', {
        a: ok('a', 4),
        b: ok('b', 4),
        c: ok('c', 4),
        d: ok('d', 4),
        e: ok('e', 4),
        f: ok('f', 4),
      });
      flush();
      expect(seen.maxInFlight).to.equal(2);
    });
  });

  it('starts waiting keys in the order they were first triggered, not last', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const reconcile = (key: string) => work(key === 'x' ? 10 : 2);
      // c, b, c again, a: c keeps its place at the front.
      const out = cold('-xcbca-------------|').pipe(reconcileByKey(reconcile, { logger: silentLogger }));
      expectObservable(out).toBe('-----------x-c-b-a-|', { x: ok('x', 10), c: ok('c', 2), b: ok('b', 2), a: ok('a', 2) });
    });
  });

  it('puts a key triggered during its run behind the keys already waiting', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const out = cold('-aba------|').pipe(reconcileByKey(() => work(3), { logger: silentLogger }));
      expectObservable(out).toBe('----a--b--(a|)', { a: ok('a', 3), b: ok('b', 3) });
    });
  });

  it('accepts a reconcile that returns nothing, a result, a promise or an array (its last value counts)', async () => {
    const results = await new Promise<ReconcileOutcome[]>((resolve, reject) => {
      const out: ReconcileOutcome[] = [];
      from(['plain', 'promise', 'array'])
        .pipe(
          reconcileByKey(
            (key) => {
              if (key === 'plain') return { requeue: false };
              if (key === 'promise') return Promise.resolve();
              return [{ requeueAfter: 0 }, {}];
            },
            { concurrency: 3, logger: silentLogger },
          ),
        )
        .subscribe({ next: (o) => out.push(o), error: reject, complete: () => resolve(out) });
    });
    expect(results.map((o) => [o.key, o.result])).to.have.deep.members([
      ['plain', 'success'],
      ['promise', 'success'],
      ['array', 'success'],
    ]);
  });

  it('runs a reconcile that finishes synchronously at once, without waiting for the scheduler', () => {
    const out: ReconcileOutcome[] = [];
    from(['a', 'b', 'a'])
      .pipe(reconcileByKey(() => undefined, { logger: silentLogger }))
      .subscribe((o) => out.push(o));
    expect(out.map((o) => o.key)).to.deep.equal(['a', 'b', 'a']);
  });

  it('drains a long queue of synchronous reconciles in a loop, not a recursion as deep as the queue', () => {
    testScheduler().run(({ flush }) => {
      const keys = Array.from({ length: 100_000 }, (_, i) => `ns/k${i}`);
      let outcomes = 0;
      // The first run is asynchronous, so all other keys queue behind it; then
      // they all finish synchronously, one after another.
      from(keys)
        .pipe(reconcileByKey((key) => (key === 'ns/k0' ? work(1) : undefined), { logger: silentLogger }))
        .subscribe(() => outcomes++);
      flush();
      expect(outcomes).to.equal(100_000);
    });
  });

  it('stops a synchronous source as soon as the output is unsubscribed', () => {
    let read = 0;
    const out: ReconcileOutcome[] = [];
    from(Array.from({ length: 1000 }, (_, i) => `k${i}`))
      .pipe(
        map((k) => {
          read++;
          return k;
        }),
        reconcileByKey(() => undefined, { logger: silentLogger }),
        take(2),
      )
      .subscribe((o) => out.push(o));
    expect(out.map((o) => o.key)).to.deep.equal(['k0', 'k1']);
    expect(read).to.equal(2);
  });
});
