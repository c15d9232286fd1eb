import { expect } from 'chai';
import { map, timer, type Observable } from 'rxjs';
import { LOW_PRIORITY, NORMAL_PRIORITY, reconcileByKey, silentLogger, type KeyTrigger, type ReconcileResult, type WorkqueueObserver } from 'rxkube';
import { testScheduler } from '../support/objects.js';

/** A reconcile that takes `frames` of virtual time and succeeds. */
const work = (frames: number): Observable<undefined> => timer(frames).pipe(map(() => undefined));

const low = (key: string): KeyTrigger => ({ key, priority: LOW_PRIORITY });
const normal = (key: string): KeyTrigger => ({ key, priority: NORMAL_PRIORITY });

/** The keys in the order their runs started, each with its start frame, for triggers at the frames given. */
function startsOf(
  triggers: Record<string, KeyTrigger>,
  marbles: string,
  options: { frames?: number; aging?: number; concurrency?: number; reconcile?: (key: string, n: number) => Observable<ReconcileResult | undefined> } = {},
): string[] {
  const starts: string[] = [];
  testScheduler().run(({ cold, flush }) => {
    let n = 0;
    cold(marbles, triggers)
      .pipe(
        reconcileByKey(
          (key) => {
            starts.push(key);
            return options.reconcile?.(key, n++) ?? work(options.frames ?? 3);
          },
          { logger: silentLogger, concurrency: options.concurrency ?? 1, ...(options.aging !== undefined ? { aging: options.aging } : {}) },
        ),
      )
      .subscribe();
    flush();
  });
  return starts;
}

describe('reconcileByKey: priorities', () => {
  it('runs waiting keys in priority order, higher first (the diagram of its doc comment)', () => {
    // x runs 1–3; l (low), n (normal) and h (priority 10) wait for the worker.
    const order = startsOf({ x: 'x', l: low('l'), n: 'n', h: { key: 'h', priority: 10 } }, '-xlnh');
    expect(order).to.deep.equal(['x', 'h', 'n', 'l']);
  });

  it('runs keys of one priority in the order they were first triggered', () => {
    const order = startsOf({ x: 'x', a: low('a'), b: normal('b'), c: low('c'), d: 'd', e: low('e') }, '-xabcdeca', { frames: 20 });
    expect(order).to.deep.equal(['x', 'b', 'd', 'a', 'c', 'e']);
  });

  it('moves a waiting key up when it is triggered again at a higher priority, behind the keys already waiting there', () => {
    const order = startsOf({ x: 'x', a: low('a'), b: low('b'), n: 'n', B: normal('b') }, '-xabnB', { frames: 20 });
    expect(order).to.deep.equal(['x', 'n', 'b', 'a']);
  });

  it('leaves a waiting key where it is when a higher trigger would rank it later than its wait already does', () => {
    // aging 10: a is low at 1, so it ranks as a normal key triggered at 11; n at 5 is ahead of it.
    // The normal trigger of a at 20 would rank it at 20: it stays at 11, ahead of m (normal, at 15).
    const marbles = `-xa--n${'-'.repeat(9)}m${'-'.repeat(4)}A`;
    const order = startsOf({ x: 'x', a: low('a'), n: 'n', m: 'm', A: normal('a') }, marbles, { frames: 30, aging: 10 });
    expect(order).to.deep.equal(['x', 'n', 'a', 'm']);
  });

  it('ages a waiting key: a low key triggered at t ranks as a normal one triggered at t + aging, ties to the first arrived', () => {
    // aging 10; x runs 0–20, then each run takes 2. l is low at 1: it ranks as a normal key triggered at 11. Normal
    // keys arrive at 3, 5, … : those of 3 … 9 run before l, the one of 11 ties with it and runs after it (l came first).
    const normals = Array.from({ length: 12 }, (_, i) => String.fromCharCode(65 + i));
    const marbles = `xl-${normals.map((k) => `${k}-`).join('')}`;
    const triggers: Record<string, KeyTrigger> = { x: 'x', l: low('l') };
    for (const k of normals) triggers[k] = k;
    const order = startsOf(triggers, marbles, { aging: 10, reconcile: (key) => work(key === 'x' ? 20 : 2) });
    const arrivedAt = (k: string) => 3 + 2 * normals.indexOf(k);
    expect(order).to.deep.equal(['x', ...normals.filter((k) => arrivedAt(k) < 11), 'l', ...normals.filter((k) => arrivedAt(k) >= 11)]);
    expect(normals.some((k) => arrivedAt(k) === 11), 'a normal key ties with l').to.equal(true);
  });

  it('starves nothing: without aging a low key waits behind a stream of normal ones; with it, it runs within its bound', () => {
    const normals = Array.from({ length: 40 }, (_, i) => `n${i}`);
    // Triggered every 2 frames, each run 2 frames: the worker never runs dry of normal keys.
    const marbles = `xl${normals.map((_, i) => `${String.fromCharCode(0x4e00 + i)}-`).join('')}`;
    const triggers: Record<string, KeyTrigger> = { x: 'x', l: low('l') };
    normals.forEach((k, i) => (triggers[String.fromCharCode(0x4e00 + i)] = k));
    const strict = startsOf(triggers, marbles, { frames: 2, aging: 1e9 });
    expect(strict.indexOf('l'), 'strict priorities: l runs last').to.equal(strict.length - 1);
    const aged = startsOf(triggers, marbles, { frames: 2, aging: 20 });
    // l waits from 1; from 1 + 20 on nothing new ranks ahead of it, and the keys ahead then are those of 2 … 21 (10 of
    // them), which the one worker runs in 2 frames each: l starts by 21 + (10 + 1) × 2 = 43.
    const ranAt = aged.indexOf('l') * 2; // every run takes 2 frames, back to back from 0
    expect(ranAt).to.be.at.most(43);
    expect(aged.indexOf('l')).to.be.below(aged.length - 1);
  });

  it('runs a key triggered during its run at the highest priority of those triggers, and a rerun it asks for at its own', () => {
    // a (normal) runs 1–20 and is triggered low during it: its rerun is low, behind n (normal).
    const rerun = startsOf({ a: 'a', A: low('a'), n: 'n', l: low('l') }, '-alAn', { frames: 20 });
    expect(rerun).to.deep.equal(['a', 'n', 'l', 'a']);
    // b (low) asks for a requeue: the retry keeps its low priority, behind n (normal), though n came later.
    const requeue = startsOf({ b: low('b'), n: 'n' }, '-bn', {
      frames: 5,
      reconcile: (key, i) => (key === 'b' && i === 0 ? timer(5).pipe(map(() => ({ requeue: true }))) : work(5)),
    });
    expect(requeue).to.deep.equal(['b', 'n', 'b']);
  });

  it('with aging 0, runs waiting keys in arrival order whatever their priority: a plain FIFO', () => {
    const order = startsOf({ x: 'x', a: low('a'), b: normal('b'), h: { key: 'h', priority: 50 }, B: normal('a') }, '-xabhB', { frames: 20, aging: 0 });
    expect(order).to.deep.equal(['x', 'a', 'b', 'h']);
  });

  it('tells the observer the depth at each priority, moves included', () => {
    const calls: string[] = [];
    const observer: WorkqueueObserver = {
      depth: (n) => calls.push(`depth ${n}`),
      priorityDepth: (priority, n) => calls.push(`${priority}: ${n}`),
    };
    testScheduler().run(({ cold, flush }) => {
      cold('-xabB', { x: 'x', a: low('a'), b: low('b'), B: normal('b') })
        .pipe(reconcileByKey(() => work(10), { logger: silentLogger, observer }))
        .subscribe();
      flush();
    });
    expect(calls).to.deep.equal([
      'depth 1',
      '-100: 1', // a waits
      'depth 2',
      '-100: 2', // b waits
      '-100: 1', // b moves up …
      '0: 1', // … to normal: depth unchanged
      'depth 1',
      '0: 0', // b starts (x is done at 11)
      'depth 0',
      '-100: 0', // a starts
    ]);
  });

  it('refuses an aging that is negative or not finite, naming it', () => {
    for (const aging of [-1, Infinity, Number.NaN]) {
      expect(() => reconcileByKey(() => undefined, { aging }), String(aging)).to.throw(RangeError, /aging must be a finite number of ms >= 0/);
    }
  });
});
