import { expect } from 'chai';
import { map, Subject, timer, type SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { perObjectTimer, TriggerError, type Delta, type KubeObject } from 'rxkube';
import type { TriggerValue } from '../../src/controller/triggers.js';
import { keyPhase, periodicKeys } from '../../src/operators/periodicKeys.js';
import { runReconcile, type TimelineEntry } from 'rxkube/testing';

const configMaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } });
const ran = (outcomes: readonly { key: string; at: number }[]) => outcomes.map((o) => `${o.at} ${o.key}`);

describe('controller({ triggers }) in virtual time', () => {
  it('runs the keys a trigger emits, at the frames it emits them, and the timeline names the trigger as their cause', async () => {
    const pushes = new Subject<TriggerValue>();
    const entries: TimelineEntry[] = [];
    const run = await runReconcile(
      { for: configMaps, triggers: [{ name: 'git-push', keys: pushes }], reconcile: () => undefined },
      ({ seed, hot, controller }) => {
        seed(cm('a'), cm('b'));
        controller.timeline.subscribe((e) => entries.push(e));
        hot('10ms a 9ms b', { a: 'default/a', b: 'default/b' }).subscribe(pushes);
      },
    );
    expect(ran(run.outcomes)).to.deep.equal(['0 default/a', '0 default/b', '10 default/a', '20 default/b']);
    const causes = entries.flatMap((e) => (e.type === 'trigger' && e.cause.via === 'trigger' ? [`${e.at} ${e.key} ${e.cause.resource} ${e.cause.delta} ${e.cause.objectKey}`] : []));
    expect(causes).to.deep.equal(['10 default/a git-push Sync default/a', '20 default/b git-push Sync default/b']);
  });

  it('maps an object a trigger emits to its key, and names a bare Observable by its place', async () => {
    const entries: TimelineEntry[] = [];
    const objects = new Subject<TriggerValue>();
    const second = await runReconcile({ for: configMaps, triggers: [objects], reconcile: () => undefined }, ({ seed, hot, controller }) => {
      seed(cm('a'));
      controller.timeline.subscribe((e) => entries.push(e));
      hot('5ms o', { o: cm('a') }).subscribe(objects);
    });
    expect(ran(second.outcomes)).to.deep.equal(['0 default/a', '5 default/a']);
    const trigger = entries.find((e) => e.type === 'trigger' && e.cause.via === 'trigger');
    expect(trigger?.type === 'trigger' && trigger.cause.resource).to.equal('triggers[0]');
  });

  it('runs a key triggered during its run exactly once more, after the run (the queue rule), however many triggers came', async () => {
    let scheduler: SchedulerLike | undefined;
    const pokes = new Subject<TriggerValue>();
    const starts: number[] = [];
    const run = await runReconcile(
      {
        for: configMaps,
        triggers: [{ name: 'poke', keys: pokes }],
        reconcile: (_key, ctx) => {
          starts.push(ctx.now());
          return timer(10, scheduler).pipe(map(() => undefined));
        },
      },
      ({ seed, hot, scheduler: s }) => {
        scheduler = s;
        seed(cm('a'));
        // Three pokes during the first run (0-10), coalesced into one rerun at 10; one after that run, while the rerun runs.
        hot('2ms a 2ms a 2ms a 5ms a', { a: 'default/a' }).subscribe(pokes);
      },
    );
    expect(starts).to.deep.equal([0, 10, 20]);
    expect(ran(run.outcomes)).to.deep.equal(['10 default/a', '20 default/a', '30 default/a']);
  });

  it('fails the controller with a TriggerError naming the trigger when the trigger errors, as a failing source fails controller-runtime', async () => {
    const broken = new Subject<TriggerValue>();
    const run = await runReconcile({ for: configMaps, triggers: [{ name: 'webhook', keys: broken }], reconcile: () => undefined }, ({ seed, hot, expectOutcomes }) => {
      seed(cm('a'));
      hot('3ms #', undefined, new Error('connection reset')).subscribe(broken);
      expectOutcomes('a 2ms #', { a: 'default/a success' }, new TriggerError('webhook', new Error('connection reset')));
    });
    expect(run.error).to.be.instanceOf(TriggerError);
    expect((run.error as TriggerError).trigger).to.equal('webhook');
    expect((run.error as Error).message).to.equal('trigger "webhook" failed: connection reset');
  });

  it('fails the controller naming the trigger and the value when a trigger emits what is no key', async () => {
    const bad = new Subject<TriggerValue>();
    const run = await runReconcile({ for: configMaps, triggers: [{ name: 'queue', keys: bad }], reconcile: () => undefined }, ({ seed, hot, expectOutcomes }) => {
      seed(cm('a'));
      hot('1ms x', { x: { metadata: {} } as KubeObject }).subscribe(bad);
      expectOutcomes('a #', { a: 'default/a success' }, new TriggerError('queue', new Error('cannot key object: metadata.name is missing')));
    });
    expect((run.error as Error).message).to.equal('trigger "queue" failed: cannot key object: metadata.name is missing');
  });

  it('refuses a trigger without a name or keys when the controller is made', async () => {
    await runReconcile({ for: configMaps, triggers: [{ name: '', keys: new Subject() }], reconcile: () => undefined }).then(
      () => expect.fail('should have thrown'),
      (err: Error) => expect(err.message).to.equal('controller "test-controller": triggers[0] needs a non-empty name and keys (an Observable, or a function that returns one)'),
    );
  });
});

describe('perObjectTimer / periodicKeys in virtual time', () => {
  it('fires each key every interval at its own phase (a hash of the key), never all at once, and stops for a deleted object', async () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    const phases = names.map((n) => keyPhase(`default/${n}`, 1000));
    // Spread: six keys get more than one phase of a second.
    expect(new Set(phases).size).to.be.greaterThan(1);
    const run = await runReconcile(
      { for: configMaps, triggers: [perObjectTimer(1000)], reconcile: () => undefined, until: 3_500 },
      ({ seed, cluster }) => {
        seed(...names.map(cm));
        cluster('1500ms d', { d: (kubectl) => kubectl.remove(cm('a')) });
      },
    );
    const timed = run.outcomes.filter((o) => o.at > 0);
    for (const [i, name] of names.entries()) {
      const at = timed.filter((o) => o.key === `default/${name}`).map((o) => o.at);
      const phase = phases[i] as number;
      const expected = name === 'a' ? [phase || 1000, ...(phase + 1000 < 1500 ? [phase + 1000] : [])] : [phase || 1000, phase + 1000, phase + 2000, ...(phase + 3000 <= 3500 ? [phase + 3000] : [])];
      // The deleted object's run of its delete (at 1500) is no timer's; its timer fires no more after it.
      expect(at.filter((t) => t !== 1500), name).to.deep.equal(expected);
    }
  });

  it('keeps the phase of a key whatever time it appears at, so an object re-added keeps its place', () => {
    const scheduler = new TestScheduler((a, b) => {
      expect(a).to.deep.equal(b);
    });
    scheduler.run(({ hot, expectObservable }) => {
      const phase = keyPhase('default/x', 100);
      const added: Delta = { type: 'Added', key: 'default/x', object: cm('x') };
      const deleted: Delta = { type: 'Deleted', key: 'default/x', object: cm('x') };
      // Added at 0, deleted at 150, added again at 170: fires at phase, phase+100 (if before 150), then from the next phase after 170.
      const input = hot<Delta>('a 149ms d 19ms a', { a: added, d: deleted });
      const fires = [phase || 100, phase + 100].filter((t) => t < 150);
      const after = [170, 270].map((t) => t - (t % 100) + phase + (phase <= t % 100 ? 100 : 0));
      const times = [...fires, ...after].filter((t) => t < 400);
      const marbles = times.map((t, i) => `${i === 0 ? t : t - (times[i - 1] as number) - 1}ms k`).join(' ');
      expectObservable(input.pipe(periodicKeys(100, { scheduler })), '^ 399ms !').toBe(marbles, { k: 'default/x' });
    });
  });

  it('refuses an interval below 1 ms or not finite, naming it', () => {
    expect(() => perObjectTimer(0)).to.throw(RangeError, 'periodicKeys: the interval must be a finite number of ms, at least 1, got 0');
    expect(() => perObjectTimer(Infinity)).to.throw(RangeError, 'got Infinity');
  });
});
