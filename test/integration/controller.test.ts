import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { getEventListeners } from 'node:events';
import type { Subscription } from 'rxjs';
import { eachValueFrom } from 'rxjs-for-await';
import { controller, runController, type ControllerOptions, silentLogger, type ReconcileOutcome, labelsChanged, InformerFactory, type KubeObject } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default' };
const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespace: 'default' };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('controller against the embedded API server', () => {
  let server: ApiServer;
  let kc: KubeConfig;
  let core: CoreV1Api;
  const running: Subscription[] = [];

  beforeEach(async () => {
    server = await startApiServer();
    kc = server.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
  });

  afterEach(async () => {
    for (const s of running.splice(0)) s.unsubscribe();
    await server.close();
  });

  const createConfigMap = (name: string, data: Record<string, string> = { v: '1' }) =>
    core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name }, data } });

  function start(options: Partial<ControllerOptions<KubeObject>> & Pick<ControllerOptions<KubeObject>, 'reconcile'>) {
    const outcomes: ReconcileOutcome[] = [];
    let error: unknown;
    let completed = false;
    const c = controller({
      name: 'test',
      kubeConfig: kc,
      for: configmaps,
      logger: silentLogger,
      scheduler: dilatedScheduler(100),
      // Time runs 100× faster: the default two-minute sync bound would be 1.2 s of wall time.
      cacheSyncTimeout: 100 * 120_000,
      ...options,
    });
    running.push(
      c.subscribe({
        next: (o) => outcomes.push(o),
        error: (e: unknown) => (error = e),
        complete: () => (completed = true),
      }),
    );
    return { c, outcomes, error: () => error, completed: () => completed };
  }

  it('reconciles every primary key once all stores have synced, then each change', async () => {
    await createConfigMap('a');
    await createConfigMap('b');
    server.faults.latency(300, { verb: 'list', resource: 'secrets' });
    const seen: string[] = [];
    const ownedSyncedAtFirstRun: boolean[] = [];
    const { c } = start({
      owns: [secrets],
      reconcile: (key, ctx) => {
        ownedSyncedAtFirstRun.push(ctx.stores.secrets?.synced ?? false);
        seen.push(`${key}:${ctx.object?.metadata.resourceVersion ?? 'gone'}`);
      },
    });
    await waitFor(() => seen.length === 2, 'the first reconciles');
    expect(ownedSyncedAtFirstRun).to.deep.equal([true, true]);
    expect(seen.map((s) => s.split(':')[0]).sort()).to.deep.equal(['default/a', 'default/b']);
    expect(c.synced()).to.equal(true);
    await createConfigMap('c');
    await waitFor(() => seen.some((s) => s.startsWith('default/c')), 'the reconcile of a new object');
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'a' });
    await waitFor(() => seen.includes('default/a:gone'), 'the reconcile of a deleted object');
  });

  it('maps a change of an owned object to its controller owner, and extra watches through their map', async () => {
    const owner = await createConfigMap('owner');
    await createConfigMap('other');
    const seen: string[] = [];
    start({
      owns: [secrets],
      watches: [
        {
          resource: { group: '', version: 'v1', resource: 'services', kind: 'Service', namespace: 'default' },
          map: (delta) => `default/${delta.object.metadata.labels?.['config'] ?? 'none'}`,
        },
      ],
      reconcile: (key) => {
        seen.push(key);
      },
    });
    await waitFor(() => seen.length === 2, 'the first reconciles');
    seen.length = 0;
    await core.createNamespacedSecret({
      namespace: 'default',
      body: {
        metadata: {
          name: 'owned',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid!, controller: true }],
        },
      },
    });
    await waitFor(() => seen.includes('default/owner'), 'the owner reconciled for its secret');
    await core.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: 'svc', labels: { config: 'other' } }, spec: { ports: [{ port: 80 }] } },
    });
    await waitFor(() => seen.includes('default/other'), 'the mapped key reconciled for a service');
    expect(seen.filter((k) => k !== 'default/owner' && k !== 'default/other')).to.deep.equal([]);
  });

  it('filters primary updates with its predicates, never creates', async () => {
    const seen: string[] = [];
    start({
      predicates: labelsChanged,
      reconcile: (key) => {
        seen.push(key);
      },
    });
    await waitFor(() => server.openWatches() >= 1, 'the start');
    await createConfigMap('a');
    await waitFor(() => seen.includes('default/a'), 'the create');
    // An update that leaves the labels alone is filtered out; one that changes them passes.
    await core.patchNamespacedConfigMap({ namespace: 'default', name: 'a', body: { data: { v: '2' } } }, mergePatch);
    await core.patchNamespacedConfigMap({ namespace: 'default', name: 'a', body: { metadata: { labels: { x: 'y' } } } }, mergePatch);
    await waitFor(() => seen.length === 2, 'the label change');
    await createConfigMap('b');
    await waitFor(() => seen.includes('default/b'), 'a later create');
    expect(seen).to.deep.equal(['default/a', 'default/a', 'default/b']);
  });

  it('retries a failing reconcile with backoff and never ends the stream', async () => {
    await createConfigMap('a');
    let calls = 0;
    const { outcomes, error } = start({
      reconcile: () => {
        calls++;
        if (calls < 3) throw new Error(`boom ${calls}`);
      },
    });
    await waitFor(() => outcomes.some((o) => o.result === 'success'), 'the success after two failures');
    expect(outcomes.map((o) => [o.result, o.attempt])).to.deep.equal([
      ['error', 0],
      ['error', 1],
      ['success', 2],
    ]);
    expect(error()).to.equal(undefined);
  });

  it('on abort: starts nothing new, lets the run in flight finish, closes the watches and completes', async () => {
    for (const name of ['a', 'b', 'c']) await createConfigMap(name);
    const abort = new AbortController();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    const { outcomes, completed } = start({
      signal: abort.signal,
      reconcile: async (key) => {
        started.push(key);
        await gate;
      },
    });
    await waitFor(() => started.length === 1, 'the first run');
    abort.abort();
    release();
    await waitFor(() => completed(), 'the output to complete');
    expect(started).to.have.length(1);
    expect(outcomes.map((o) => o.result)).to.deep.equal(['success']);
    await waitFor(() => server.openWatches() === 0, 'the watches to close');
  });

  it('on abort: aborts a run that outlasts the grace period', async () => {
    await createConfigMap('a');
    const abort = new AbortController();
    let aborted = false;
    let started = false;
    const { completed } = start({
      signal: abort.signal,
      gracePeriod: 5_000,
      reconcile: (_key, ctx) =>
        new Promise<void>((resolve) => {
          started = true;
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          });
        }),
    });
    await waitFor(() => server.openWatches() === 1, 'the start');
    await waitFor(() => started, 'the run');
    abort.abort();
    await waitFor(() => completed(), 'the output to complete after the grace period');
    expect(aborted).to.equal(true);
  });

  it('can be consumed with for await, and its stores read from outside', async () => {
    await createConfigMap('a');
    const informers = new InformerFactory(kc);
    const c = controller({
      name: 'embedded',
      kubeConfig: kc,
      for: configmaps,
      informers,
      logger: silentLogger,
      reconcile: () => undefined,
    });
    const results: string[] = [];
    for await (const outcome of eachValueFrom(c)) {
      results.push(`${outcome.key}:${outcome.result}`);
      break;
    }
    expect(results).to.deep.equal(['default/a:success']);
    expect(c.store.get('default/a')?.metadata.name).to.equal('a');
    expect(informers.informer(configmaps).store).to.equal(c.store);
    await waitFor(() => server.openWatches() === 0, 'the watches to close after the loop ended');
  });

  it('exposes controller-runtime metrics on its registry', async () => {
    await createConfigMap('a');
    const { c, outcomes } = start({ reconcile: () => undefined });
    await waitFor(() => outcomes.length === 1, 'a reconcile');
    const text = await c.registry.metrics();
    expect(text).to.match(/controller_runtime_reconcile_total\{controller="test",result="success"\} 1/);
    expect(text).to.match(/rxkube_store_objects\{resource="configmaps"\} 1/);
  });

  it('runs only on the replica holding the lease, and the other takes over when it goes', async () => {
    await createConfigMap('a');
    const lease = { lease: 'default/test-controller', leaseDuration: 15_000, renewDeadline: 10_000, retryPeriod: 2_000 };
    const reconciledBy: string[] = [];
    // Time runs 20x here, not 100x: a busy machine must not stall the leader past its renew deadline.
    const scheduler = dilatedScheduler(20);
    const one = start({ scheduler, leaderElection: { ...lease, identity: 'one' }, reconcile: () => void reconciledBy.push('one') });
    await waitFor(() => reconciledBy.length === 1, 'the first leader');
    const two = start({ scheduler, leaderElection: { ...lease, identity: 'two' }, reconcile: () => void reconciledBy.push('two') });
    await waitFor(() => two.c.ready(), 'the standby to sync and see the lease held');
    expect(two.c.leading()).to.equal(false);
    expect(two.c.ready()).to.equal(true);
    expect(one.c.leading()).to.equal(true);
    running[0]!.unsubscribe(); // replica one shuts down and releases the lease
    await waitFor(() => reconciledBy.includes('two'), 'the standby to take over');
    expect(reconciledBy).to.deep.equal(['one', 'two']);
  });

  it('under runController, settles done only once the Lease is released, so the next replica need not wait for it to expire', async () => {
    await createConfigMap('a');
    let reconciled = 0;
    const run = await runController({
      name: 'leader',
      kubeConfig: server.kubeConfig(),
      logger: silentLogger,
      health: false,
      handleSignals: false,
      for: configmaps,
      leaderElection: { lease: 'default/leader', identity: 'me' },
      reconcile: () => void reconciled++,
    });
    await waitFor(() => reconciled === 1, 'the reconcile under the lease');
    expect(run.controller.leading()).to.equal(true);
    run.stop();
    await run.done;
    // Read the moment done settled, with no wait: the release is already written.
    const [lease] = server.snapshot({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: 'default' });
    expect((lease as { spec?: { holderIdentity?: string; leaseDurationSeconds?: number } }).spec).to.deep.include({ holderIdentity: '', leaseDurationSeconds: 1 });
    expect(run.controller.leading()).to.equal(false);
  });

  it('under runController, shuts down when onOutcome throws, rejecting done with an error that names it, and leaves no listener on the caller\'s signals', async () => {
    await createConfigMap('a');
    const signal = new AbortController().signal;
    const stopNow = new AbortController().signal;
    const run = await runController({
      name: 'picky',
      kubeConfig: server.kubeConfig(),
      logger: silentLogger,
      health: false,
      handleSignals: false,
      signal,
      stopNow,
      for: configmaps,
      reconcile: () => undefined,
      onOutcome: () => {
        throw new TypeError('no outcomes, please');
      },
    });
    expect(getEventListeners(signal, 'abort')).to.have.length(1);
    const err = await run.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as Error).message).to.equal('runController: onOutcome threw for "default/a": no outcomes, please');
    expect((err as Error).cause).to.be.instanceOf(TypeError);
    expect(getEventListeners(signal, 'abort')).to.have.length(0);
    expect(getEventListeners(stopNow, 'abort')).to.have.length(0);
    await waitFor(() => server.openWatches() === 0, 'the watches to close');
  });

  it('ends with the source error on a fault no retry fixes, and is no longer ready', async () => {
    // A selector the server refuses (400); a type it does not serve is waited for instead (controller.dynamicWatches.test.ts).
    const { c, error } = start({ for: { ...configmaps, labelSelector: 'app in (web' }, reconcile: () => undefined });
    await waitFor(() => error() !== undefined, 'the error');
    expect(String(error())).to.contain('cannot list configmaps');
    expect([c.ready(), c.synced(), c.leading()]).to.deep.equal([false, false, false]);
    expect(c.notReady()[0]).to.match(/^the controller failed: cannot list configmaps/);
  });
});
