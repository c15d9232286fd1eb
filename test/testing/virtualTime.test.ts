import { expect } from 'chai';
import { timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { runVirtualTime } from 'rxkube/testing';

const scheduler = () => new TestScheduler(() => undefined);
const sleep = (s: TestScheduler, ms: number) => new Promise<void>((resolve) => s.schedule(() => resolve(), ms));

describe('runVirtualTime', () => {
  it('resumes an async function at the virtual time its awaited timer fired', async () => {
    const s = scheduler();
    const seen: number[] = [];
    void (async () => {
      await sleep(s, 10);
      seen.push(s.now());
      await Promise.resolve();
      await sleep(s, 5);
      seen.push(s.now());
    })();
    const stop = await runVirtualTime(s);
    expect(seen).to.deep.equal([10, 15]);
    expect(stop).to.deep.include({ reason: 'idle', frame: 15 });
  });

  it('lets the promise callbacks of one action run before the next action of the same frame, as separate timers would', async () => {
    const s = scheduler();
    const order: string[] = [];
    s.schedule(() => void Promise.resolve().then(() => order.push('continuation of the first')), 3);
    s.schedule(() => order.push('second timer'), 3);
    await runVirtualTime(s);
    expect(order).to.deep.equal(['continuation of the first', 'second timer']);
  });

  it('stops before the first action due after `until` and sets the clock to it', async () => {
    const s = scheduler();
    const fired: number[] = [];
    for (const ms of [5, 10, 20]) timer(ms, s).subscribe(() => fired.push(ms));
    const stop = await runVirtualTime(s, { until: 12 });
    expect(fired).to.deep.equal([5, 10]);
    expect(stop).to.deep.include({ reason: 'until', frame: 12 });
  });

  it('stops as soon as `stopWhen` holds, after the step that made it true', async () => {
    const s = scheduler();
    let done = false;
    s.schedule(() => (done = true), 4);
    s.schedule(() => undefined, 9);
    const stop = await runVirtualTime(s, { stopWhen: () => done });
    expect(stop).to.deep.include({ reason: 'stopped', frame: 4 });
    expect(s.actions).to.have.length(1);
  });

  it('gives up with a message that says what to do when time never goes idle', async () => {
    const s = scheduler();
    const tick = () => s.schedule(tick, 1000);
    tick();
    let error: unknown;
    await runVirtualTime(s, { maxTime: 10_000 }).catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/still busy after 10 actions at 10000 ms \(the next is due at 11000 ms.*give the run an end with `until`/);
  });
});
