import { expect } from 'chai';
import fc from 'fast-check';
import { LiveModel, type KeyState } from '../../src/observe/liveView/liveModel.js';
import type { QueueEntry, TimelineEntry, TriggerCause } from '../../src/observe/timeline.js';
import type { KubeObject } from '../../src/types.js';

const controller = 'web';
const cause = (objectKey: string, delta: TriggerCause['delta'] = 'Updated'): TriggerCause => ({ via: 'for', resource: 'deployments.apps', delta, objectKey });
const trigger = (at: number, key: string, delta: TriggerCause['delta'] = 'Updated'): TimelineEntry => ({ type: 'trigger', at, controller, key, cause: cause(key, delta) });
const queue = (at: number, key: string, state: QueueEntry['state'], extra: Partial<QueueEntry> = {}): TimelineEntry => ({ type: 'queue', at, controller, key, state, ...extra });
const start = (at: number, key: string, attempt = 1): TimelineEntry => ({ type: 'run-start', at, controller, key, attempt });
/** A key's move: a queue entry, or its run's start for `running`. */
const move = (at: number, key: string, state: KeyState): TimelineEntry => (state === 'running' ? start(at, key) : queue(at, key, state));
const end = (at: number, key: string, duration: number, result: 'success' | 'error' | 'requeue' | 'requeue_after' | 'dropped', extra: { error?: string; attempt?: number } = {}): TimelineEntry => ({
  type: 'run-end',
  at,
  controller,
  key,
  attempt: extra.attempt ?? 1,
  duration,
  result,
  ...(extra.error !== undefined ? { error: extra.error } : {}),
});

function fold(model: LiveModel, entries: TimelineEntry[]): LiveModel {
  for (const e of entries) model.apply(e);
  return model;
}

describe('the live view model (a fold of the timeline)', () => {
  it('counts the queue: waiting, running, delayed, and how long the oldest waiting key has waited', () => {
    const model = fold(new LiveModel(), [
      trigger(1000, 'ns/a'),
      queue(1000, 'ns/a', 'waiting'),
      trigger(1010, 'ns/b'),
      queue(1010, 'ns/b', 'waiting'),
      start(1020, 'ns/a'),
      trigger(1030, 'ns/c'),
      queue(1030, 'ns/c', 'waiting'),
      queue(1040, 'ns/c', 'delayed', { delay: 500, reason: 'requeueAfter' }),
    ]);
    expect(model.snapshot(1100).queue).to.deep.equal({ depth: 1, running: 1, delayed: 1, longestWait: 90, longestWaiting: 'ns/b' });
    model.apply(start(1200, 'ns/b'));
    model.apply(queue(1300, 'ns/a', 'idle'));
    expect(model.snapshot(1400).queue).to.deep.equal({ depth: 0, running: 1, delayed: 1, longestWait: 0 });
  });

  it("keeps a key's runs with their cause, coalesced triggers, attempt, duration, outcome, error and next retry", () => {
    const model = fold(new LiveModel(), [
      trigger(1000, 'ns/a', 'Added'),
      trigger(1001, 'ns/a'),
      queue(1001, 'ns/a', 'waiting'),
      start(1002, 'ns/a'),
      end(1052, 'ns/a', 50, 'error', { error: 'quota exceeded' }),
      queue(1052, 'ns/a', 'delayed', { delay: 5000, reason: 'error' }),
      start(6052, 'ns/a', 2),
    ]);
    const detail = model.detail('ns/a', undefined);
    expect(detail?.runs).to.deep.equal([
      { startedAt: 1002, attempt: 1, cause: cause('ns/a'), triggers: 2, writes: 0, events: 0, endedAt: 1052, duration: 50, result: 'error', error: 'quota exceeded', nextRunAt: 6052 },
      { startedAt: 6052, attempt: 2, cause: { via: 'retry' }, triggers: 0, writes: 0, events: 0 },
    ]);
    // The row shows the last finished run while the next one runs.
    expect(detail?.summary).to.deep.include({ state: 'running', attempt: 2, runs: 2, result: 'error', error: 'quota exceeded', duration: 50, recent: 'e·' });
    expect(detail?.summary).to.not.have.property('nextRunAt');
  });

  it("keeps a traced run's trace ID with the run, for the page to show", () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const model = fold(new LiveModel(), [trigger(0, 'a'), { type: 'run-start', at: 1, controller, key: 'a', attempt: 1, traceId }, end(3, 'a', 2, 'success'), trigger(5, 'a'), start(6, 'a')]);
    expect(model.detail('a', undefined)?.runs.map((r) => r.traceId)).to.deep.equal([traceId, undefined]);
  });

  it('says when a delayed key comes due and why, until it runs again', () => {
    const model = fold(new LiveModel(), [trigger(0, 'a'), start(0, 'a'), end(10, 'a', 10, 'error', { error: 'boom' }), queue(10, 'a', 'delayed', { delay: 60_000, reason: 'error' })]);
    expect(model.snapshot(20).keys[0]).to.deep.include({ key: 'a', state: 'delayed', nextRunAt: 60_010, delayReason: 'error', error: 'boom', since: 10 });
  });

  it('counts writes and Events in the run that made them, and keeps no write body in the history', () => {
    const model = fold(new LiveModel(), [
      trigger(0, 'a'),
      start(1, 'a'),
      { type: 'write', at: 2, controller, key: 'a', verb: 'patch', resource: 'deployments.apps', objectKey: 'a', code: 200, body: { big: 'x'.repeat(1000) } },
      { type: 'event', at: 3, controller, key: 'a', eventType: 'Normal', reason: 'Scaled', message: 'to 3' },
      end(4, 'a', 3, 'success'),
    ]);
    const detail = model.detail('a', undefined);
    expect(detail?.runs[0]).to.deep.include({ writes: 1, events: 1, result: 'success' });
    expect(detail?.history.map((e) => e.type)).to.deep.equal(['trigger', 'run-start', 'write', 'event', 'run-end']);
    expect(detail?.history[2]).to.not.have.property('body');
  });

  it('keeps at most runsPerKey runs and historyPerKey entries of a key, the newest', () => {
    const model = new LiveModel({ runsPerKey: 3, historyPerKey: 4 });
    for (let i = 0; i < 10; i++) fold(model, [trigger(i * 10, 'a'), start(i * 10 + 1, 'a'), end(i * 10 + 2, 'a', 1, i === 9 ? 'error' : 'success')]);
    const detail = model.detail('a', undefined);
    expect(detail?.runs.map((r) => r.startedAt)).to.deep.equal([71, 81, 91]);
    expect(detail?.history.map((e) => e.at)).to.deep.equal([82, 90, 91, 92]);
    expect(detail?.summary).to.deep.include({ runs: 10, recent: 'sse' });
  });

  it('keeps at most maxKeys keys, dropping the least recently active, and says which in the next delta; the queue figures stay true', () => {
    const model = new LiveModel({ maxKeys: 2 });
    fold(model, [queue(0, 'a', 'waiting'), queue(1, 'b', 'waiting'), start(2, 'a'), queue(3, 'c', 'waiting')]);
    expect(model.size).to.equal(2);
    expect(model.detail('b', undefined)).to.equal(undefined);
    const delta = model.takeDelta(10);
    expect(delta?.removed).to.deep.equal(['b']);
    expect(delta?.keys.map((k) => k.key)).to.have.members(['a', 'c']);
    expect(delta?.queue).to.deep.include({ depth: 2, running: 1 });
  });

  it('sends in a delta only the keys that changed, and nothing when nothing did', () => {
    const model = fold(new LiveModel(), [trigger(0, 'a'), trigger(0, 'b'), queue(0, 'a', 'idle'), queue(0, 'b', 'idle')]);
    expect(model.takeDelta(1)?.keys.map((k) => k.key)).to.have.members(['a', 'b']);
    expect(model.takeDelta(2)).to.equal(undefined);
    model.apply(trigger(3, 'b'));
    model.apply(queue(3, 'b', 'idle'));
    expect(model.takeDelta(4)?.keys.map((k) => k.key)).to.deep.equal(['b']);
  });

  it('sends a delta while a key waits, so that the longest wait moves on', () => {
    const model = fold(new LiveModel(), [queue(0, 'a', 'waiting')]);
    model.takeDelta(1);
    expect(model.takeDelta(500)?.queue.longestWait).to.equal(500);
  });

  it('follows informers: lists and relists, synced, objects, last resourceVersion, failures with their error', () => {
    const inf = (at: number, event: string, extra: Record<string, unknown> = {}): TimelineEntry => ({ type: 'informer', at, controller, resource: 'pods', event, ...extra }) as TimelineEntry;
    const pod = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });
    const model = fold(new LiveModel(), [
      inf(0, 'Restart'),
      inf(1, 'Listed', { key: 'ns/a', object: pod('a', '5') }),
      inf(1, 'Listed', { key: 'ns/b', object: pod('b', '6') }),
      inf(2, 'Synced', { resourceVersion: '10' }),
      inf(3, 'Added', { key: 'ns/c', object: pod('c', '11') }),
      inf(4, 'Deleted', { key: 'ns/a', object: pod('a', '12') }),
      inf(5, 'Failure', { error: '403 Forbidden: pods is forbidden' }),
      inf(6, 'Restart'),
    ]);
    expect(model.snapshot(7).informers).to.deep.equal([
      { resource: 'pods', synced: true, objects: 2, resourceVersion: '12', lists: 2, relists: 1, failures: 1, lastError: '403 Forbidden: pods is forbidden', lastErrorAt: 5, at: 6 },
    ]);
  });

  it('with read access to the stores, counts objects from the store and shows the cached object in a detail', () => {
    const object: KubeObject = { metadata: { name: 'a', namespace: 'ns' } };
    const stores = { 'deployments.apps': { size: 42, get: (key: string) => (key === 'ns/a' ? object : undefined) } };
    const model = fold(new LiveModel({}, stores), [
      { type: 'informer', at: 0, controller, resource: 'deployments.apps', event: 'Restart' },
      trigger(1, 'ns/a'),
      trigger(1, 'ns/gone', 'Deleted'),
    ]);
    expect(model.snapshot(2).informers[0]?.objects).to.equal(42);
    expect(model.detail('ns/a', 'deployments.apps')).to.deep.include({ cached: true, object });
    const gone = model.detail('ns/gone', 'deployments.apps');
    expect(gone?.cached).to.equal(false);
    expect(gone).to.not.have.property('object');
  });

  it('ignores entry types it does not know, and takes the controller name and leadership from the timeline', () => {
    const model = new LiveModel();
    model.apply({ type: 'something-new', at: 0, controller: 'web', key: 'a' } as unknown as TimelineEntry);
    model.apply({ type: 'leadership', at: 1, controller: 'web', leading: true, identity: 'pod-1' });
    const snapshot = model.snapshot(2);
    expect(snapshot).to.deep.include({ controller: 'web', leading: true, identity: 'pod-1', entries: 2, keys: [] });
  });

  it('rejects limits that are not positive integers, naming the limit', () => {
    expect(() => new LiveModel({ maxKeys: 0 })).to.throw(RangeError, 'limits.maxKeys must be a positive integer, got 0');
    expect(() => new LiveModel({ runsPerKey: 1.5 })).to.throw(RangeError, 'limits.runsPerKey');
  });

  it('property: the queue figures count exactly the keys whose last move (a queue entry, or a run start for running) says so, whatever the order and the key cap', () => {
    const states = ['waiting', 'running', 'delayed', 'idle'] as const;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.constantFrom(...states)), { maxLength: 200 }), fc.integer({ min: 1, max: 8 }), (steps, maxKeys) => {
        const model = new LiveModel({ maxKeys });
        const last = new Map<string, string>();
        const since = new Map<string, number>();
        steps.forEach(([k, state], at) => {
          const key = `k${k}`;
          model.apply(move(at, key, state));
          if (last.get(key) !== 'waiting' || state !== 'waiting') since.set(key, at);
          last.set(key, state);
        });
        const count = (s: string) => [...last.values()].filter((v) => v === s).length;
        const waitingSince = [...last].filter(([, s]) => s === 'waiting').map(([key]) => since.get(key) as number);
        const q = model.snapshot(1000).queue;
        expect(q.depth).to.equal(count('waiting'));
        expect(q.running).to.equal(count('running'));
        expect(q.delayed).to.equal(count('delayed'));
        expect(q.longestWait).to.equal(waitingSince.length === 0 ? 0 : 1000 - Math.min(...waitingSince));
        expect(model.size).to.be.at.most(maxKeys);
      }),
    );
  });
});
