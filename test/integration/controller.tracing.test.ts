import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import type { Subscription } from 'rxjs';
import { controller, traceContextOf, silentLogger, TRACEPARENT_ANNOTATION, type KubeObject, type ReconcileOutcome } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { inMemoryTracing } from '../support/tracing.js';
import { waitFor } from '../support/waitFor.js';

const parents = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default', labelSelector: 'tier=parent' };
const children = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default', labelSelector: 'tier=child' };

describe('traces across controllers, on the embedded API server over HTTP', () => {
  let server: ApiServer;
  let kc: KubeConfig;
  const running: Subscription[] = [];

  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
    kc = server.kubeConfig();
  });

  afterEach(async () => {
    for (const s of running.splice(0)) s.unsubscribe();
    await server.close();
  });

  it('follows one kubectl-like create through two controllers: parent → child ConfigMap → grandchild Secret, each run linked to the write that set it off', async () => {
    const tracing = inMemoryTracing();
    const outcomes: ReconcileOutcome[] = [];
    // The parent makes a child ConfigMap it owns; a second controller makes a Secret of each child.
    const parent = controller<KubeObject>({
      name: 'parent',
      kubeConfig: kc,
      for: parents,
      owns: [children],
      logger: silentLogger,
      tracing: { tracerProvider: tracing.provider, annotate: true },
      reconcile: async (_key, ctx) => {
        const owner = ctx.object;
        if (owner === undefined) return;
        await ctx.client.createOrUpdate(
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${ctx.name}-child`, namespace: 'default' } } as KubeObject,
          (child) => {
            child.metadata.labels = { tier: 'child' };
            child.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: ctx.name, uid: owner.metadata.uid ?? '', controller: true }];
            return child;
          },
          { signal: ctx.signal },
        );
      },
    });
    const child = controller<KubeObject>({
      name: 'child',
      kubeConfig: kc,
      for: children,
      logger: silentLogger,
      tracing: { tracerProvider: tracing.provider, annotate: true },
      reconcile: async (_key, ctx) => {
        if (ctx.object === undefined) return;
        await ctx.client.createOrUpdate({ apiVersion: 'v1', kind: 'Secret', metadata: { name: ctx.name, namespace: 'default' } } as KubeObject, () => undefined, { signal: ctx.signal });
      },
    });
    running.push(parent.subscribe((o) => outcomes.push(o)), child.subscribe((o) => outcomes.push(o)));
    await waitFor(() => parent.synced() && child.synced(), 'both controllers synced');

    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'app', labels: { tier: 'parent' } } } });
    // The parent runs for its ConfigMap, then once more for the child's Added (owns), which finds nothing to change.
    await waitFor(() => tracing.runs('parent').length >= 2 && tracing.runs('child').length >= 1 && tracing.spans().some((s) => s.attributes['rxkube.object.kind'] === 'Secret' && s.attributes['http.response.status_code'] === 201), 'both runs');
    await waitFor(() => tracing.childrenOf(tracing.runs('parent')[1] as ReadableSpan).length === 1, "the parent's second run's request span");

    const [first, second] = tracing.runs('parent') as [ReadableSpan, ReadableSpan];
    const [create] = tracing.childrenOf(first);
    expect(create?.name).to.equal('POST /api/v1/namespaces/{namespace}/configmaps');
    expect(create?.attributes['http.response.status_code']).to.equal(201);
    expect(create?.spanContext().traceId).to.equal(first.spanContext().traceId);

    // The child ConfigMap names the request that made it; the child controller's run links there.
    const childCm = (await core.readNamespacedConfigMap({ name: 'app-child', namespace: 'default' })) as KubeObject;
    expect(traceContextOf(childCm)).to.deep.include({ traceId: first.spanContext().traceId, spanId: create?.spanContext().spanId });
    const [childRun] = tracing.runs('child') as [ReadableSpan];
    const link = childRun.links.find((l) => l.attributes?.['rxkube.trigger.via'] === 'for');
    expect(link?.attributes).to.include({ 'rxkube.trigger.resource': 'configmaps', 'rxkube.trigger.delta': 'Added', 'rxkube.trigger.object': 'default/app-child', 'rxkube.trigger.resource_version': childCm.metadata.resourceVersion });
    expect(link?.context).to.deep.include({ traceId: first.spanContext().traceId, spanId: create?.spanContext().spanId });

    // The grandchild Secret names the child controller's request, in the child run's trace.
    const secret = (await core.readNamespacedSecret({ name: 'app-child', namespace: 'default' })) as KubeObject;
    const [secretCreate] = tracing.childrenOf(childRun);
    expect(traceContextOf(secret)).to.deep.include({ traceId: childRun.spanContext().traceId, spanId: secretCreate?.spanContext().spanId });

    // The parent's run for the child's Added links to its own write, and found nothing to change: a GET, no write, no new resourceVersion.
    const owns = second.links.find((l) => l.attributes?.['rxkube.trigger.via'] === 'owns');
    expect(owns?.context.spanId).to.equal(create?.spanContext().spanId);
    expect(tracing.childrenOf(second).map((s) => [s.name, s.attributes['http.response.status_code']])).to.deep.equal([['GET /api/v1/namespaces/{namespace}/configmaps/{name}', 200]]);
    expect((await core.readNamespacedConfigMap({ name: 'app-child', namespace: 'default' })).metadata?.resourceVersion).to.equal(childCm.metadata.resourceVersion);
    expect(outcomes.every((o) => o.result === 'success')).to.equal(true);
    expect(childCm.metadata.annotations?.[TRACEPARENT_ANNOTATION]).to.be.a('string');
  });
});
