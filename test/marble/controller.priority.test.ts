import { expect } from 'chai';
import { map, Subject, timer, type SchedulerLike } from 'rxjs';
import { LOW_PRIORITY, perObjectTimer, type KubeObject } from 'rxkube';
import { runReconcile } from 'rxkube/testing';
import type { TriggerValue } from '../../src/controller/triggers.js';
import type { PriorityOptions } from '../../src/controller/priorities.js';

const configMaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } });
const backlog = Array.from({ length: 8 }, (_, i) => cm(`old-${i}`));

/**
 * A controller over the backlog (8 ConfigMaps), concurrency 1, each run 10 ms; `fresh` is created at 5 ms.
 * Returns the keys in the order their runs started, and what `workqueue_depth` said during the second run.
 */
async function startOrder(priority: PriorityOptions | undefined, extra: { pokes?: Subject<TriggerValue>; pokePriority?: number } = {}) {
  let scheduler: SchedulerLike | undefined;
  const starts: string[] = [];
  let depth: Promise<string> | undefined;
  await runReconcile(
    {
      for: configMaps,
      ...(priority !== undefined ? { priority } : {}),
      ...(extra.pokes !== undefined ? { triggers: [{ name: 'poke', keys: extra.pokes, ...(extra.pokePriority !== undefined ? { priority: extra.pokePriority } : {}) }] } : {}),
      reconcile: (key) => {
        starts.push(key);
        return timer(10, scheduler).pipe(map(() => undefined));
      },
    },
    ({ seed, cluster, scheduler: s, controller, hot }) => {
      scheduler = s;
      seed(...backlog);
      cluster('5ms c', { c: (kubectl) => kubectl.create(cm('fresh')) });
      hot('11ms r').subscribe(() => (depth = controller.registry.getSingleMetricAsString('workqueue_depth')));
      if (extra.pokes !== undefined) hot('6ms p', { p: 'default/old-6' }).subscribe(extra.pokes);
    },
  );
  return { starts, depth: await depth };
}

describe('controller({ priority }) in virtual time', () => {
  it('runs a change made while the initial list waits before the backlog: the list is low priority, changes normal', async () => {
    const { starts, depth } = await startOrder(undefined);
    expect(starts.slice(0, 2)).to.deep.equal(['default/old-0', 'default/fresh']);
    expect(starts).to.have.length(backlog.length + 1);
    // At 11 ms the fresh key runs and the rest of the list waits, at -100, as controller-runtime labels it.
    expect(depth).to.include('workqueue_depth{name="test-controller",controller="test-controller",priority="-100"} 7');
    expect(depth).to.include('workqueue_depth{name="test-controller",controller="test-controller",priority="0"} 0');
  });

  it('with aging 0 runs keys in arrival order: the change waits behind the whole backlog', async () => {
    const { starts } = await startOrder({ aging: 0 });
    expect(starts.at(-1)).to.equal('default/fresh');
  });

  it('ages the backlog: a list key that has waited longer than `aging` runs before a fresher change', async () => {
    // aging 3 ms: the list keys (at 0) rank as normal keys of 3 ms; the change at 5 ms runs after all of them.
    const { starts } = await startOrder({ aging: 3 });
    expect(starts.at(-1)).to.equal('default/fresh');
  });

  it('takes `initial` and a per-key priority from `of`', async () => {
    // The list at normal, the change at normal too, but old-3 above everything.
    const { starts } = await startOrder({ initial: 0, of: (key, p) => (key === 'default/old-3' ? 50 : p) });
    expect(starts.slice(0, 3)).to.deep.equal(['default/old-0', 'default/old-3', 'default/old-1']);
    expect(starts.indexOf('default/fresh'), 'a normal change behind a normal backlog').to.equal(backlog.length);
  });

  it('gives the keys of an external trigger its own priority, and moves a waiting key up when it comes', async () => {
    const normal = await startOrder(undefined, { pokes: new Subject<TriggerValue>() });
    // The poke of old-6 (normal, at 6) moves it up behind the fresh change (normal, at 5).
    expect(normal.starts.slice(0, 3)).to.deep.equal(['default/old-0', 'default/fresh', 'default/old-6']);
    const high = await startOrder(undefined, { pokes: new Subject<TriggerValue>(), pokePriority: 10 });
    expect(high.starts.slice(0, 3)).to.deep.equal(['default/old-0', 'default/old-6', 'default/fresh']);
  });

  it('refuses a priority that is no finite number, naming the option', async () => {
    for (const [priority, named] of [
      [{ initial: Number.NaN }, 'priority.initial'],
      [{ resync: Infinity }, 'priority.resync'],
    ] as const) {
      const failed = await runReconcile({ for: configMaps, priority, reconcile: () => undefined }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(String(failed)).to.match(new RegExp(`${named.replace('.', '\\.')} must be a finite number`));
    }
    const trigger = { name: 'poke', keys: new Subject<TriggerValue>(), priority: Number.NaN };
    const failed = await runReconcile({ for: configMaps, triggers: [trigger], reconcile: () => undefined }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(String(failed)).to.include('triggers[0] ("poke") has priority NaN; it must be a finite number');
  });

  it('puts the keys of perObjectTimer at low priority, as a resync', () => {
    expect(perObjectTimer(1000).priority).to.equal(LOW_PRIORITY);
    expect(perObjectTimer(1000, { priority: 5 }).priority).to.equal(5);
  });
});
