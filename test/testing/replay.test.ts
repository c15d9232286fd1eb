import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replay, replayReport } from '../../src/testing/index.js';
import { counter, entries, header, recording, t0 } from '../fixtures/counterRecording.js';

describe('replay (rxkube/testing)', () => {
  it('replays the recorded reconcile to the same runs: 0 differ, in the recorded time, with the recorded answers', async () => {
    const seen = { at: [] as number[], objects: [] as unknown[] };
    const result = await replay(recording, { reconcile: counter('1', seen) });
    expect(result.differ).to.equal(0);
    expect(result.replayed).to.equal(3);
    expect(replayReport(result)).to.equal('3 runs replayed, 0 differ');
    // The clock reads the recorded times; each run starts when the recorded one did and sees the cache as it was.
    expect(seen.at).to.deep.equal([t0, t0 + 10, t0 + 40]);
    expect(seen.objects).to.deep.equal(['1', '2', '2']);
    expect(result.runs.map((r) => [r.run, r.replayed?.start, r.replayed?.end])).to.deep.equal([
      [1, t0, t0 + 7],
      [2, t0 + 10, t0 + 13],
      [3, t0 + 40, t0 + 42],
    ]);
    expect(result.runs[0]?.replayed?.steps).to.deep.equal([
      { at: t0 + 3, text: 'get ConfigMap default/a' },
      { at: t0 + 5, text: 'patchMerge ConfigMap default/a' },
      { at: t0 + 5, text: 'Normal Counted: set count to 1' },
      { at: t0 + 7, text: 'default/a success' },
    ]);
    expect(result.runs[2]?.replayed?.steps.map((s) => s.text)).to.deep.equal(['get ConfigMap default/a 404', 'default/a success']);
  });

  it('shows what a changed reconcile would have done: each run that differs, as two timelines', async () => {
    const result = await replay(recording, { reconcile: counter('2') });
    const [first, second] = result.runs;
    expect(first?.same).to.equal(false);
    expect(first?.replayed?.steps.map((s) => s.text)).to.deep.equal(['get ConfigMap default/a', 'patchMerge ConfigMap default/a', 'Normal Counted: set count to 2', 'default/a success']);
    expect(second?.same).to.equal(false);
    expect(second?.replayed?.steps.map((s) => s.text)).to.deep.equal([
      'get ConfigMap default/a',
      'patchMerge ConfigMap default/a (not recorded)',
      'default/a error: replay: run 2 of "default/a" made a request the recording did not: patchMerge ConfigMap default/a (the recorded run made: get ConfigMap default/a)',
    ]);
    // The error is retried 5 ms later (the default limiter's first step): that is the third run, paired with the
    // recorded third one, whose answers it gets (alike: times are not compared), and which it lasts as long as (to 42 ms);
    // the recorded trigger at 40 ms comes during it and makes a fourth, which the recording lacks.
    expect(result.runs.slice(2).map((r) => [r.run, r.replayed?.start, r.same, r.replayed?.steps.at(-1)?.text])).to.deep.equal([
      [3, t0 + 18, true, 'default/a success'],
      [4, t0 + 42, false, 'default/a error: replay: run 4 of "default/a" made a request the recording did not: get ConfigMap default/a (the recording has no such run)'],
    ]);
    expect(result.runs[3]?.recorded).to.equal(undefined);
    // Attempts count as the timeline counts them: from 1, the retry after the failure is the second.
    expect(result.runs.map((r) => r.replayed?.attempt)).to.deep.equal([1, 1, 2, 1]);
    expect(result.differ).to.equal(3);
    const report = replayReport(result);
    expect(report.split('\n')[0]).to.equal(`${result.replayed} runs replayed, ${result.differ} differ`);
    expect(report).to.include(
      [
        'run 1 of default/a (attempt 1, at 1 ms) differs',
        '  recorded:',
        '    3ms  get ConfigMap default/a',
        '    5ms  patchMerge ConfigMap default/a',
        '    6ms  Normal Counted: set count to 1',
        '    7ms  default/a success',
        '  replayed:',
        '    3ms  get ConfigMap default/a',
        '    5ms  patchMerge ConfigMap default/a',
        '    5ms  Normal Counted: set count to 2',
        '    7ms  default/a success',
      ].join('\n'),
    );
  });

  it('is deterministic: the same recording and reconcile give the same result', async () => {
    const once = await replay(recording, { reconcile: counter('2') });
    const again = await replay(recording, { reconcile: counter('2') });
    expect(again).to.deep.equal(once);
    expect(replayReport(again)).to.equal(replayReport(once));
  });

  it('reads a recording from its file, and a cut-off last line replays with a warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rxkube-replay-'));
    try {
      const path = join(dir, 'run.jsonl');
      const text = [header, ...entries].map((e) => JSON.stringify(e)).join('\n');
      await writeFile(path, `${text}\n{"type":"run-start","at":17000`);
      const result = await replay(path, { reconcile: counter('1') });
      expect(result.differ).to.equal(0);
      expect(result.warnings).to.deep.equal([`${path}:${entries.length + 2}: the last line is cut off (the recorder stopped mid-write); ignored`]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('does not compare a run the recording stopped in the middle of', async () => {
    const cut = entries.slice(0, entries.length - 1);
    const result = await replay({ ...recording, entries: cut }, { reconcile: counter('1') });
    expect(result.runs.at(-1)).to.include({ run: 3, compared: false });
    expect(result.replayed).to.equal(2);
    expect(result.differ).to.equal(0);
  });

  it('refuses options without a reconcile', async () => {
    let message = '';
    await replay(recording, {} as never).catch((err: Error) => (message = err.message));
    expect(message).to.equal('replay needs options with a reconcile function');
  });
});

describe('replay: virtual time in proportion to the entries', () => {
  const farEntry = (after: number) => ({ type: 'informer', at: t0 + after, controller: 'counter', resource: 'configmaps', event: 'Bookmark', resourceVersion: '99' }) as (typeof entries)[number];
  const withResync = (after: number) => ({ ...recording, header: { ...header, options: { ...header.options, resyncPeriod: 1000 } }, entries: [...entries, farEntry(after)] });

  it('steps through each resync period of a recording within the bound: one run of the key per period', async () => {
    const plain = await replay({ ...recording, entries: [...entries, farEntry(20_000)] }, { reconcile: counter('1') });
    const resynced = await replay(withResync(20_000), { reconcile: counter('1') });
    // 20 s after the start under a 1 s resync: a run of the one key per period (and those of the shutdown's grace), not one per ms.
    expect(resynced.outcomes.length - plain.outcomes.length).to.be.within(20, 60);
  });

  it('refuses a recording whose last entry is 31 years after the rest, naming it, before stepping once', async () => {
    const error = await replay(withResync(31 * 365 * 24 * 3600 * 1000), { reconcile: counter('1') }).catch((err: Error) => err);
    expect((error as Error).name).to.equal('RecordingError');
    expect((error as Error).message).to.match(new RegExp(`^entry ${entries.length + 1}: at \\d+ is 977616000000 ms after the recording's start`));
  });
});
