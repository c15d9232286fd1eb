import { expect } from 'chai';
import {
  Store,
  findCondition,
  silentLogger,
  type ControllerContext,
  type EventInput,
  type EventRecorder,
  type KubeObject,
  type WatchedResource,
} from 'rxkube';
import { dilatedScheduler } from '../../test/support/dilatedScheduler.js';
import { waitFor } from '../../test/support/waitFor.js';
import { useEmbeddedServer } from '../support/harness.js';
import { installPodAutoscalerCrd, podAutoscalerCrd } from './crd.js';
import { podAutoscalerController } from './controller.js';
import { reconcilePodAutoscaler } from './reconcile.js';
import { autoscalerManifest, autoscalerRef, deploymentManifest, deploymentRef } from './manifests.js';
import type { Deployment } from 'rxkube/kinds';
import { BY_SCALER, BY_TARGET, DEPLOYMENTS_STORE, FINALIZER, PODAUTOSCALERS_STORE, SCALED_BY, byScaler, byTarget, type PodAutoscaler } from './types.js';

const deploymentsRef = { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'default' };
const autoscalersRef = { group: 'autoscaling.rxkube.dev', version: 'v1', resource: 'podautoscalers', namespace: 'default' };

describe('examples/podautoscaler against the embedded API server', () => {
  const h = useEmbeddedServer();

  beforeEach(async () => {
    await installPodAutoscalerCrd(h.client);
  });

  // Time runs 100× faster: the default two-minute cache sync bound would be 1.2 s of wall time on a loaded machine.
  const syncBound = 100 * 120_000;
  const start = () => h.start((signal) => podAutoscalerController(h.server.kubeConfig(), { logger: silentLogger, scheduler: dilatedScheduler(100), cacheSyncTimeout: syncBound, concurrency: 2, signal }));

  const deployment = (name: string): Deployment | undefined =>
    h.server.snapshot(deploymentsRef).find((d) => d.metadata.name === name) as Deployment | undefined;
  const autoscaler = (name: string): PodAutoscaler | undefined =>
    h.server.snapshot(autoscalersRef).find((d) => d.metadata.name === name) as PodAutoscaler | undefined;
  const events = (reason: string) => h.events(reason);
  const ready = (name: string) => findCondition(autoscaler(name)?.status?.conditions, 'Ready');
  const converged = (name: string) => {
    const pa = autoscaler(name);
    return pa !== undefined && pa.status?.observedGeneration === pa.metadata.generation && ready(name)?.reason === 'Scaled';
  };

  const createDeployment = (name: string, replicas = 1) => h.client.create(deploymentManifest('default', name, replicas));
  const createAutoscaler = (name: string, targetDeployment: string, replicas: number) =>
    h.client.create(autoscalerManifest('default', name, targetDeployment, replicas));
  const patchAutoscaler = (name: string, spec: Partial<PodAutoscaler['spec']>) => h.client.patchMerge(autoscalerRef('default', name), { spec });
  const scaleBehindItsBack = (name: string, replicas: number) => h.client.patchMerge(deploymentRef('default', name), { spec: { replicas } });

  it('scales the target Deployment, reports Ready/Scaled with the generation and replicas, and records a Scaled Event', async () => {
    await createDeployment('web', 1);
    await createAutoscaler('web', 'web', 3);
    start();
    await waitFor(() => converged('web'), 'the autoscaler to converge');
    expect(deployment('web')?.spec?.replicas).to.equal(3);
    const pa = autoscaler('web')!;
    expect(pa.metadata.finalizers).to.deep.equal([FINALIZER]);
    expect(pa.status?.currentReplicas).to.equal(3);
    expect(pa.status?.observedGeneration).to.equal(1);
    expect(ready('web')).to.include({ status: 'True', reason: 'Scaled', observedGeneration: 1 });
    await waitFor(() => events('Scaled').length === 1, 'the Scaled Event');
    expect(events('Scaled')[0]).to.include({ type: 'Normal', note: 'scaled deployment "web" from 1 to 3 replicas' });
    expect(events('Scaled')[0]?.regarding.name).to.equal('web');
  });

  it('never takes ownership of the Deployment: no owner reference, only replicas and its stamp change', async () => {
    const created = await createDeployment('web', 1);
    await createAutoscaler('web-pa', 'web', 2);
    start();
    await waitFor(() => converged('web-pa'), 'the autoscaler to converge');
    const after = deployment('web')!;
    expect(after.metadata.ownerReferences).to.equal(undefined);
    expect(after.metadata.annotations).to.deep.equal({ [SCALED_BY]: 'web-pa' });
    const strip = (d: Deployment) => ({ ...d.spec, replicas: 0 });
    expect(strip(after)).to.deep.equal(strip(created as Deployment));
  });

  it('corrects replicas changed behind its back', async () => {
    await createDeployment('web', 1);
    await createAutoscaler('web', 'web', 3);
    start();
    await waitFor(() => converged('web'), 'the autoscaler to converge');
    await scaleBehindItsBack('web', 7);
    await waitFor(() => events('Scaled').some((e) => e.note === 'scaled deployment "web" from 7 to 3 replicas'), 'the correction');
    expect(deployment('web')?.spec?.replicas).to.equal(3);
  });

  it('reports DeploymentNotFound with a Warning Event, then scales the Deployment once it appears', async () => {
    await createAutoscaler('late', 'late', 4);
    start();
    await waitFor(() => ready('late')?.reason === 'DeploymentNotFound', 'DeploymentNotFound');
    expect(ready('late')).to.include({ status: 'False', message: 'deployment "late" not found in namespace "default"' });
    await waitFor(() => events('DeploymentNotFound').length === 1, 'the Warning Event');
    expect(events('DeploymentNotFound')[0]?.type).to.equal('Warning');
    await createDeployment('late', 1);
    await waitFor(() => converged('late'), 'the autoscaler to converge');
    expect(deployment('late')?.spec?.replicas).to.equal(4);
  });

  it('follows edits: new replicas and a new target, letting go of the old one', async () => {
    await createDeployment('a', 1);
    await createDeployment('b', 1);
    await createAutoscaler('pa', 'a', 2);
    start();
    await waitFor(() => converged('pa'), 'the first convergence');
    await patchAutoscaler('pa', { replicas: 5 });
    await waitFor(() => autoscaler('pa')?.status?.observedGeneration === 2 && deployment('a')?.spec?.replicas === 5, 'the new replicas');
    await patchAutoscaler('pa', { targetDeployment: 'b' });
    await waitFor(() => autoscaler('pa')?.status?.observedGeneration === 3 && converged('pa'), 'the retarget');
    expect(deployment('b')?.spec?.replicas).to.equal(5);
    expect(deployment('b')?.metadata.annotations?.[SCALED_BY]).to.equal('pa');
    expect(deployment('a')?.metadata.annotations?.[SCALED_BY]).to.equal(undefined);
    expect(deployment('a')?.spec?.replicas).to.equal(5);
  });

  it('on delete: removes its stamp, records Released, lets the autoscaler go and leaves the Deployment as it is', async () => {
    await createDeployment('web', 1);
    await createAutoscaler('web', 'web', 3);
    start();
    await waitFor(() => converged('web'), 'the autoscaler to converge');
    await h.client.remove(autoscalerRef('default', 'web'));
    await waitFor(() => autoscaler('web') === undefined, 'the autoscaler to go');
    expect(deployment('web')?.spec?.replicas).to.equal(3);
    expect(deployment('web')?.metadata.annotations?.[SCALED_BY]).to.equal(undefined);
    await waitFor(() => events('Released').length === 1, 'the Released Event');
    expect(events('Released')[0]?.note).to.equal('deleted; stopped scaling deployment "web" (left at 3 replicas)');
  });

  it('lets the oldest of two autoscalers drive a Deployment, and hands over when it goes', async () => {
    await createDeployment('web', 1);
    await createAutoscaler('first', 'web', 2);
    // creationTimestamp has whole seconds: the tie between the two is broken by name, "first" < "second".
    await createAutoscaler('second', 'web', 6);
    start();
    await waitFor(() => converged('first') && ready('second')?.reason === 'DeploymentClaimed', 'the claim');
    expect(ready('second')?.message).to.equal('deployment "web" is scaled by PodAutoscaler "first", the oldest that targets it');
    expect(deployment('web')?.spec?.replicas).to.equal(2);
    await h.client.remove(autoscalerRef('default', 'first'));
    await waitFor(() => converged('second') && deployment('web')?.spec?.replicas === 6, 'the hand-over');
    expect(deployment('web')?.metadata.annotations?.[SCALED_BY]).to.equal('second');
    expect(autoscaler('first')).to.equal(undefined);
  });

  it('removes a stamp that names an autoscaler which is gone (one its cleanup could not see in a lagging cache)', async () => {
    const orphan = deploymentManifest('default', 'web', 2);
    orphan.metadata.annotations = { [SCALED_BY]: 'ghost', 'keep.me/too': 'yes' };
    await h.client.create(orphan);
    start();
    await waitFor(() => deployment('web')?.metadata.annotations?.[SCALED_BY] === undefined, 'the orphaned stamp to go');
    expect(deployment('web')?.metadata.annotations).to.deep.equal({ 'keep.me/too': 'yes' });
    expect(deployment('web')?.spec?.replicas).to.equal(2);
  });

  it('reports InvalidSpec for a spec stored before the schema refused it, and writes nothing to Deployments', async () => {
    await createDeployment('web', 1);
    // The server checks the schema's `minimum: 0` as kube does...
    const refused = await createAutoscaler('bad', 'web', -2).then(
      () => undefined,
      (error: unknown) => error as { code?: number; message?: string },
    );
    expect(refused?.code).to.equal(422);
    expect(refused?.message).to.contain('spec.replicas: Invalid value: -2: spec.replicas in body should be greater than or equal to 0');
    // ...but an object stored under an older schema that lacked it stays, as in a cluster after a CRD upgrade.
    const lenient = podAutoscalerCrd() as unknown as { spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: { replicas: Record<string, unknown> } } } } } }[] } };
    delete lenient.spec.versions[0]?.schema.openAPIV3Schema.properties.spec.properties.replicas.minimum;
    await h.client.apply(lenient as unknown as KubeObject, { force: true });
    await createAutoscaler('bad', 'web', -2);
    await installPodAutoscalerCrd(h.client);
    start();
    await waitFor(() => ready('bad')?.reason === 'InvalidSpec', 'InvalidSpec');
    expect(ready('bad')?.message).to.equal('spec.replicas must be a whole number from 0, got -2');
    expect(deployment('web')?.spec?.replicas).to.equal(1);
    expect(deployment('web')?.metadata.annotations).to.equal(undefined);
  });

  it('converges through failed writes and conflicts, and a restarted controller writes nothing when all is right', async () => {
    await createDeployment('web', 1);
    await createAutoscaler('web', 'web', 3);
    h.server.faults.failNext(2, { code: 500, message: 'injected', verb: 'patch', resource: 'deployments' });
    h.server.faults.failNext(2, { code: 409, reason: 'Conflict', message: 'injected conflict', verb: 'update', resource: 'podautoscalers/status' });
    start();
    await waitFor(() => converged('web'), 'convergence through the faults');
    expect(h.server.requestLog.filter((r) => r.status === 500 || r.status === 409)).to.have.length(4);
    expect(deployment('web')?.spec?.replicas).to.equal(3);
    await waitFor(() => events('Scaled').length === 1, 'the Scaled Event');
    await h.stopAll();
    await waitFor(() => h.server.openWatches() === 0, 'the first controller to stop');

    const before = h.server.resourceVersion;
    h.server.clearRequestLog();
    h.outcomes.length = 0;
    start();
    await waitFor(() => h.outcomes.filter((o) => o.key === 'default/web').length >= 1, 'the reconcile after the restart');
    const writes = h.server.requestLog.filter((r) => !['get', 'list', 'watch', 'discovery', 'openapi', 'version'].includes(r.verb));
    expect(writes).to.deep.equal([]);
    expect(h.server.resourceVersion).to.equal(before);
  });

  it('does not clean up again (nor record Released twice) for a deleted autoscaler that only the stale cache still shows', async () => {
    // On the server: the Deployment, and no autoscaler any more (its cleanup ran, the finalizer went, it is gone).
    await createDeployment('web', 3);
    // What a cache that missed the last events holds: being deleted, our finalizer still on, the Deployment still stamped.
    const stale: PodAutoscaler = { ...autoscalerManifest('default', 'web', 'web', 3) };
    stale.metadata = { ...stale.metadata, uid: 'gone', resourceVersion: '1', deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: [FINALIZER] };
    const staleDeployment = { ...deploymentManifest('default', 'web', 3) };
    staleDeployment.metadata = { ...staleDeployment.metadata, annotations: { [SCALED_BY]: 'web' } };
    const autoscalers = new Store<PodAutoscaler>({ indexers: { [BY_TARGET]: byTarget } });
    autoscalers.apply({ type: 'Added', key: 'default/web', object: stale });
    const deployments = new Store<Deployment>({ indexers: { [BY_SCALER]: byScaler } });
    deployments.apply({ type: 'Added', key: 'default/web', object: staleDeployment });
    const recorded: EventInput[] = [];
    const recorder: EventRecorder = {
      record: (_regarding, event) => void recorded.push(event),
      flush: async () => {},
      close: async () => {},
      stats: () => ({ recorded: recorded.length, created: 0, patched: 0, failed: 0, dropped: 0, tracked: 0 }),
    };
    h.server.clearRequestLog();
    const ctx = {
      signal: new AbortController().signal,
      attempt: 0,
      key: 'default/web',
      namespace: 'default',
      name: 'web',
      object: stale,
      store: autoscalers.lister,
      stores: { [PODAUTOSCALERS_STORE]: autoscalers.lister, [DEPLOYMENTS_STORE]: deployments.lister },
      lister: (resource: WatchedResource) => {
        if (resource.group === 'apps' && resource.resource === 'deployments') return deployments.lister;
        throw new Error(`this reconcile reads no store of ${resource.resource} but the primary's`);
      },
      client: h.client,
      recorder,
      logger: silentLogger,
      now: () => Date.now(),
    } as ControllerContext<PodAutoscaler>;
    await reconcilePodAutoscaler('default/web', ctx);
    expect(recorded).to.deep.equal([]);
    expect(h.server.requestLog.filter((r) => r.verb !== 'discovery').map((r) => `${r.verb} ${r.resource}`)).to.deep.equal(['get podautoscalers']);
  });
});
