import { expect } from 'chai';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../src/cli.js';
import { entries, header } from '../fixtures/counterRecording.js';

const fixtures = new URL('../fixtures/', import.meta.url).pathname;

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (l) => out.push(l), err: (l) => err.push(l), untilStopped: () => new Promise(() => {}) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('rxkube replay (the command, in process)', () => {
  let dir: string;
  let recording: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-replay-cli-'));
    recording = join(dir, 'run.jsonl');
    await writeFile(recording, `${[header, ...entries].map((e) => JSON.stringify(e)).join('\n')}\n`);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('replays with a TypeScript module\'s reconcile and says N runs replayed, M differ; exit 0 when none differs', async () => {
    const { code, out, err } = await cli(['replay', recording, '--reconcile', join(fixtures, 'counterReconcile.ts')]);
    expect({ code, out, err }).to.deep.equal({ code: 0, out: '3 runs replayed, 0 differ', err: '' });
  });

  it('prints each difference as two timelines and exits 1 when runs differ', async () => {
    const { code, out } = await cli(['replay', recording, '--reconcile', join(fixtures, 'counterReconcile.ts'), '--export', 'buggy']);
    expect(code).to.equal(1);
    expect(out.split('\n')[0]).to.match(/^\d+ runs replayed, [1-9]\d* differ$/);
    expect(out).to.include('run 1 of default/a (attempt 1, at 1 ms) differs\n  recorded:\n');
    expect(out).to.include('5ms  Normal Counted: set count to 2');
  });

  it('prints recorded Event notes and error messages with their control characters escaped, as kubectl does (ESC as ^[, BEL as ^G, CR as \\r)', async () => {
    const hostile = join(dir, 'hostile.jsonl');
    const note = 'set count to 1\u001b]0;owned\u0007\u001b[2J\r';
    const changed = entries.map((e) => (e.type === 'event' ? { ...e, message: note } : e.type === 'run-end' && e.at === entries.find((x) => x.type === 'run-end')?.at ? { ...e, result: 'error', error: 'boom\u001b[31m' } : e));
    await writeFile(hostile, `${[header, ...changed].map((e) => JSON.stringify(e)).join('\n')}\n`);
    const { code, out } = await cli(['replay', hostile, '--reconcile', join(fixtures, 'counterReconcile.ts')]);
    expect(code).to.equal(1);
    expect(out).to.include('Normal Counted: set count to 1^[]0;owned^G^[[2J\\r');
    expect(out).to.include('boom^[[31m');
    expect(out).not.to.match(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  });

  const corrupt: [string, (lines: Record<string, unknown>[]) => void, RegExp][] = [
    ['an object that is a string', (l) => Object.assign(l.find((e) => e.type === 'informer' && e.event === 'Listed') as object, { object: 'not an object' }), /:(\d+): entry "informer" Listed: object must be a Kubernetes object, got a string$/],
    ['metadata: null', (l) => Object.assign(l.find((e) => e.type === 'informer' && e.event === 'Listed') as object, { object: { kind: 'ConfigMap', metadata: null } }), /:(\d+): entry "informer" Listed: object.metadata must hold a name, got null$/],
    ['a run without its key', (l) => delete (l.find((e) => e.type === 'run-start') as Record<string, unknown>).key, /:(\d+): entry "run-start": key is malformed, got undefined$/],
    ['concurrency -5 in the header', (l) => ((l[0] as { options: Record<string, unknown> }).options.concurrency = -5), /:(1): the header's options.concurrency must be a positive integer, got -5$/],
    ['for: null in the header', (l) => ((l[0] as { options: Record<string, unknown> }).options.for = null), /:(1): the header's options.for must be a resource \({ group, version, resource, kind }\), got null$/],
  ];
  for (const [what, spoil, message] of corrupt) {
    it(`refuses a recording with ${what}: exit 2, naming the line`, async () => {
      const lines = JSON.parse(JSON.stringify([header, ...entries])) as Record<string, unknown>[];
      spoil(lines);
      const path = join(dir, 'corrupt.jsonl');
      await writeFile(path, `${lines.map((e) => JSON.stringify(e)).join('\n')}\n`);
      const { code, err } = await cli(['replay', path, '--reconcile', join(fixtures, 'counterReconcile.ts')]);
      expect(code, err).to.equal(2);
      const first = err.split('\n')[0] as string;
      expect(first.startsWith(`rxkube replay: ${path}:`), first).to.equal(true);
      const line = Number(message.exec(first)?.[1]);
      expect(line, first).to.be.greaterThan(0);
      expect(JSON.stringify(lines[line - 1])).to.equal((await readFile(path, 'utf8')).split('\n')[line - 1]);
    });
  }

  it('refuses a recording with one entry 31 years after the rest under a 1 s resync: exit 2, naming its line', async () => {
    const far = { type: 'informer', at: (header.start as number) + 31 * 365 * 24 * 3600 * 1000, controller: 'counter', resource: 'configmaps', event: 'Bookmark', resourceVersion: '99' };
    const lines = [{ ...header, options: { ...header.options, resyncPeriod: 1000 } }, ...entries, far];
    const path = join(dir, 'far.jsonl');
    await writeFile(path, `${lines.map((e) => JSON.stringify(e)).join('\n')}\n`);
    const { code, err } = await cli(['replay', path, '--reconcile', join(fixtures, 'counterReconcile.ts')]);
    expect(code, err).to.equal(2);
    expect(err.split('\n')[0]).to.match(new RegExp(`^rxkube replay: ${path}:${lines.length}: at \\d+ is 977616000000 ms after the recording's start, 977616000 resync periods of 1000 ms for ${entries.length + 1} entries`));
  });

  const usage: [string, string[], RegExp][] = [
    ['an unknown option', ['--bogus'], /^rxkube replay: unknown option --bogus\n/],
    ['no recording', ['--reconcile', 'x.ts'], /^rxkube replay: needs the recording to replay/],
    ['no --reconcile', ['run.jsonl'], /^rxkube replay: needs --reconcile <module>/],
    ['a missing module', ['RECORDING', '--reconcile', '/nowhere/reconcile.ts'], /^rxkube replay: --reconcile \/nowhere\/reconcile\.ts: no such file/],
    ['a missing recording', ['/nowhere/run.jsonl', '--reconcile', 'FIXTURES/counterReconcile.ts'], /^rxkube replay: no recording at \/nowhere\/run\.jsonl: the file does not exist/],
    ['a module without the export', ['RECORDING', '--reconcile', 'FIXTURES/noReconcile.ts'], /^rxkube replay: --reconcile .*noReconcile\.ts exports no function "reconcile" \(its functions: helper; choose one with --export\)/],
  ];
  for (const [what, args, message] of usage) {
    it(`refuses ${what} with a clear message, no stack trace, exit code 2`, async () => {
      const { code, out, err } = await cli(['replay', ...args.map((a) => a.replace('RECORDING', recording).replace('FIXTURES/', fixtures))]);
      expect(code).to.equal(2);
      expect(out).to.equal('');
      expect(err).to.match(message);
      expect(err).to.include('(rxkube replay --help says what it takes)');
      expect(err).not.to.match(/\n\s+at /);
    });
  }

  it('--help prints what the module must export', async () => {
    const { code, out } = await cli(['replay', '--help']);
    expect(code).to.equal(0);
    expect(out).to.include('exports the reconcile as `reconcile`');
  });
});
