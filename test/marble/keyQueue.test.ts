import { expect } from 'chai';
import { KeyQueue, type KeyEntry } from '../../src/operators/keyQueue.js';

type Entry = KeyEntry<string, string>;

function queue(concurrency: number, options: { maxRetries?: number; timeouts?: boolean } = {}) {
  const q = new KeyQueue<string, string>({ concurrency, ...options });
  /** Takes every key a free worker can start, in order. */
  const takeAll = (now: number): string[] => {
    const started: string[] = [];
    for (let e = q.take(now); e !== undefined; e = q.take(now)) started.push(e.key);
    q.checkInvariants();
    return started;
  };
  const entry = (key: string): Entry => {
    const e = q.get(key);
    if (e === undefined) throw new Error(`no entry for ${key}`);
    return e;
  };
  const sizes = () => ({ keys: q.keys, waiting: q.waiting, running: q.running, delayed: q.delayed });
  return { q, takeAll, entry, sizes };
}

describe('KeyQueue: the pure state of the workqueue', () => {
  it('starts a key that finds a free worker at once, and queues the rest in the order they were first triggered', () => {
    const { q, takeAll, sizes } = queue(1);
    expect(q.trigger('a', 0, true)).to.include({ key: 'a', phase: 'running', dirty: false, waited: 0 });
    expect(q.trigger('c', 1, true)).to.include({ phase: 'waiting' });
    expect(q.trigger('b', 2, true)).to.include({ phase: 'waiting' });
    expect(q.trigger('c', 3, true), 'c coalesces into its pending run').to.equal(undefined);
    q.checkInvariants();
    expect(sizes()).to.deep.equal({ keys: 3, waiting: 2, running: 1, delayed: 0 });
    expect(takeAll(4), 'no worker is free').to.deep.equal([]);
    expect(q.finish(q.get('a') as Entry, 5, 'success', -1)).to.equal('idle');
    expect(q.get('a'), 'an idle key has no state').to.equal(undefined);
    const c = q.take(6);
    expect(c).to.include({ key: 'c', waited: 5, since: 6 });
    expect(takeAll(6)).to.deep.equal([]);
  });

  it('queues a fresh key when the shell is already starting runs, even with a worker free', () => {
    const { q, takeAll } = queue(2);
    expect(q.trigger('a', 0, false)).to.include({ phase: 'waiting' });
    expect(takeAll(0)).to.deep.equal(['a']);
  });

  it('never lets a fresh key overtake keys that are already waiting', () => {
    const { q, takeAll } = queue(2);
    q.trigger('a', 0, true);
    q.trigger('b', 0, true);
    q.trigger('c', 0, true);
    q.finish(q.get('a') as Entry, 1, 'success', -1);
    // A worker is free, but c waits ahead of d.
    expect(q.trigger('d', 1, true)).to.include({ phase: 'waiting' });
    expect(takeAll(1)).to.deep.equal(['c']);
  });

  it('marks a key triggered during its run once, and runs it once more behind the keys already waiting', () => {
    const { q, takeAll, entry } = queue(1);
    q.trigger('a', 0, true);
    q.trigger('b', 1, true);
    expect(q.trigger('a', 2, true)).to.include({ phase: 'running', dirty: true });
    expect(q.trigger('a', 3, true), 'already marked').to.equal(undefined);
    expect(q.finish(entry('a'), 4, 'success', -1)).to.equal('again');
    expect(entry('a')).to.include({ phase: 'waiting', dirty: false, since: 4 });
    expect(takeAll(4)).to.deep.equal(['b']);
    q.finish(entry('b'), 5, 'success', -1);
    expect(takeAll(5)).to.deep.equal(['a']);
  });

  it('judges a failure an error until maxRetries retries are behind it, then dropped', () => {
    const { q, entry } = queue(1, { maxRetries: 1 });
    q.trigger('a', 0, true);
    expect(q.judge(entry('a'), 'failure')).to.equal('error');
    expect(q.finish(entry('a'), 1, 'error', 10)).to.equal('delayed');
    expect(entry('a')).to.include({ attempt: 1, phase: 'delayed', since: 1 });
    q.wake(entry('a'), 11);
    q.take(11);
    expect(q.judge(entry('a'), 'failure')).to.equal('dropped');
    expect(q.judge(entry('a'), 'requeue'), 'requeue: true is never dropped').to.equal('requeue');
    expect(q.judge(entry('a'), 'requeueAfter')).to.equal('requeue_after');
    expect(q.judge(entry('a'), 'success')).to.equal('success');
    expect(q.finish(entry('a'), 12, 'dropped', -1)).to.equal('idle');
    expect(q.keys).to.equal(0);
  });

  it('counts rate-limited reruns in attempt, and forgets them on success or requeue_after', () => {
    const { q, entry, takeAll } = queue(1);
    q.trigger('a', 0, true);
    expect(q.finish(entry('a'), 1, 'requeue', 0), 'a rerun without delay').to.equal('queued');
    expect(entry('a')).to.include({ attempt: 1, phase: 'waiting' });
    takeAll(1);
    q.finish(entry('a'), 2, 'error', 0);
    expect(entry('a').attempt).to.equal(2);
    takeAll(2);
    expect(q.finish(entry('a'), 3, 'requeue_after', 50)).to.equal('delayed');
    expect(entry('a').attempt).to.equal(0);
  });

  it('brings a delayed key forward on a trigger: wake hands back its timer to cancel and queues it behind the waiting keys', () => {
    const { q, entry, takeAll } = queue(1);
    q.trigger('a', 0, true);
    q.finish(entry('a'), 1, 'error', 100);
    q.arm(entry('a'), 'timer of a');
    q.trigger('x', 2, true);
    q.trigger('y', 3, true);
    expect(q.trigger('a', 4, true), 'the trigger itself changes nothing').to.include({ phase: 'delayed' });
    expect(q.wake(entry('a'), 4)).to.equal('timer of a');
    expect(entry('a')).to.include({ phase: 'waiting', timer: undefined, attempt: 1 });
    expect(q.wake(entry('a'), 5), 'only a delayed key wakes').to.equal(undefined);
    q.finish(entry('x'), 6, 'success', -1);
    expect(takeAll(6)).to.deep.equal(['y']);
  });

  it('runs a key triggered during a run that then fails at once, not after the delay', () => {
    const { q, entry } = queue(1);
    q.trigger('a', 0, true);
    q.trigger('a', 1, true);
    expect(q.finish(entry('a'), 2, 'error', 100)).to.equal('again');
    expect(entry('a')).to.include({ phase: 'waiting', attempt: 1 });
  });

  it('drains when the input completes: delayed keys are dropped, waiting keys and the reruns of triggers during runs still run, reruns asked for are dropped', () => {
    const { q, entry, takeAll, sizes } = queue(1);
    q.trigger('d', 0, true);
    q.finish(entry('d'), 1, 'error', 100);
    q.arm(entry('d'), 'timer of d');
    q.trigger('a', 2, true);
    q.trigger('b', 2, true);
    q.trigger('a', 3, true);
    const dropped = q.complete();
    expect(dropped.map((e) => [e.key, e.timer])).to.deep.equal([['d', 'timer of d']]);
    q.checkInvariants();
    expect(q.mode).to.equal('draining');
    expect(q.trigger('z', 4, true), 'no trigger after the input completed').to.equal(undefined);
    expect(q.finish(entry('a'), 5, 'error', 100), 'triggered during its run').to.equal('again');
    expect(takeAll(5)).to.deep.equal(['b']);
    expect(q.finish(entry('b'), 6, 'requeue_after', 10), 'its rerun will not happen').to.equal('dropped');
    expect(takeAll(6)).to.deep.equal(['a']);
    expect(q.done).to.equal(false);
    q.finish(entry('a'), 7, 'success', -1);
    expect(sizes()).to.deep.equal({ keys: 0, waiting: 0, running: 0, delayed: 0 });
    expect(q.done).to.equal(true);
  });

  it('stops: waiting and delayed keys are dropped, nothing starts, runs in flight finish without reruns', () => {
    const { q, entry, takeAll } = queue(2);
    q.trigger('a', 0, true);
    q.trigger('b', 0, true);
    q.trigger('c', 0, true);
    q.trigger('d', 0, true);
    q.trigger('a', 1, true); // a is dirty
    q.finish(entry('b'), 2, 'error', 100);
    q.arm(entry('b'), 'timer of b');
    takeAll(2); // c starts; d waits
    const dropped = q.stop();
    expect(dropped.map((e) => [e.key, e.phase, e.timer])).to.have.deep.members([
      ['b', 'delayed', 'timer of b'],
      ['d', 'waiting', undefined],
    ]);
    q.checkInvariants();
    expect(entry('a').dirty, 'the rerun a trigger asked for will not happen').to.equal(false);
    expect(q.trigger('e', 3, true)).to.equal(undefined);
    expect(q.finish(entry('a'), 4, 'success', -1)).to.equal('idle');
    expect(takeAll(4)).to.deep.equal([]);
    expect(q.done).to.equal(false);
    expect(q.finish(entry('c'), 5, 'requeue', 0)).to.equal('dropped');
    expect(q.done).to.equal(true);
  });

  it('is done at once when stopped or completed with nothing in flight', () => {
    const stopped = queue(1).q;
    stopped.stop();
    expect(stopped.done).to.equal(true);
    const completed = queue(1).q;
    completed.complete();
    expect(completed.done).to.equal(true);
    expect(queue(1).q.done, 'an open queue is never done').to.equal(false);
  });

  it('holds the timeout of a running key and hands it back on disarm', () => {
    const { q, entry } = queue(1, { timeouts: true });
    q.trigger('a', 0, true);
    q.arm(entry('a'), 'timeout of a');
    q.checkInvariants();
    expect(q.disarm(entry('a'))).to.equal('timeout of a');
    expect(q.disarm(entry('a'))).to.equal(undefined);
  });

  it('clears everything, returning what it held', () => {
    const { q, entry, sizes } = queue(1);
    q.trigger('a', 0, true);
    q.trigger('b', 0, true);
    entry('a').run = 'run of a';
    expect(q.clear().map((e) => [e.key, e.run])).to.have.deep.members([
      ['a', 'run of a'],
      ['b', undefined],
    ]);
    expect(sizes()).to.deep.equal({ keys: 0, waiting: 0, running: 0, delayed: 0 });
    q.checkInvariants();
  });

  it('refuses to finish a key that is not running', () => {
    const { q, entry } = queue(1);
    q.trigger('a', 0, true);
    q.trigger('b', 0, true);
    expect(() => q.finish(entry('b'), 1, 'success', -1)).to.throw('KeyQueue.finish: "b" is not running but waiting');
  });

  it('checkInvariants names what is broken', () => {
    const timerOnWaiting = queue(1);
    timerOnWaiting.q.trigger('a', 0, true);
    timerOnWaiting.q.trigger('b', 0, true);
    timerOnWaiting.q.arm(timerOnWaiting.entry('b'), 't');
    expect(() => timerOnWaiting.q.checkInvariants()).to.throw('KeyQueue invariant broken: "b" holds a timer while waiting');

    const runOnWaiting = queue(1);
    runOnWaiting.q.trigger('a', 0, true);
    runOnWaiting.q.trigger('b', 0, true);
    runOnWaiting.entry('b').run = 'r';
    expect(() => runOnWaiting.q.checkInvariants()).to.throw('"b" holds a run while waiting');

    const timeoutWithout = queue(1);
    timeoutWithout.q.trigger('a', 0, true);
    timeoutWithout.q.arm(timeoutWithout.entry('a'), 't');
    expect(() => timeoutWithout.q.checkInvariants()).to.throw('"a" holds a timer while running without a timeout');
  });
});
