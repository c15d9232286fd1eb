import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { concat, map, mergeMap, NEVER, of, tap, throwError, timer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { controller, ListWatchError, silentLogger, type KubeObject, type ListWatchEvent } from 'rxkube';
import { memoryClient, memoryRecorder, runVirtualTime } from 'rxkube/testing';
import { whenServed } from '../../src/sources/whenServed.js';
import { MarbleInformers } from '../../src/testing/marble/marbleInformers.js';
import { obj } from '../support/objects.js';

const widgets = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' };
const configMaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret' };
const gone = new ListWatchError('cannot watch widgets.example.com in all namespaces: not found', 404, 'NotFound', 'watch', 'widgets.example.com');

/** A controller of `for`, its sources scripted on a TestScheduler, keeping what each reconcile saw and when. */
function scripted(forResource: typeof widgets, inputs: (scheduler: TestScheduler) => Record<string, Observable<ListWatchEvent>>) {
  const scheduler = new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });
  const sources = inputs(scheduler);
  const seen: string[] = [];
  const informers = new MarbleInformers((resource) => sources[resource.resource] ?? NEVER, { scheduler });
  const ctl = controller<KubeObject>({
    name: 'dynamic',
    kubeConfig: new KubeConfig(),
    for: forResource,
    scheduler,
    logger: silentLogger,
    informers,
    client: memoryClient({ scheduler }),
    recorder: memoryRecorder({ scheduler }),
    reconcile: (key, ctx) => void seen.push(`${scheduler.now()} ${key} ${ctx.object === undefined ? 'gone' : 'present'}`),
  });
  let error: unknown;
  const start = () => ctl.subscribe({ error: (err: unknown) => (error = err) });
  return { scheduler, ctl, informers, seen, start, error: () => error };
}

describe('controller() with watches that come and go, in virtual time', () => {
  it('reconciles the objects of a type that goes away as gone, and those of the type back again, without ending', async () => {
    const s = scripted(widgets, (scheduler) => {
      const runs = [
        concat(of<ListWatchEvent[]>({ type: 'Restart' }, { type: 'Listed', object: obj('a', '1') }, { type: 'Synced', resourceVersion: '1' }), timer(15, scheduler).pipe(mergeMap(() => throwError(() => gone)))),
        concat(of<ListWatchEvent[]>({ type: 'Restart' }, { type: 'Listed', object: obj('b', '5') }, { type: 'Synced', resourceVersion: '5' }), NEVER),
      ];
      let next = 0;
      return { widgets: whenServed(() => runs[next++] ?? NEVER, { resource: 'widgets.example.com', probe: () => of(true), scheduler, logger: silentLogger, random: () => 0 }) };
    });
    s.start();
    await runVirtualTime(s.scheduler, { maxTime: 5_000 });
    // Listed at 0; gone at 15 (the store emptied: a Deleted for a); the probe at 1015 finds it served, b is listed.
    expect(s.seen).to.deep.equal(['0 default/a present', '15 default/a gone', '1015 default/b present']);
    expect(s.error()).to.equal(undefined);
  });

  it('starts an added watch, triggers its keys, and on removal unsubscribes its source without a reconcile', async () => {
    const subscriptions: string[] = [];
    const s = scripted(configMaps, (scheduler) => ({
      configmaps: concat(of<ListWatchEvent[]>({ type: 'Restart' }, { type: 'Listed', object: obj('app', '1') }, { type: 'Synced', resourceVersion: '1' }), NEVER),
      secrets: concat(
        of<ListWatchEvent[]>({ type: 'Restart' }, { type: 'Listed', object: obj('app', '2') }, { type: 'Synced', resourceVersion: '2' }),
        timer(100, scheduler).pipe(map((): ListWatchEvent => ({ type: 'Modified', object: obj('app', '3') }))),
        timer(100, scheduler).pipe(map((): ListWatchEvent => ({ type: 'Modified', object: obj('app', '4') }))),
        NEVER,
      ).pipe(
        tap({ subscribe: () => subscriptions.push(`+${scheduler.now()}`), unsubscribe: () => subscriptions.push(`-${scheduler.now()}`) }),
      ),
    }));
    const timeline: string[] = [];
    s.ctl.timeline.subscribe((entry) => {
      if (entry.type === 'informer' && entry.resource === 'secrets') timeline.push(`${entry.at} ${entry.event}`);
    });
    s.start();
    let handle: ReturnType<typeof s.ctl.watch> | undefined;
    s.scheduler.schedule(() => (handle = s.ctl.watch({ resource: secrets, map: (delta) => `default/${delta.object.metadata.name}` })), 1_000);
    s.scheduler.schedule(() => handle?.remove(), 1_150);
    await runVirtualTime(s.scheduler, { maxTime: 5_000 });
    // The first run; the added watch's list at 1000 and its change at 1100; the change at 1200 comes after the removal.
    expect(s.seen).to.deep.equal(['0 default/app present', '1000 default/app present', '1100 default/app present']);
    expect(Object.keys(s.ctl.stores)).to.deep.equal(['configmaps']);
    expect(subscriptions).to.deep.equal(['+1000', '-1150']);
    // The timeline showed its events while it was watched, and the metric its store's size.
    expect(timeline).to.deep.equal(['1000 Restart', '1000 Listed', '1000 Synced', '1100 Modified']);
    expect((await s.ctl.registry.getSingleMetric('rxkube_store_objects')?.get())?.values.find((v) => v.labels.resource === 'secrets')?.value).to.equal(1);
    // Its objects are let go: the informer no one subscribes to holds none.
    expect(s.informers.informer(secrets).store.size).to.equal(0);
    expect(s.error()).to.equal(undefined);
  });

  it('keeps a resource named __proto__ as data in ctx.stores', () => {
    const s = scripted(configMaps, () => ({}));
    const handle = s.ctl.watch({ resource: { version: 'v1', resource: '__proto__', kind: 'Odd' }, map: () => [] });
    expect(Object.hasOwn(s.ctl.stores, '__proto__')).to.equal(true);
    expect(Object.getPrototypeOf(s.ctl.stores)).to.equal(Object.prototype);
    handle.remove();
    expect(Object.hasOwn(s.ctl.stores, '__proto__')).to.equal(false);
  });
});
