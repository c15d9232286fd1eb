import { expect } from 'chai';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { VirtualTimeScheduler } from 'rxjs';
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../../src/index.js';
import type { TimelineEntry } from '../../../src/observe/timeline.js';
import { recordTimeline } from '../../../src/observe/recording/recordTimeline.js';
import { readRecording } from '../../../src/observe/recording/readRecording.js';
import { redacted } from '../../../src/observe/redactSecrets.js';
import type { ControllerOptions } from '../../../src/controller/controller.js';
import { recordedOptions } from '../../../src/controller/recordedOptions.js';

const options: ControllerOptions<never> = {
  name: 'rec',
  kubeConfig: new KubeConfig(),
  for: { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' },
  owns: [{ group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' }],
  watches: [{ resource: { version: 'v1', resource: 'secrets', kind: 'Secret' }, map: () => [] }],
  concurrency: 3,
  reconcile: () => {},
};
const recorded = { name: options.name, options: recordedOptions(options) };

function logs(): Logger & { lines: { level: string; fields: unknown; message: string | undefined }[] } {
  const lines: { level: string; fields: unknown; message: string | undefined }[] = [];
  const at = (level: string) => (fields: unknown, message?: string) => lines.push({ level, fields, message });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token', namespace: 'default', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"k":"c2VjcmV0"}}' } }, data: { k: 'c2VjcmV0' }, stringData: { p: 'plain' } };

function informer(at: number, object: unknown, resource = 'secrets'): TimelineEntry {
  return { type: 'informer', at, controller: 'rec', resource, event: 'Added', key: 'default/token', object } as TimelineEntry;
}

describe('recordTimeline (the flight recorder)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-record-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a header with what replay needs, then one entry a line, in order', async () => {
    const scheduler = new VirtualTimeScheduler();
    scheduler.frame = 1_700_000_000_000;
    const timeline = new Subject<TimelineEntry>();
    const path = join(dir, 'run.jsonl');
    const recording = recordTimeline(timeline, recorded, { path }, { scheduler, logger: logs() });
    const entries: TimelineEntry[] = [
      { type: 'trigger', at: 1_700_000_000_005, controller: 'rec', key: 'default/a', cause: { via: 'for', resource: 'widgets.example.com', delta: 'Added', objectKey: 'default/a' } },
      { type: 'run-start', at: 1_700_000_000_006, controller: 'rec', key: 'default/a', attempt: 1 },
    ];
    for (const e of entries) timeline.next(e);
    await recording.stop();
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines.at(-1)).to.equal('');
    expect(JSON.parse(lines[0] as string)).to.deep.equal({
      type: 'header',
      format: 'rxkube-recording',
      version: 1,
      controller: 'rec',
      start: 1_700_000_000_000,
      part: 0,
      options: {
        for: { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' },
        owns: [{ group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' }],
        watches: [{ version: 'v1', resource: 'secrets', kind: 'Secret' }],
        concurrency: 3,
        redactSecrets: true,
      },
    });
    expect(lines.slice(1, -1).map((l) => JSON.parse(l))).to.deep.equal(entries);
    expect(recording.stats()).to.deep.include({ written: 2, dropped: 0 });
  });

  it("redacts Secrets' data, stringData and last-applied annotation by default, in informer objects and in answers", async () => {
    const timeline = new Subject<TimelineEntry>();
    const path = join(dir, 'run.jsonl');
    const recording = recordTimeline(timeline, recorded, { path }, { scheduler: new VirtualTimeScheduler(), logger: logs() });
    timeline.next(informer(1, secret));
    // As the traced client writes them: `list` answers an array, `createOrUpdate` a `{ result, object }`, the resource named by kind.
    timeline.next({ type: 'write', at: 2, controller: 'rec', key: 'default/a', verb: 'list', resource: 'Secret', code: 200, body: [secret] });
    timeline.next({ type: 'write', at: 3, controller: 'rec', key: 'default/a', verb: 'createOrUpdate', resource: 'Secret', objectKey: 'default/token', code: 200, body: { result: 'updated', object: secret } });
    timeline.next(informer(4, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { k: 'visible' } }, 'configmaps'));
    await recording.stop();
    const { entries } = await readRecording(path);
    const [added, listed, written, configMap] = entries as unknown as [{ object: typeof secret }, { body: (typeof secret)[] }, { body: { result: string; object: typeof secret } }, { object: { data: unknown } }];
    expect(added.object.data).to.deep.equal({ k: redacted });
    expect(added.object.stringData).to.deep.equal({ p: redacted });
    expect(added.object.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).to.equal(redacted);
    expect(listed.body[0]?.data).to.deep.equal({ k: redacted });
    expect(written.body.result).to.equal('updated');
    expect(written.body.object.data).to.deep.equal({ k: redacted });
    expect(configMap.object.data).to.deep.equal({ k: 'visible' });
    expect(await readFile(path, 'utf8')).not.to.include('c2VjcmV0');
  });

  it('keeps Secrets as received with keepSecrets, and says so in the header', async () => {
    const timeline = new Subject<TimelineEntry>();
    const path = join(dir, 'run.jsonl');
    const recording = recordTimeline(timeline, recorded, { path, keepSecrets: true }, { scheduler: new VirtualTimeScheduler(), logger: logs() });
    timeline.next(informer(1, secret));
    await recording.stop();
    const { header, entries } = await readRecording(path);
    expect(header.options.redactSecrets).to.equal(false);
    expect((entries[0] as { object: unknown }).object).to.deep.equal(secret);
  });

  it('rotates by size: path, path.1, … each starting with the header, the oldest beyond maxFiles removed; the reader joins them in order', async () => {
    const timeline = new Subject<TimelineEntry>();
    const path = join(dir, 'run.jsonl');
    // A previous recording's rotated file must not read as part of this one.
    await writeFile(`${path}.7`, 'stale\n');
    const recording = recordTimeline(timeline, recorded, { path, maxBytes: 2000, maxFiles: 3 }, { scheduler: new VirtualTimeScheduler(), logger: logs() });
    const all: TimelineEntry[] = [];
    for (let i = 0; i < 60; i++) {
      const e: TimelineEntry = { type: 'run-start', at: i, controller: 'rec', key: `default/key-${i}`, attempt: 1 };
      all.push(e);
      timeline.next(e);
    }
    await recording.stop();
    expect((await readdir(dir)).sort()).to.deep.equal(['run.jsonl', 'run.jsonl.1', 'run.jsonl.2']);
    for (const f of ['run.jsonl', 'run.jsonl.1', 'run.jsonl.2']) {
      const text = await readFile(join(dir, f), 'utf8');
      expect(Buffer.byteLength(text)).to.be.at.most(2000);
      expect(JSON.parse(text.split('\n')[0] as string).type).to.equal('header');
    }
    const read = await readRecording(path);
    expect(read.files).to.deep.equal([`${path}.2`, `${path}.1`, path]);
    expect(read.header.part).to.be.greaterThan(0);
    expect(read.warnings[0]).to.match(/run\.jsonl\.2: the recording's first \d+ file\(s\) were rotated away/);
    // What is kept is the newest entries, without a gap, in order.
    expect(read.entries).to.deep.equal(all.slice(all.length - read.entries.length));
    expect(recording.stats().rotations).to.be.greaterThan(2);
  });

  it('writes the recording and every rotated part 0600 under a umask of 022, and makes an earlier 0644 recording 0600', async () => {
    const umask = process.umask(0o022);
    try {
      const path = join(dir, 'run.jsonl');
      await writeFile(path, 'an earlier recording\n', { mode: 0o644 });
      await chmod(path, 0o644);
      const timeline = new Subject<TimelineEntry>();
      const recording = recordTimeline(timeline, recorded, { path, maxBytes: 2000, maxFiles: 3 }, { scheduler: new VirtualTimeScheduler(), logger: logs() });
      for (let i = 0; i < 30; i++) timeline.next(informer(i, secret));
      await recording.stop();
      const files = (await readdir(dir)).sort();
      expect(files).to.deep.equal(['run.jsonl', 'run.jsonl.1', 'run.jsonl.2']);
      for (const f of files) expect(((await stat(join(dir, f))).mode & 0o777).toString(8), f).to.equal('600');
    } finally {
      process.umask(umask);
    }
  });

  it('refuses to write a recording through a symbolic link, saying so in its log', async () => {
    const target = join(dir, 'elsewhere');
    await writeFile(target, 'not to be overwritten\n');
    await symlink(target, join(dir, 'run.jsonl'));
    const logger = logs();
    const recording = recordTimeline(new Subject<TimelineEntry>(), recorded, { path: join(dir, 'run.jsonl') }, { scheduler: new VirtualTimeScheduler(), logger });
    await recording.stop();
    expect(await readFile(target, 'utf8')).to.equal('not to be overwritten\n');
    expect(JSON.stringify(logger.lines.filter((l) => l.level === 'error').map((l) => l.fields))).to.include('is a symbolic link; not following it');
  });

  it('logs a write error once and never throws into the controller; later entries are counted as dropped', async () => {
    const timeline = new Subject<TimelineEntry>();
    // A directory where the file should be: EISDIR, whoever runs the test (root writes through permissions).
    await mkdir(join(dir, 'run.jsonl'));
    const logger = logs();
    const recording = recordTimeline(timeline, recorded, { path: join(dir, 'run.jsonl') }, { scheduler: new VirtualTimeScheduler(), logger });
    timeline.next({ type: 'run-start', at: 1, controller: 'rec', key: 'default/a', attempt: 1 });
    await recording.stop();
    timeline.next({ type: 'run-start', at: 2, controller: 'rec', key: 'default/a', attempt: 1 });
    const errors = logger.lines.filter((l) => l.level === 'error');
    expect(errors).to.have.length(1);
    expect(errors[0]?.message).to.match(/writing the recording failed; the controller goes on unrecorded/);
    expect(JSON.stringify(errors[0]?.fields)).to.include('EISDIR');
    expect(recording.stats().written).to.equal(0);
  });

  it('holds lines in memory while the disk is behind, up to maxBuffered, then drops and warns', async () => {
    const timeline = new Subject<TimelineEntry>();
    const logger = logs();
    const recording = recordTimeline(timeline, recorded, { path: join(dir, 'run.jsonl'), maxBuffered: 500 }, { scheduler: new VirtualTimeScheduler(), logger });
    // All synchronously: the file is not even open yet, so every line waits in the buffer.
    for (let i = 0; i < 20; i++) timeline.next({ type: 'run-start', at: i, controller: 'rec', key: `default/k${i}`, attempt: 1 });
    await recording.stop();
    const { written, dropped } = recording.stats();
    expect(written).to.be.greaterThan(0);
    expect(dropped).to.be.greaterThan(0);
    expect(written + dropped).to.equal(20);
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.message)).to.include('record: the disk cannot keep up; dropping timeline entries until it does');
    const { entries } = await readRecording(join(dir, 'run.jsonl'));
    expect(entries.map((e) => e.at)).to.deep.equal([...Array(written).keys()]);
  });

  it('refuses a bad size with a message naming it', () => {
    expect(() => recordTimeline(new Subject(), recorded, { path: join(dir, 'x'), maxBytes: 0 }, { scheduler: new VirtualTimeScheduler(), logger: logs() })).to.throw(
      TypeError,
      'record: maxBytes must be a positive integer, got 0',
    );
  });
});
