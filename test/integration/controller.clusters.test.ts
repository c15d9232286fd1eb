import { CoordinationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { Subject } from 'rxjs';
import { controller, silentLogger, splitClusterKey, type ClusterEvent, type ControllerClusters, type KubeObject, type ReconcileOutcome } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default' };
const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespace: 'default' };

/** What each reconcile writes: a Secret owned by the ConfigMap, saying which cluster the controller thought it was in. */
function output(cluster: string, object: KubeObject): KubeObject & { data: Record<string, string> } {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: `${object.metadata.name}-out`,
      namespace: 'default',
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: object.metadata.name ?? '', uid: object.metadata.uid ?? '', controller: true }],
    },
    data: { cluster: Buffer.from(cluster).toString('base64') },
  };
}

async function secretsOf(kc: KubeConfig): Promise<Record<string, string>> {
  const list = await kc.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: 'default' });
  return Object.fromEntries(list.items.map((secret) => [secret.metadata?.name ?? '', Buffer.from(secret.data?.cluster ?? '', 'base64').toString()]));
}

const createConfigMap = (kc: KubeConfig, name: string) => kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name } } });

describe('controller({ clusters }) against two embedded API servers', () => {
  const servers: ApiServer[] = [];
  const stops: (() => Promise<void>)[] = [];

  afterEach(async () => {
    // Every controller stopped, then every server closed, whatever the test did.
    await Promise.allSettled(stops.splice(0).map((stop) => stop()));
    await Promise.allSettled(servers.splice(0).map((server) => server.close()));
  });

  async function server(): Promise<ApiServer> {
    const started = await startApiServer({ logger: silentLogger });
    servers.push(started);
    return started;
  }

  function start(home: KubeConfig, clusters: ControllerClusters, extra: { lease?: string } = {}) {
    const abort = new AbortController();
    const outcomes: ReconcileOutcome[] = [];
    const failures: unknown[] = [];
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const ctl = controller<KubeObject>({
      name: 'fleet',
      kubeConfig: home,
      clusters,
      for: configmaps,
      owns: [secrets],
      logger: silentLogger,
      scheduler: dilatedScheduler(100),
      cacheSyncTimeout: 100 * 120_000,
      signal: abort.signal,
      ...(extra.lease !== undefined ? { leaderElection: { lease: extra.lease, identity: 'only' } } : {}),
      reconcile: async (key, ctx) => {
        // The key carries the cluster; what the cache holds, and where the write goes, are that cluster's.
        expect(splitClusterKey(key).cluster).to.equal(ctx.cluster);
        if (ctx.object === undefined) return;
        await ctx.client.apply(output(ctx.cluster ?? '', ctx.object), { signal: ctx.signal });
        ctx.recorder.record(ctx.object, { type: 'Normal', reason: 'Mirrored', action: 'Apply', note: `in ${ctx.cluster ?? ''}` });
      },
    });
    ctl.subscribe({ next: (o) => outcomes.push(o), error: (err: unknown) => (failures.push(err), done()), complete: () => done() });
    stops.push(async () => {
      abort.abort();
      await finished;
    });
    return { ctl, outcomes, failures };
  }

  it('reconciles the objects of both clusters, each write going to its own cluster, with the Lease in the home cluster only', async () => {
    const east = await server();
    const west = await server();
    const [eastKc, westKc] = [east.kubeConfig(), west.kubeConfig()];
    await createConfigMap(eastKc, 'web');
    await createConfigMap(westKc, 'web');
    await createConfigMap(westKc, 'db');
    const { ctl, failures } = start(eastKc, { east: eastKc, west: westKc }, { lease: 'default/fleet' });
    await waitFor(() => east.snapshot(secrets).length === 1 && west.snapshot(secrets).length === 2, 'a Secret per ConfigMap in each cluster');
    expect(await secretsOf(eastKc)).to.deep.equal({ 'web-out': 'east' });
    expect(await secretsOf(westKc)).to.deep.equal({ 'web-out': 'west', 'db-out': 'west' });
    // A change in one cluster reconciles that cluster's key.
    await createConfigMap(westKc, 'cache');
    await waitFor(() => west.snapshot(secrets).length === 3, "the new ConfigMap's Secret in west");
    expect(east.snapshot(secrets)).to.have.length(1);
    expect(ctl.store.keys().sort()).to.deep.equal(['east/default/web', 'west/default/cache', 'west/default/db', 'west/default/web']);
    const leases = async (kc: KubeConfig) => (await kc.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: 'default' })).items.map((lease) => lease.spec?.holderIdentity);
    expect(await leases(eastKc)).to.deep.equal(['only']);
    expect(await leases(westKc)).to.deep.equal([]);
    // Events too go to the object's own cluster.
    const events = { group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: 'default' };
    const notes = (server: ApiServer) => server.snapshot(events).map((event) => `${String((event as { regarding?: { name?: string } }).regarding?.name)} ${String((event as { note?: string }).note)}`).sort();
    await waitFor(() => notes(east).length === 1 && notes(west).length === 3, 'an Event per reconciled ConfigMap in its cluster');
    expect(notes(east)).to.deep.equal(['web in east']);
    expect(notes(west)).to.deep.equal(['cache in west', 'db in west', 'web in west']);
    expect(failures).to.deep.equal([]);
  });

  it('takes a cluster that joins at run time, and when it leaves closes its watches and reconciles nothing of it any more', async () => {
    const home = await server();
    const joining = await server();
    const [homeKc, joiningKc] = [home.kubeConfig(), joining.kubeConfig()];
    await createConfigMap(homeKc, 'a');
    await createConfigMap(joiningKc, 'b');
    const clusters = new Subject<ClusterEvent>();
    const { ctl, outcomes, failures } = start(homeKc, clusters);
    clusters.next({ type: 'Joined', name: 'home', cluster: homeKc });
    await waitFor(() => home.snapshot(secrets).length === 1, 'the home cluster reconciled');
    expect(joining.openWatches()).to.equal(0);

    clusters.next({ type: 'Joined', name: 'later', cluster: joiningKc });
    await waitFor(() => joining.snapshot(secrets).length === 1, 'the joining cluster reconciled');
    expect(await secretsOf(joiningKc)).to.deep.equal({ 'b-out': 'later' });
    expect(joining.openWatches()).to.equal(2);

    clusters.next({ type: 'Left', name: 'later' });
    await waitFor(() => joining.openWatches() === 0, "the leaving cluster's watches closed");
    expect(ctl.store.keys()).to.deep.equal(['home/default/a']);
    const runsBefore = outcomes.filter((o) => o.key.startsWith('later/')).length;
    await createConfigMap(joiningKc, 'c');
    // A change in the home cluster after it, to know the controller has had the time to see one.
    await createConfigMap(homeKc, 'd');
    await waitFor(() => home.snapshot(secrets).length === 2, 'the home cluster still reconciled');
    expect(outcomes.filter((o) => o.key.startsWith('later/')).length).to.equal(runsBefore);
    expect(joining.snapshot(secrets).map((s) => s.metadata.name)).to.deep.equal(['b-out']);
    expect(failures).to.deep.equal([]);
  });
});
