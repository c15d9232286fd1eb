import { AssertionError } from 'node:assert';
import { expect } from 'chai';
import type { ControllerContext, KubeObject, ObjectKey, WatchedResource } from 'rxkube';
import { runReconcile, type ReconcileRunHelpers } from 'rxkube/testing';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const configMaps: WatchedResource = { version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
const web: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'default' }, data: {} };

/**
 * Marks a ConfigMap as seen (an update), leaves a note of it in a second
 * ConfigMap (a create) and records an Event. With `extraGet` it first
 * reads the ConfigMap from the server, as a reconcile that wants a strongly
 * consistent read would: one more request, which shifts every later frame.
 */
const markSeen =
  (extraGet: boolean) =>
  async (_key: ObjectKey, ctx: ControllerContext<ConfigMap>): Promise<void> => {
    const cm = ctx.object;
    if (cm === undefined || cm.data?.seen === 'yes' || cm.metadata.name?.endsWith('-seen')) return;
    if (extraGet) await ctx.client.get<ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ctx.namespace, name: ctx.name }, { signal: ctx.signal });
    await ctx.client.update({ ...cm, data: { ...cm.data, seen: 'yes' } }, { signal: ctx.signal });
    await ctx.client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${ctx.name}-seen`, namespace: ctx.namespace } }, { signal: ctx.signal });
    ctx.recorder.record(cm, { type: 'Normal', reason: 'Seen', action: 'Mark', note: 'marked as seen' });
  };

/** Runs `markSeen` on one ConfigMap, every request taking 1 ms, with the expectations `expect` states. */
async function runMarkSeen(extraGet: boolean, expectations: (helpers: ReconcileRunHelpers<ConfigMap>) => void): Promise<void> {
  await runReconcile<ConfigMap>({ for: configMaps, reconcile: markSeen(extraGet), client: { latency: 1 } }, (helpers) => {
    helpers.seed(web);
    expectations(helpers);
  });
}

/** The AssertionError a run failed with. */
async function failure(run: Promise<unknown>): Promise<AssertionError> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof AssertionError) return err;
  throw new Error(`expected the run to fail an expectation, it ${err === undefined ? 'passed' : `threw ${String(err)}`}`);
}

const inOrder = ['update configmaps default/web', 'create configmaps default/web-seen'];

describe('runReconcile: loose expectations (order, causes, a time window) next to the exact marble diagrams', () => {
  it('an extra GET breaks the exact diagram of the writes, not the loose form of the same writes', async () => {
    const exact = ({ expectWrites }: ReconcileRunHelpers<ConfigMap>) => expectWrites('-ab', { a: inOrder[0], b: inOrder[1] });
    const loose = ({ expectInOrder }: ReconcileRunHelpers<ConfigMap>) => expectInOrder('writes', inOrder, { within: 5 });
    await runMarkSeen(false, exact);
    await runMarkSeen(false, loose);
    await runMarkSeen(true, loose);
    const err = await failure(runMarkSeen(true, exact));
    // Both writes are right and each came 1 ms later than the diagram says.
    expect(err.message).to.contain("writes do not match the marble diagram '-ab'");
    expect(err.message).to.match(/actual:\n\s+2ms {2}update configmaps default\/web\n\s+3ms {2}create configmaps default\/web-seen/);
  });

  it('expectInOrder passes with other items around and between the expected ones, on every timeline', async () => {
    await runMarkSeen(true, ({ expectInOrder }) => {
      expectInOrder('requests', ['get configmaps default/web', 'create configmaps default/web-seen']); // the update between them is not named
      expectInOrder('writes', [{ verb: 'update', body: { data: { seen: 'yes' } } }], { between: [2, 2] });
      expectInOrder('events', ['Normal Seen default/web'], { within: 3 });
      expectInOrder('outcomes', ['default/web success', 'default/web-seen success']);
    });
  });

  it('expectInOrder on triggers says why each key ran: the first list, then the reconcile\'s own writes coming back', async () => {
    await runMarkSeen(false, ({ expectInOrder }) => {
      expectInOrder('triggers', [
        { key: 'default/web', cause: { via: 'for', delta: 'Added', initial: true } },
        'default/web via for Updated configmaps default/web',
        'default/web-seen via for Added configmaps default/web-seen',
      ]);
    });
  });

  it('expectInOrder names an expected item that never came', async () => {
    const err = await failure(runMarkSeen(false, ({ expectInOrder }) => expectInOrder('writes', [inOrder[0], 'delete configmaps default/web'])));
    expect(err.message).to.contain("writes: 'delete configmaps default/web' (2 of 2 expected in order) is missing: nothing matched it");
    expect(err.message).to.match(/actual writes:\n\s+1ms {2}update configmaps default\/web/);
  });

  it('expectInOrder names an item that came, but before the one it should follow', async () => {
    const err = await failure(runMarkSeen(false, ({ expectInOrder }) => expectInOrder('writes', [inOrder[1], inOrder[0]])));
    expect(err.message).to.contain(
      "writes: 'update configmaps default/web' (2 of 2 expected in order) is out of order: it came at 1 ms, not after 'create configmaps default/web-seen' (1 of 2) at 2 ms",
    );
  });

  it('expectInOrder names an item that came after the window, and one that came before it', async () => {
    const late = await failure(runMarkSeen(true, ({ expectInOrder }) => expectInOrder('writes', inOrder, { within: 2 })));
    expect(late.message).to.contain("writes: 'create configmaps default/web-seen' (2 of 2 expected in order within 0–2 ms) is late: it came at 3 ms, after the window ends at 2 ms");
    const early = await failure(runMarkSeen(false, ({ expectInOrder }) => expectInOrder('events', [{ reason: 'Seen' }], { between: [3, 10] })));
    expect(early.message).to.contain('events: { reason: "Seen" } (1 of 1 expected in order within 3–10 ms) is early: it came at 2 ms, before the window starts at 3 ms');
  });

  it('expectNone passes when nothing in the window matches, and names every match when something does', async () => {
    await runMarkSeen(false, ({ expectNone }) => {
      expectNone('writes', { verb: 'delete' });
      expectNone('outcomes', { result: 'error' });
      expectNone('requests', { verb: 'get' });
      expectNone('events', 'Normal Seen default/web', { between: [3, 100] });
    });
    const err = await failure(runMarkSeen(true, ({ expectNone }) => expectNone('requests', { verb: 'get' }, { within: 10 })));
    expect(err.message).to.contain('requests: expected none to match { verb: "get" } within 0–10 ms, but 1 did (at 1 ms)');
    expect(err.message).to.match(/actual requests:\n\s+1ms {2}get configmaps default\/web/);
  });

  it('refuses, before the run, an empty list, a bad window and a timeline a run does not have', async () => {
    const refused = (expectations: (h: ReconcileRunHelpers<ConfigMap>) => void) =>
      runMarkSeen(false, expectations).then(
        () => expect.fail('expected a TypeError'),
        (err: unknown) => {
          expect(err).to.be.instanceOf(TypeError);
          return (err as TypeError).message;
        },
      );
    expect(await refused(({ expectInOrder }) => expectInOrder('writes', []))).to.equal("expectInOrder('writes') needs a non-empty array of the items expected, got []");
    expect(await refused(({ expectNone }) => expectNone('writes', {}, { between: [5, 1] }))).to.equal(
      'a time window is { within: ms } or { between: [from, to] } with 0 ≤ from ≤ to, got { between: [5, 1] }',
    );
    expect(await refused(({ expectInOrder }) => expectInOrder('writes', inOrder, { within: -1 }))).to.equal("a time window's within must be a number of ms ≥ 0, got -1");
    expect(await refused(({ expectInOrder }) => expectInOrder('reads' as 'writes', inOrder))).to.equal(
      'expectInOrder: no timeline "reads"; a run has outcomes, writes, requests, events, triggers',
    );
  });
});
