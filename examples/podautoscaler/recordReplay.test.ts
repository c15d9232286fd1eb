import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replay, replayReport, type ReplayResult } from 'rxkube/testing';
import { offByOne, reconcile, replayOptions } from './forReplay.js';

const root = new URL('../..', import.meta.url).pathname;
const children = new Set<ChildProcess>();

/** A program in its own process, as a user runs it; resolves with its output and exit code. */
function run(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.KUBECONFIG;
    const proc = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(proc);
    let out = '';
    let err = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => {
      children.delete(proc);
      resolve({ code, out, err });
    });
  });
}

const scaled = /^Normal Scaled: scaled deployment "[^"]+" from (\d+) to (\d+) replicas$/;

describe('record the main job, then replay it (the flight recorder)', function () {
  this.timeout(300_000);
  let dir: string;
  let recording: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-record-main-'));
    recording = join(dir, 'run.jsonl');
    const job = await run(['--import', 'tsx', 'examples/main.ts', '--pace', '0', '--record', recording]);
    expect(job.code, job.out + job.err).to.equal(0);
  });
  after(async () => {
    for (const proc of children) proc.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('replays every run of the main job with its own reconcile: 0 differ, and again the same', async () => {
    const once = await replay(recording, { ...replayOptions, reconcile });
    expect(once.error).to.equal(undefined);
    expect(once.warnings).to.deep.equal([]);
    expect(once.replayed).to.be.greaterThan(20);
    expect(replayReport(once)).to.equal(`${once.replayed} runs replayed, 0 differ`);
    // Scalings were among them: the recording is of a job that did something.
    expect(once.runs.flatMap((r) => r.replayed?.steps ?? []).filter((s) => scaled.test(s.text)).length).to.be.greaterThan(3);
    const again = await replay(recording, { ...replayOptions, reconcile });
    expect(again).to.deep.equal(once);
  });

  it('shows what an off-by-one in the desired replicas would have done: each scaling asks for one more', async () => {
    const result: ReplayResult = await replay(recording, { ...replayOptions, reconcile: offByOne });
    expect(result.differ).to.be.greaterThan(0);
    const differing = result.runs.filter((r) => r.compared && !r.same);
    // The first run that differs is a scaling: the same patch, answered as recorded, but the Event says one more.
    const first = differing[0];
    const recordedScale = first?.recorded?.steps.map((s) => scaled.exec(s.text)).find(Boolean);
    const replayedScale = first?.replayed?.steps.map((s) => scaled.exec(s.text)).find(Boolean);
    expect(recordedScale, replayReport(result).slice(0, 3000)).to.not.equal(undefined);
    expect(Number(replayedScale?.[2])).to.equal(Number(recordedScale?.[2]) + 1);
    // The report shows it as two timelines.
    expect(replayReport(result)).to.match(new RegExp(`^${result.replayed} runs replayed, ${result.differ} differ\\n\\nrun \\d+ of \\S+ \\(attempt \\d+, at \\d+ ms\\) differs\\n  recorded:\\n`));
  });

  it('rxkube replay, in its own process, says the same (exit 0), and shows the bug (exit 1)', async () => {
    const same = await run(['bin/rxkube.js', 'replay', recording, '--reconcile', 'examples/podautoscaler/forReplay.ts']);
    expect(same.err).to.equal('');
    expect(same.code).to.equal(0);
    expect(same.out).to.match(/^\d+ runs replayed, 0 differ\n$/);
    const buggy = await run(['bin/rxkube.js', 'replay', recording, '--reconcile', 'examples/podautoscaler/forReplay.ts', '--export', 'offByOne']);
    expect(buggy.code).to.equal(1);
    expect(buggy.out).to.match(/^\d+ runs replayed, [1-9]\d* differ\n\nrun /);
  });

  it('replays a recording cut in the middle of its last line (a crash mid-write) with a warning', async () => {
    const text = await readFile(recording, 'utf8');
    const cut = join(dir, 'cut.jsonl');
    // Halfway into the last line.
    const lastLine = text.slice(0, -1).lastIndexOf('\n') + 1;
    await writeFile(cut, text.slice(0, lastLine + Math.floor((text.length - lastLine) / 2)));
    const lines = text.slice(0, -1).split('\n').length;
    const result = await replay(cut, { ...replayOptions, reconcile });
    expect(result.warnings).to.deep.equal([`${cut}:${lines}: the last line is cut off (the recorder stopped mid-write); ignored`]);
    expect(result.differ).to.equal(0);
  });
});
