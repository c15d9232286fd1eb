import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { concat, finalize, from, fromEvent, map, NEVER, of, raceWith, Subject, timer, type Observable, type SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { clusterKey, controller, silentLogger, splitClusterKey, type ClusterEvent, type ControllerClusters, type KubeClient, type KubeObject, type ListWatchEvent, type TriggerOption, type TriggerValue, perObjectTimer } from 'rxkube';
import { inMemoryLeaseClient, memoryClient, memoryRecorder, runVirtualTime, type TimelineEntry } from 'rxkube/testing';
import { MarbleInformers } from '../../src/testing/marble/marbleInformers.js';

const configMaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
const cm = (name: string, rv = '1'): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: rv } });

/** A list of `objects` that is complete at `syncAt` (virtual ms), then a watch that stays open; `log` hears when it is subscribed and closed. */
function source(scheduler: SchedulerLike, objects: KubeObject[], syncAt: number, log: string[], name: string, later: Observable<ListWatchEvent> = NEVER): Observable<ListWatchEvent> {
  return concat(
    from<ListWatchEvent[]>([{ type: 'Restart' }, ...objects.map((object): ListWatchEvent => ({ type: 'Listed', object }))]),
    timer(syncAt, scheduler).pipe(map((): ListWatchEvent => ({ type: 'Synced', resourceVersion: '1' }))),
    later,
  ).pipe(finalize(() => log.push(`${name} closed at ${scheduler.now()}`)));
}

interface Run {
  key: string;
  cluster: string | undefined;
  at: number;
  object: string | undefined;
  client: KubeClient;
  storeKeys: string[];
  aborted?: number;
}

/** A controller over `clusters`, each cluster's ConfigMaps scripted on the scheduler; every reconcile takes `runMs`. */
function setUp(make: (scheduler: TestScheduler, log: string[]) => ControllerClusters, runMs = 5, triggers: TriggerOption[] = []) {
  const scheduler = new TestScheduler(() => undefined);
  const log: string[] = [];
  const runs: Run[] = [];
  const ctl = controller<KubeObject>({
    name: 'fleet',
    kubeConfig: new KubeConfig(),
    clusters: make(scheduler, log),
    for: configMaps,
    triggers,
    scheduler,
    logger: silentLogger,
    reconcile: (key, ctx) => {
      const run: Run = { key, cluster: ctx.cluster, at: scheduler.now(), object: ctx.object?.metadata.name, client: ctx.client, storeKeys: ctx.store.keys() };
      runs.push(run);
      ctx.signal.addEventListener('abort', () => (run.aborted = scheduler.now()));
      // A run that stops when its signal aborts, failing with the reason, as a request given the signal does.
      const aborted = fromEvent(ctx.signal, 'abort').pipe(map(() => { throw ctx.signal.reason; }));
      return timer(runMs, scheduler).pipe(map(() => undefined), raceWith(aborted));
    },
  });
  return { scheduler, log, runs, ctl };
}

function cluster(scheduler: SchedulerLike, log: string[], name: string, objects: KubeObject[], syncAt: number, later?: Observable<ListWatchEvent>) {
  const client = memoryClient({ scheduler });
  return {
    client,
    connection: {
      kubeConfig: new KubeConfig(),
      informers: new MarbleInformers(() => source(scheduler, objects, syncAt, log, name, later), { scheduler }),
      client,
      recorder: memoryRecorder({ scheduler }),
    },
  };
}

describe('controller({ clusters }) in virtual time', () => {
  it('reconciles each cluster\'s objects under cluster keys, with that cluster\'s object, store and client', async () => {
    const clients: Record<string, KubeClient> = {};
    const s = setUp((scheduler, log) => {
      const a = cluster(scheduler, log, 'a', [cm('x')], 1);
      const b = cluster(scheduler, log, 'b', [cm('x'), cm('y')], 1);
      clients.a = a.client;
      clients.b = b.client;
      return { a: a.connection, b: b.connection };
    });
    s.ctl.subscribe();
    await runVirtualTime(s.scheduler, { maxTime: 1_000 });
    const seen = s.runs.map((run) => [run.key, run.cluster, run.object, run.client === clients[run.cluster ?? ''], run.storeKeys.sort().join(',')]);
    expect(seen).to.have.deep.members([
      ['a/default/x', 'a', 'x', true, 'default/x'],
      ['b/default/x', 'b', 'x', true, 'default/x,default/y'],
      ['b/default/y', 'b', 'y', true, 'default/x,default/y'],
    ]);
    // The controller's own stores hold every cluster's objects, keyed with the cluster (what the live view reads).
    expect(s.ctl.store.keys().sort()).to.deep.equal(['a/default/x', 'b/default/x', 'b/default/y']);
    expect(s.ctl.stores.configmaps?.get('b/default/y')?.metadata.name).to.equal('y');
    expect(s.ctl.store.get('c/default/x')).to.equal(undefined);
  });

  it('starts each cluster\'s keys once that cluster\'s cache has synced, not before, and not waiting for a cluster that joins later', async () => {
    const s = setUp((scheduler, log) => {
      const a = cluster(scheduler, log, 'a', [cm('x')], 10);
      const b = cluster(scheduler, log, 'b', [cm('y')], 40);
      const joins = new Subject<ClusterEvent>();
      scheduler.schedule(() => joins.next({ type: 'Joined', name: 'a', cluster: a.connection }), 0);
      scheduler.schedule(() => joins.next({ type: 'Joined', name: 'b', cluster: b.connection }), 20);
      return joins;
    });
    s.ctl.subscribe();
    await runVirtualTime(s.scheduler, { maxTime: 200 });
    expect(s.runs.map((run) => [run.key, run.at])).to.deep.equal([
      ['a/default/x', 10],
      ['b/default/y', 60],
    ]);
  });

  it('when a cluster leaves: closes its watch, aborts its run in flight, drops its waiting keys, and the other cluster goes on', async () => {
    const s = setUp((scheduler, log) => {
      // Cluster a: two objects, concurrency 1, each run 20 ms: x runs 0–20, y waits; a leaves at 10.
      const a = cluster(scheduler, log, 'a', [cm('x'), cm('y')], 0);
      const b = cluster(
        scheduler,
        log,
        'b',
        [cm('z')],
        0,
        concat(timer(50, scheduler).pipe(map((): ListWatchEvent => ({ type: 'Modified', object: cm('z', '2') }))), NEVER),
      );
      const events = new Subject<ClusterEvent>();
      scheduler.schedule(() => events.next({ type: 'Joined', name: 'a', cluster: a.connection }), 0);
      scheduler.schedule(() => events.next({ type: 'Joined', name: 'b', cluster: b.connection }), 0);
      scheduler.schedule(() => events.next({ type: 'Left', name: 'a' }), 10);
      return events;
    }, 20);
    const outcomes: string[] = [];
    s.ctl.subscribe((outcome) => outcomes.push(`${outcome.key} ${outcome.result}`));
    const clustersGauge: string[] = [];
    s.scheduler.schedule(() => void s.ctl.registry.getSingleMetricAsString('rxkube_clusters').then((text) => clustersGauge.push(text)), 15);
    await runVirtualTime(s.scheduler, { maxTime: 500 });
    expect(s.log).to.include('a closed at 10');
    expect(s.log.some((line) => line.startsWith('b closed'))).to.equal(false);
    const a = s.runs.filter((run) => run.cluster === 'a');
    expect(a.map((run) => [run.key, run.at, run.aborted])).to.deep.equal([['a/default/x', 0, 10]]);
    // a's waiting key y never reaches the reconcile; b's keys run, its later change too.
    expect(s.runs.filter((run) => run.cluster === 'b').map((run) => run.key)).to.deep.equal(['b/default/z', 'b/default/z']);
    // Neither the aborted run nor the waiting key is an error to retry: the cluster is gone.
    expect(outcomes.filter((outcome) => outcome.startsWith('a/'))).to.deep.equal(['a/default/x success', 'a/default/y success']);
    expect(s.ctl.store.keys()).to.deep.equal(['b/default/z']);
    expect(clustersGauge.join('')).to.contain('rxkube_clusters{controller="fleet"} 1');
    // A departed cluster's series are gone, and its last runs do not bring them back.
    expect(await s.ctl.registry.getSingleMetricAsString('rxkube_cluster_reconcile_total')).not.to.contain('cluster="a"');
  });

  it('counts outcomes per cluster in rxkube_cluster_reconcile_total, and controller-runtime\'s families keep their labels', async () => {
    const s = setUp((scheduler, log) => ({ a: cluster(scheduler, log, 'a', [cm('x')], 0).connection, b: cluster(scheduler, log, 'b', [cm('y'), cm('z')], 0).connection }));
    s.ctl.subscribe();
    await runVirtualTime(s.scheduler, { maxTime: 100 });
    const text = await s.ctl.registry.metrics();
    expect(text).to.contain('rxkube_cluster_reconcile_total{controller="fleet",cluster="a",result="success"} 1');
    expect(text).to.contain('rxkube_cluster_reconcile_total{controller="fleet",cluster="b",result="success"} 2');
    expect(text).to.contain('controller_runtime_reconcile_total{controller="fleet",result="success"} 3');
    expect(text).to.contain('rxkube_cluster_store_objects{controller="fleet",cluster="b",resource="configmaps"} 2');
  });

  it('tells the timeline each trigger under its cluster key', async () => {
    const s = setUp((scheduler, log) => ({ a: cluster(scheduler, log, 'a', [cm('x')], 0).connection }));
    const entries: TimelineEntry[] = [];
    s.ctl.timeline.subscribe((entry) => entries.push(entry));
    s.ctl.subscribe();
    await runVirtualTime(s.scheduler, { maxTime: 100 });
    expect(entries.filter((entry) => entry.type === 'trigger').map((entry) => (entry.type === 'trigger' ? entry.key : ''))).to.deep.equal(['a/default/x']);
    // Subscribed before the controller started, the timeline still hears the informers of the clusters that joined with it.
    expect(entries.filter((entry) => entry.type === 'informer').length).to.be.at.least(3);
  });

  it('runs a trigger made by a function once per cluster on its objects, and takes cluster keys from an Observable trigger', async () => {
    const pokes = new Subject<TriggerValue>();
    let failure: Error | undefined;
    const s = setUp((scheduler, log) => {
      scheduler.schedule(() => pokes.next('b/default/y'), 30);
      scheduler.schedule(() => pokes.next(cm('y')), 200);
      return { a: cluster(scheduler, log, 'a', [cm('x')], 0).connection, b: cluster(scheduler, log, 'b', [cm('y')], 0).connection };
    }, 1, [perObjectTimer(100), { name: 'poke', keys: pokes }]);
    s.ctl.subscribe({ error: (err: Error) => (failure = err) });
    await runVirtualTime(s.scheduler, { maxTime: 250 });
    const runsOf = (key: string) => s.runs.filter((run) => run.key === key).map((run) => run.at);
    // Each object on its own timer in its own cluster (a run at the start, then one per 100 ms at the key's phase), and y poked once at 30.
    expect(runsOf('a/default/x')).to.have.length(3);
    expect(runsOf('b/default/y')).to.have.length(4);
    expect(runsOf('b/default/y')).to.include(30);
    expect(s.runs.every((run) => run.key.startsWith(`${run.cluster ?? ''}/`))).to.equal(true);
    // An object names no cluster: the trigger fails the controller, saying so.
    expect(failure?.message).to.equal('trigger "poke" failed: it emitted an object, which names no cluster: with clusters, emit "cluster/namespace/name" (see clusterKey)');
  });

  it('fails with an error naming what is wrong in the clusters it is given', async () => {
    const base = { name: 'fleet', kubeConfig: new KubeConfig(), for: configMaps, reconcile: () => undefined, logger: silentLogger };
    expect(() => controller({ ...base, clusters: { 'a/b': new KubeConfig() } })).to.throw(TypeError, 'cluster name "a/b" holds a "/"');
    expect(() => controller({ ...base, clusters: { a: {} as KubeConfig } })).to.throw(TypeError, 'cluster "a" needs a KubeConfig');
    expect(() => controller({ ...base, clusters: { a: new KubeConfig() }, client: memoryClient() })).to.throw(TypeError, 'client is of one cluster');
    expect(() => controller({ ...base, clusters: { a: new KubeConfig() }, sharding: { replicas: 2, by: 'uid' } })).to.throw(TypeError, 'sharding and clusters cannot both be set');
    expect(() => controller({ ...base, clusters: { a: new KubeConfig() }, readYourWrites: true })).to.throw(TypeError, 'readYourWrites and clusters cannot both be set yet');
    expect(() => controller({ ...base, clusters: { a: new KubeConfig() }, readYourWrites: false })).not.to.throw();
    const fleet = controller({ ...base, clusters: { a: new KubeConfig() } });
    expect(() => fleet.watch({ resource: configMaps, map: () => [] })).to.throw(TypeError, 'watches cannot be added to a controller of several clusters yet');
    expect(() => fleet.own(configMaps)).to.throw(TypeError, 'watches cannot be added to a controller of several clusters yet');
    const scheduler = new TestScheduler(() => undefined);
    const bad = controller({ ...base, scheduler, clusters: of({ type: 'Joined', name: '' } as unknown as ClusterEvent) });
    let failure: Error | undefined;
    bad.subscribe({ error: (err: Error) => (failure = err) });
    await runVirtualTime(scheduler, { maxTime: 10 });
    expect(failure?.message).to.equal('controller "fleet": clusters: a cluster needs a non-empty name, got ""');
  });
});

describe('clusterKey and splitClusterKey', () => {
  it('put the cluster in front of an object key and take it off again', () => {
    expect(clusterKey('east', 'default/web')).to.equal('east/default/web');
    expect(clusterKey('east', 'node-1')).to.equal('east/node-1');
    expect(splitClusterKey('east/default/web')).to.deep.equal({ cluster: 'east', key: 'default/web', namespace: 'default', name: 'web' });
    expect(splitClusterKey('east/node-1')).to.deep.equal({ cluster: 'east', key: 'node-1', namespace: undefined, name: 'node-1' });
  });

  it('refuse a key without a cluster, a cluster with a slash, and a bad object key', () => {
    expect(() => splitClusterKey('web')).to.throw('expected "cluster/namespace/name" or "cluster/name"');
    expect(() => splitClusterKey('/default/web')).to.throw('cannot split cluster key');
    expect(() => splitClusterKey('a/b/c/d')).to.throw('cannot split cluster key "a/b/c/d"');
    expect(() => clusterKey('a/b', 'default/web')).to.throw('holds a "/"');
    expect(() => clusterKey('a', 'x/y/z')).to.throw('cannot split key');
  });
});

describe('controller({ clusters }) with leader election, in virtual time', () => {
  it('leads for every cluster at once: one replica reconciles both clusters, and the other takes all of them over when it stops', async () => {
    const scheduler = new TestScheduler(() => undefined);
    const leases = inMemoryLeaseClient({ scheduler, latency: 1 });
    const log: string[] = [];
    const runs: { replica: string; key: string; at: number }[] = [];
    const stops: Record<string, AbortController> = { one: new AbortController(), two: new AbortController() };
    const replica = (identity: string) =>
      controller<KubeObject>({
        name: 'fleet',
        kubeConfig: new KubeConfig(),
        clusters: { a: cluster(scheduler, log, `${identity}-a`, [cm('x')], 0).connection, b: cluster(scheduler, log, `${identity}-b`, [cm('y')], 0).connection },
        for: configMaps,
        scheduler,
        logger: silentLogger,
        signal: stops[identity]?.signal,
        leaderElection: { lease: 'default/fleet', identity, client: leases },
        reconcile: (key) => void runs.push({ replica: identity, key, at: scheduler.now() }),
      });
    replica('one').subscribe();
    // The second replica starts a moment later: the first takes the free Lease.
    scheduler.schedule(() => replica('two').subscribe(), 10);
    scheduler.schedule(() => stops.one?.abort(), 60_000);
    scheduler.schedule(() => stops.two?.abort(), 100_000);
    await runVirtualTime(scheduler, { until: 120_000 });
    const of = (who: string) => runs.filter((run) => run.replica === who).map((run) => run.key).sort();
    expect(of('one')).to.deep.equal(['a/default/x', 'b/default/y']);
    // Released at the stop, the Lease goes to the standby, which reconciles every cluster from its caches.
    expect(of('two')).to.deep.equal(['a/default/x', 'b/default/y']);
    expect(Math.min(...runs.filter((run) => run.replica === 'two').map((run) => run.at))).to.be.at.least(60_000);
    // Each stop released the Lease (client-go's ReleaseOnCancel), the second after the first had given it over.
    expect(leases.lease('default', 'fleet')?.spec?.holderIdentity ?? '').to.equal('');
    expect(leases.calls.create).to.equal(1);
  });
});
