import { expect } from 'chai';
import { replay } from '../../src/testing/index.js';
import type { TimelineEntry } from '../../src/observe/timeline.js';
import { counter, entries, header, key, t0 } from '../fixtures/counterRecording.js';

const c = 'counter';
/** The counter's recording, then a key from one of its `triggers` (a Git push, say), and the run it made. */
const withTrigger: TimelineEntry[] = [
  ...entries,
  { type: 'trigger', at: t0 + 60, controller: c, key, cause: { via: 'trigger', resource: 'git-push', delta: 'Sync', objectKey: key } },
  { type: 'run-start', at: t0 + 60, controller: c, key, attempt: 1 },
  { type: 'write', at: t0 + 61, controller: c, key, verb: 'get', resource: 'ConfigMap', objectKey: key, code: 404, error: 'get configmaps "default/a": configmaps "a" not found (404 NotFound)', body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'configmaps "a" not found' } },
  { type: 'run-end', at: t0 + 62, controller: c, key, attempt: 1, duration: 2, result: 'success' },
];
const recording = { header, entries: withTrigger, files: ['(memory)'], warnings: [] };

describe('replay of a controller with triggers (rxkube/testing)', () => {
  it('feeds the recorded keys of the controller\'s triggers at their recorded times: the run they made replays alike', async () => {
    const seen = { at: [] as number[], objects: [] as unknown[] };
    const result = await replay(recording, { reconcile: counter('1', seen) });
    expect(seen.at).to.deep.equal([t0, t0 + 10, t0 + 40, t0 + 60]);
    expect(result.replayed).to.equal(4);
    expect(result.differ).to.equal(0);
    expect(result.runs[3]?.replayed?.steps.map((s) => s.text)).to.deep.equal(['get ConfigMap default/a 404', 'default/a success']);
  });

  it('is deterministic with triggers too', async () => {
    const once = await replay(recording, { reconcile: counter('1') });
    expect(await replay(recording, { reconcile: counter('1') })).to.deep.equal(once);
  });
});
