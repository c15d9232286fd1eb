import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRecording, RecordingError } from '../../../src/observe/recording/readRecording.js';

const header = (part = 0, start = 1000) =>
  JSON.stringify({ type: 'header', format: 'rxkube-recording', version: 1, controller: 'c', start, part, options: { for: { version: 'v1', resource: 'configmaps', kind: 'ConfigMap' }, owns: [], watches: [], concurrency: 1, redactSecrets: true } });
const entry = (at: number) => JSON.stringify({ type: 'run-start', at, controller: 'c', key: 'default/a', attempt: 1 });

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('readRecording', () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-read-'));
    path = join(dir, 'run.jsonl');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('ignores a cut-off last line (a crash mid-write) with a warning naming the file and line', async () => {
    await writeFile(path, `${header()}\n${entry(1)}\n${entry(2).slice(0, 25)}`);
    const warned: unknown[] = [];
    const read = await readRecording(path, { logger: { debug() {}, info() {}, warn: (_f, m) => warned.push(m), error() {} } });
    expect(read.entries).to.deep.equal([JSON.parse(entry(1))]);
    expect(read.warnings).to.deep.equal([`${path}:3: the last line is cut off (the recorder stopped mid-write); ignored`]);
    expect(warned).to.deep.equal(read.warnings);
  });

  it('reads a last line without its newline when it is whole', async () => {
    await writeFile(path, `${header()}\n${entry(1)}`);
    const read = await readRecording(path);
    expect(read.entries).to.have.length(1);
    expect(read.warnings).to.deep.equal([]);
  });

  it('refuses a malformed line elsewhere, naming the file and line', async () => {
    await writeFile(path, `${header()}\n${entry(1)}\n{"type":"run-st\n${entry(3)}\n`);
    const err = await rejection(readRecording(path));
    expect(err).to.be.instanceOf(RecordingError);
    expect(err.message).to.match(new RegExp(`^${path.replace(/[.]/g, '\\.')}:3: not a JSON line`));
  });

  it('refuses a cut-off last line in a rotated file, which a crash cannot leave', async () => {
    await writeFile(`${path}.1`, `${header(0)}\n${entry(1)}\n{"type"`);
    await writeFile(path, `${header(1)}\n${entry(2)}\n`);
    expect((await rejection(readRecording(path))).message).to.match(/run\.jsonl\.1:3: not a JSON line \(/);
  });

  it('refuses a line that is JSON but no entry, a file without the header, and a rotated file of another recording', async () => {
    await writeFile(path, `${header()}\n[1,2]\n`);
    expect((await rejection(readRecording(path))).message).to.equal(`${path}:2: not a timeline entry (an object with a "type")`);
    await writeFile(path, `${entry(1)}\n`);
    expect((await rejection(readRecording(path))).message).to.equal(`${path}:1: not an rxkube recording (the first line is no "rxkube-recording" header)`);
    await writeFile(path, `${header().replace('"version":1', '"version":9')}\n`);
    expect((await rejection(readRecording(path))).message).to.equal(`${path}:1: recording format version 9 is not supported (this rxkube reads version 1)`);
    await writeFile(`${path}.1`, `${header(0, 5)}\n`);
    await writeFile(path, `${header(1)}\n`);
    expect((await rejection(readRecording(path))).message).to.equal(`${path}:1: belongs to another recording (controller "c" started at 1000, not "c" at 5)`);
  });

  it('says a missing recording does not exist', async () => {
    expect((await rejection(readRecording(join(dir, 'nope.jsonl')))).message).to.equal(`no recording at ${join(dir, 'nope.jsonl')}: the file does not exist`);
  });

  it('reads rotated files oldest first (the highest number first, numerically: 10 before 9)', async () => {
    await writeFile(`${path}.10`, `${header(0)}\n${entry(1)}\n`);
    await writeFile(`${path}.9`, `${header(1)}\n${entry(2)}\n`);
    await writeFile(path, `${header(2)}\n${entry(3)}\n`);
    const read = await readRecording(path);
    expect(read.entries.map((e) => e.at)).to.deep.equal([1, 2, 3]);
    expect(read.files).to.deep.equal([`${path}.10`, `${path}.9`, path]);
  });
});
