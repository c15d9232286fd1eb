import { expect } from 'chai';
import { KubeApiError, silentLogger, Store, type KubeObject } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { chaoticReconcile, InFlightGuard, InjectedReconcileFailure } from '../../soak/chaosReconcile.js';
import type { ClusterView } from '../../soak/invariants/clusterView.js';
import { allSubjects, subjectProblem } from '../../soak/invariants/converged.js';
import { ConvergenceTracker } from '../../soak/invariants/convergenceTracker.js';
import { checkHeap } from '../../soak/invariants/heap.js';
import { storeDifferences } from '../../soak/invariants/storesMatch.js';
import { leadingAfterHandover, takeovers } from '../../soak/leader/leaseRecorder.js';
import { isolationProblem } from '../../soak/fleet/fleetChaos.js';
import { memoryClient } from 'rxkube/testing';
import type { ConfigMap } from '../../soak/mirror/types.js';
import { seededRandom } from '../../soak/random.js';
import { OutcomeCounter } from '../../soak/outcomes.js';
import { Violations } from '../../soak/violations.js';
import { resources, Workload } from '../../soak/workload.js';

// The soak's zero means something only if each of its checks sees a violation when there is one.

const cm = (name: string, extra: Partial<ConfigMap['metadata']> = {}, data: Record<string, string> = { v: '1' }): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'soak', resourceVersion: '1', ...extra },
  data,
});
const source = (name: string, uid = `uid-${name}`, data?: Record<string, string>) => cm(name, { uid, labels: { mirror: 'src' } }, data);
const twin = (name: string, ownerUid: string, data?: Record<string, string>) =>
  cm(`${name}-mirror`, { labels: { mirror: 'dst' }, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name, uid: ownerUid, controller: true }] }, data);
const view = (...configMaps: ConfigMap[]): ClusterView => ({
  namespace: 'soak',
  configMaps: new Map(configMaps.map((c) => [c.metadata.name as string, c])),
  deployments: new Map(),
  autoscalers: new Map(),
});

describe('soak checks', () => {
  describe('isolationProblem (many clusters)', () => {
    it("finds a run with another cluster's context or client, or of a cluster that has left, and nothing in a right one", () => {
      const [east, west] = [memoryClient(), memoryClient()];
      const joined = new Map([
        ['east', east],
        ['west', west],
      ]);
      expect(isolationProblem('east/soak/a', { cluster: 'east', client: east }, joined)).to.equal(undefined);
      expect(isolationProblem('east/soak/a', { cluster: 'west', client: east }, joined)).to.equal('east/soak/a: ran with the context of cluster west');
      expect(isolationProblem('east/soak/a', { cluster: 'east', client: west }, joined)).to.equal("east/soak/a: ran with a client that is not cluster east's");
      expect(isolationProblem('north/soak/a', { cluster: 'north', client: east }, joined)).to.equal('north/soak/a: a run started while cluster north was not joined');
    });
  });

  describe('InFlightGuard', () => {
    it('records a violation when a key starts again before its run returned, and none for other keys or controllers', () => {
      const violations = new Violations();
      const guard = new InFlightGuard(violations);
      const leaveA = guard.enter('mirror', 'soak/a');
      guard.enter('mirror', 'soak/b')();
      guard.enter('rollout', 'soak/a')();
      expect(violations.counts['concurrent-reconcile']).to.equal(0);
      const again = guard.enter('mirror', 'soak/a');
      expect(violations.counts['concurrent-reconcile']).to.equal(1);
      again();
      leaveA();
      guard.enter('mirror', 'soak/a')();
      expect(violations.counts['concurrent-reconcile']).to.equal(1);
      expect(guard.inFlight).to.equal(0);
    });

    it('counts a wrapped run as in flight until its promise settles', async () => {
      const violations = new Violations();
      const guard = new InFlightGuard(violations);
      const releases: (() => void)[] = [];
      const reconcile = chaoticReconcile('mirror', () => new Promise<void>((resolve) => releases.push(resolve)), { failureRate: 0, maxDelayMs: 0 }, guard, seededRandom(1));
      const ctx = { signal: new AbortController().signal } as never;
      const runs = [reconcile('soak/a', ctx), reconcile('soak/a', ctx)];
      expect(violations.counts['concurrent-reconcile']).to.equal(1);
      expect(guard.inFlight).to.equal(2);
      for (const release of releases) release();
      await Promise.all(runs);
      expect(guard.inFlight).to.equal(0);
    });

    it('fails runs on purpose, before or after the real work, and leaves nothing in flight', async () => {
      const guard = new InFlightGuard(new Violations());
      let worked = 0;
      const reconcile = chaoticReconcile('mirror', async () => void worked++, { failureRate: 1, maxDelayMs: 0 }, guard, seededRandom(7));
      const ctx = { signal: new AbortController().signal } as never;
      const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => reconcile(`soak/k${i}`, ctx)));
      expect(results.every((r) => r.status === 'rejected' && r.reason instanceof InjectedReconcileFailure)).to.equal(true);
      expect(worked).to.be.within(1, 19);
      expect(guard.inFlight).to.equal(0);
    });
  });

  describe('OutcomeCounter', () => {
    const failed = (error: unknown) => ({ key: 'soak/a', result: 'error' as const, error, attempt: 1, duration: 1 });

    it('records a run that failed with neither an injected failure nor an API error as a violation, naming the error', () => {
      const violations = new Violations();
      const outcomes = new OutcomeCounter(violations);
      outcomes.add('mirror', failed(new InjectedReconcileFailure('on purpose')));
      outcomes.add('mirror', failed(new KubeApiError({ verb: 'update', resource: 'configmaps', name: 'a', namespace: 'soak' }, { code: 500, message: 'boom' })));
      outcomes.add('mirror', failed(new Error('wrapped', { cause: new KubeApiError({ verb: 'get', resource: 'configmaps' }, { code: 429, message: 'slow down' }) })));
      outcomes.add('mirror', { key: 'soak/a', result: 'success', attempt: 0, duration: 1 });
      expect(violations.counts['unexpected-reconcile-error']).to.equal(0);
      outcomes.add('mirror', failed(new TypeError("Cannot read properties of undefined (reading 'data')")));
      expect(violations.counts['unexpected-reconcile-error']).to.equal(1);
      expect(violations.samples[0]?.detail).to.match(/^mirror error: soak\/a: TypeError: Cannot read properties of undefined/);
      expect(outcomes.byController.mirror?.errors).to.deep.equal({ injected: 1, 'http 500 Unknown': 1, 'http 429 Unknown': 1, TypeError: 1 });
    });
  });

  describe('mirror convergence', () => {
    it('accepts a source with its twin of equal data owned by that source, and a name with neither', () => {
      expect(subjectProblem(view(source('a'), twin('a', 'uid-a')), 'mirror', 'a')).to.equal(undefined);
      expect(subjectProblem(view(), 'mirror', 'a')).to.equal(undefined);
    });

    it('names a missing twin, a stale twin, a twin owned by an older source of the name, and an orphan', () => {
      expect(subjectProblem(view(source('a')), 'mirror', 'a')).to.match(/no twin/);
      expect(subjectProblem(view(source('a', 'uid-a', { v: '2' }), twin('a', 'uid-a')), 'mirror', 'a')).to.match(/data v=1, source v=2/);
      expect(subjectProblem(view(source('a', 'uid-new'), twin('a', 'uid-old')), 'mirror', 'a')).to.match(/controlled by uid-old/);
      expect(subjectProblem(view(twin('a', 'uid-a')), 'mirror', 'a')).to.match(/source is gone/);
    });

    it('finds orphans among every subject to check, by their twins', () => {
      expect(allSubjects(view(twin('gone', 'uid-gone')), { mirror: ['a'] }).sort()).to.deep.equal(['mirror:soak/a', 'mirror:soak/gone']);
    });
  });

  describe('ConvergenceTracker', () => {
    it('measures a subject from its first touch until a sweep finds it converged, through later touches', () => {
      const tracker = new ConvergenceTracker();
      tracker.touch('mirror:soak/a');
      tracker.sweep([view(source('a'))]);
      expect(tracker.pending).to.equal(1);
      tracker.touch('mirror:soak/a');
      tracker.sweep([view(source('a'), twin('a', 'uid-a'))]);
      expect(tracker.pending).to.equal(0);
      expect(tracker.summary().mirror.count).to.equal(1);
    });
  });

  describe('storeDifferences', () => {
    it('lists keys missing from the store, keys the server no longer has, and keys at another resourceVersion', () => {
      const store = new Store<KubeObject>();
      const lister = store as unknown as Parameters<typeof storeDifferences>[0];
      store.apply({ type: 'Added', key: 'soak/same', object: cm('same') });
      store.apply({ type: 'Added', key: 'soak/stale', object: cm('stale') });
      store.apply({ type: 'Added', key: 'soak/deleted', object: cm('deleted') });
      const server = [cm('same'), cm('stale', { resourceVersion: '7' }), cm('new')];
      expect(storeDifferences(lister, server).sort()).to.deep.equal([
        'soak/deleted not on the server',
        'soak/new missing (server rv 1)',
        'soak/stale at rv 1, server 7',
      ]);
      expect(storeDifferences(lister, [cm('same'), cm('stale'), cm('deleted')])).to.deep.equal([]);
    });
  });

  describe('takeovers', () => {
    const write = (t: number, holder: string) => ({ t, writer: holder, holder });

    it('measures each takeover from the old holder’s last renewal and flags one sooner than the lease duration', () => {
      const found = takeovers([write(0, 'a'), write(2_000, 'a'), write(18_000, 'b'), write(20_000, 'b'), write(25_000, 'c'), write(60_000, 'a')], 15_000, undefined, 10);
      expect(found.count).to.equal(3);
      expect(found.gaps).to.deep.equal([16_000, 5_000, 35_000]);
      expect(found.violations).to.have.length(1);
      expect(found.violations[0]).to.match(/c took the lease from b 5000 ms after its last renewal, before the lease duration/);
    });

    it('flags a takeover that came a try later than the lease allows, counted in the new holder’s reads', () => {
      const renewed = (t: number, holder: string, renewTime: string) => ({ t, writer: holder, holder, renewTime });
      const read = (t: number, reader: string, holder: string, renewTime: string) => ({ t, reader, holder, renewTime });
      const writes = [renewed(0, 'a', 'r0'), renewed(2_000, 'a', 'r1'), renewed(21_000, 'b', 'r2')];
      // b first read a's last renewal at 3 000: the lease expired for b at 18 000.
      const onTime = [read(1_000, 'b', 'a', 'r0'), read(3_000, 'b', 'a', 'r1'), read(17_000, 'b', 'a', 'r1'), read(20_900, 'b', 'a', 'r1')];
      expect(takeovers(writes, 15_000, onTime, 10).violations).to.deep.equal([]);
      const late = [...onTime.slice(0, 3), read(18_500, 'b', 'a', 'r1'), read(20_900, 'b', 'a', 'r1')];
      expect(takeovers(writes, 15_000, late, 10).violations).to.deep.equal(['b took the lease from a on try 2 after it expired in its eyes (reads at 500, 2900 ms after), not on the first']);
      // Reads of other replicas, and a read within the clock's resolution of the expiry, do not count.
      expect(takeovers(writes, 15_000, [...onTime, read(18_500, 'c', 'a', 'r1'), read(18_005, 'b', 'a', 'r1')], 10).violations).to.deep.equal([]);
      expect(takeovers(writes, 15_000, [read(1_000, 'b', 'a', 'r0')], 10).violations).to.deep.equal(['b took the lease from a without having read its last renewal (r1)']);
    });

    it('does not count a hand-over after a release by the holder, nor a leader renewing its own lease', () => {
      const release = (t: number, writer: string) => ({ t, writer, holder: '' });
      expect(takeovers([write(0, 'a'), release(1_000, 'a'), write(1_500, 'b'), write(3_000, 'b')], 15_000, undefined, 10)).to.deep.equal({ count: 0, gaps: [], violations: [], handovers: [] });
    });

    it('flags a clear by a replica that does not hold the lease, and still checks the takeover after it', () => {
      const found = takeovers([write(0, 'a'), write(2_000, 'a'), { t: 2_500, writer: 'c', holder: '' }, write(3_000, 'b')], 15_000, undefined, 10);
      expect(found.violations).to.deep.equal(['c cleared the lease held by a', 'b took the lease from a 1000 ms after its last renewal, before the lease duration (15000 ms)']);
      expect(found.count).to.equal(1);
    });
  });

  describe('leadingAfterHandover', () => {
    it('flags an old leader whose leading() was still sampled true at or after the new leader acquired, and no other', () => {
      const handovers = [{ t: 20_000, from: 'a', to: 'b' }];
      expect(leadingAfterHandover(handovers, [{ identity: 'a', from: 0, to: 19_990 }, { identity: 'b', from: 20_010, to: 30_000 }])).to.deep.equal([]);
      expect(leadingAfterHandover(handovers, [{ identity: 'a', from: 0, to: 20_500 }])).to.deep.equal(['a still said leading() 500 ms after b acquired the lease (replica clock)']);
      // a's next term, after it took the lease back later, is not this handover's business.
      expect(leadingAfterHandover(handovers, [{ identity: 'a', from: 40_000, to: 50_000 }])).to.deep.equal([]);
    });
  });

  describe('checkHeap', () => {
    const round = (n: number, at: number, mb: number) => ({ round: n, endedAtSeconds: at, heapAfterGcMB: mb });

    it('compares the last calm phase with the first one after the first minute, and flags more than 20 % growth', () => {
      expect(checkHeap([round(1, 40, 50), round(2, 70, 100), round(3, 200, 119)])).to.include({ baselineRound: 2, growthPercent: 19 }).and.not.have.property('violation');
      expect(checkHeap([round(1, 40, 50), round(2, 70, 100), round(3, 200, 121)]).violation).to.match(/grew 21 %/);
    });

    it('falls back to the first round when no earlier one ended after a minute', () => {
      expect(checkHeap([round(1, 25, 80), round(2, 50, 88)])).to.include({ baselineRound: 1, growthPercent: 10 });
    });

    it('is a violation, not a pass, when a single calm phase leaves nothing to compare', () => {
      expect(checkHeap([round(1, 90, 80)])).to.include({ growthPercent: undefined });
      expect(checkHeap([round(1, 90, 80)]).violation).to.match(/heap not compared: the run had 1 calm phase/);
      expect(checkHeap([]).violation).to.match(/heap not compared/);
    });
  });

  describe('Workload, fresh names', () => {
    let server: ApiServer | undefined;
    afterEach(async () => server?.close());

    it('keeps creating sources under names never used before, while those alive stay bounded', async () => {
      server = await startApiServer({ logger: silentLogger });
      const api = server;
      api.put({ group: '', version: 'v1', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'soak' } });
      const workload = new Workload({
        server: api,
        kubeConfig: api.kubeConfig(),
        namespace: 'soak',
        random: seededRandom(3),
        rate: 1,
        httpShare: 0,
        maxHttpInFlight: 0,
        sources: 4,
        apps: 0,
        freshShare: 0.5,
        freshLive: 5,
        touched: () => {},
      });
      const fresh = () => api.snapshot(resources.configmaps('soak')).map((o) => o.metadata.name as string).filter((n) => n.startsWith('src-fresh-'));
      const alive = new Set<string>();
      const ever = new Set<string>();
      for (let i = 0; i < 400; i++) {
        (workload as unknown as { step(): void }).step();
        for (const name of fresh()) ever.add(name);
        alive.clear();
        for (const name of fresh()) alive.add(name);
        expect(alive.size).to.be.at.most(5);
      }
      expect(workload.stats.freshNames).to.be.greaterThan(50);
      expect(ever.size).to.equal(workload.stats.freshNames);
      // Pool names are still written too.
      expect(api.snapshot(resources.configmaps('soak')).some((o) => /^src-\d+$/.test(o.metadata.name as string))).to.equal(true);
      await workload.stop();
    });
  });
});
