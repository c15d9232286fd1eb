import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import { coldMarbles, hotMarbles, marbleTime, parseMarbles, runVirtualTime } from 'rxkube/testing';

const scheduler = () => new TestScheduler(() => undefined);

/** Subscribes at the current frame and runs virtual time to the end, noting each value's frame. */
async function collect<T>(s: TestScheduler, source: import('rxjs').Observable<T>): Promise<string[]> {
  const seen: string[] = [];
  source.subscribe({
    next: (v) => seen.push(`${s.now()}:${String(v)}`),
    error: (e: unknown) => seen.push(`${s.now()}:#${e instanceof Error ? e.message : String(e)}`),
    complete: () => seen.push(`${s.now()}:|`),
  });
  await runVirtualTime(s);
  return seen;
}

describe('marble diagrams of rxkube/testing', () => {
  it('reads the syntax of TestScheduler.run: 1 frame per ms, spaces ignored, time progressions, groups', () => {
    const frames = parseMarbles('a 9ms (bc) - d|').map((m) => [m.frame, m.notification.kind === 'N' ? m.notification.value : m.notification.kind]);
    expect(frames).to.deep.equal([
      [0, 'a'],
      [10, 'b'],
      [10, 'c'],
      [15, 'd'],
      [16, 'C'],
    ]);
  });

  it('leaves the frame length of TestScheduler as it found it', () => {
    const before = TestScheduler.frameTimeFactor;
    parseMarbles('a-b');
    expect(TestScheduler.frameTimeFactor).to.equal(before);
  });

  it('names a letter that has no value instead of emitting undefined', () => {
    expect(() => parseMarbles('a-x', { a: 1 })).to.throw(`marble diagram 'a-x': "x" has no value (the values have "a")`);
  });

  it('refuses a subscription point, which has no meaning for a run that starts at frame 0', () => {
    expect(() => parseMarbles('-^-a')).to.throw(/subscription point/);
  });

  it('plays a cold diagram from the frame each subscriber came', async () => {
    const s = scheduler();
    const cold = coldMarbles(s, '-a 2ms b|');
    const seen: string[] = [];
    const subscribeAt = (frame: number) =>
      s.schedule(() => cold.subscribe({ next: (v) => seen.push(`${s.now()}:${v}`), complete: () => seen.push(`${s.now()}:|`) }), frame);
    subscribeAt(0);
    subscribeAt(10);
    await runVirtualTime(s);
    expect(seen).to.deep.equal(['1:a', '4:b', '5:|', '11:a', '14:b', '15:|']);
  });

  it('errors a cold diagram at "#" with the error given', async () => {
    const s = scheduler();
    expect(await collect(s, coldMarbles(s, '--#', undefined, new Error('watch failed')))).to.deep.equal(['2:#watch failed']);
  });

  it('plays a hot diagram on the frames of the run, whoever subscribes late', async () => {
    const s = scheduler();
    const hot = hotMarbles(s, 'a-b-c');
    const seen: string[] = [];
    s.schedule(() => hot.subscribe((v) => seen.push(`${s.now()}:${v}`)), 1);
    await runVirtualTime(s);
    expect(seen).to.deep.equal(['2:b', '4:c']);
  });

  it('gives the frame of the completion marker as a time', () => {
    expect(marbleTime('---|')).to.equal(3);
    expect(marbleTime('1s |')).to.equal(1000);
    expect(() => marbleTime('---')).to.throw(/completion marker/);
  });
});
