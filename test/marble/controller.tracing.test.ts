import { KubeConfig } from '@kubernetes/client-node';
import { ProxyTracerProvider, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import { map, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { controller, silentLogger, TRACEPARENT_ANNOTATION, type KubeObject, type RunCause } from 'rxkube';
import { memoryClient, memoryRecorder, runVirtualTime, type TimelineEntry } from 'rxkube/testing';
import { SpanClient } from '../../src/observe/tracing/spanClient.js';
import { MarbleInformers } from '../../src/testing/marble/marbleInformers.js';
import { inMemoryTracing } from '../support/tracing.js';
import { only, scriptedController, secrets } from './controller.timeline.support.js';

const linkVia = (span: ReadableSpan) => span.links.map((l) => l.attributes?.['rxkube.trigger.via']);

/**
 * The scripted run (ConfigMaps good and bad mirrored into Secrets; bad fails
 * twice) traced into memory, with a second controller of those Secrets on the
 * same cluster, all in virtual time.
 */
async function traced(annotate = true) {
  const tracing = inMemoryTracing();
  const causes: { key: string; cause: RunCause | undefined }[] = [];
  const s = scriptedController(() => ({ tracing: { tracerProvider: tracing.provider, annotate } }));
  const child = controller<KubeObject>({
    name: 'secret-reader',
    kubeConfig: new KubeConfig(),
    for: secrets,
    scheduler: s.scheduler,
    logger: silentLogger,
    informers: new MarbleInformers((resource, selectors) => s.client.watch(resource, selectors), { scheduler: s.scheduler }),
    client: s.client,
    recorder: memoryRecorder({ scheduler: s.scheduler }),
    tracing: { tracerProvider: tracing.provider, annotate },
    reconcile: async (key, ctx) => {
      causes.push({ key, cause: ctx.cause });
      await ctx.client.get({ apiVersion: 'v1', kind: 'Secret', metadata: { name: ctx.name, namespace: ctx.namespace ?? '' } }, { signal: ctx.signal });
    },
  });
  /** Reads an object from the memory cluster, letting virtual time run for its answer. */
  const read = async (name: string) => {
    const answer = s.client.get<KubeObject>({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' } });
    await runVirtualTime(s.scheduler, { until: 6_000 });
    return answer;
  };
  const entries: TimelineEntry[] = [];
  s.ctl.timeline.subscribe((e) => entries.push(e));
  const outcomes: string[] = [];
  s.ctl.subscribe((o) => outcomes.push(`${o.key}:${o.result}`));
  child.subscribe();
  await runVirtualTime(s.scheduler, { until: 5_000 });
  return { ...s, tracing, entries, outcomes, causes, read };
}

describe('controller() traces its runs (OpenTelemetry, in virtual time)', () => {
  it('makes one span per run, named reconcile <controller>, with the key, namespace, name, attempt, result, queue wait, error and virtual times', async () => {
    const { tracing, outcomes, entries } = await traced();
    const runs = tracing.runs('mirror');
    expect(runs).to.have.length(outcomes.length);
    const failed = runs.filter((r) => r.attributes['rxkube.reconcile.result'] === 'error');
    expect(failed).to.have.length(2);
    expect(failed[0]?.status).to.deep.equal({ code: SpanStatusCode.ERROR, message: 'not yet (failure 1)' });
    expect(failed[0]?.events.map((e) => [e.name, e.attributes?.['exception.message']])).to.deep.include(['exception', 'not yet (failure 1)']);
    const first = runs.find((r) => r.attributes['rxkube.reconcile.key'] === 'default/good');
    expect(first?.kind).to.equal(SpanKind.INTERNAL);
    expect(first?.parentSpanContext).to.equal(undefined);
    expect(first?.attributes).to.include({ 'rxkube.controller': 'mirror', 'k8s.namespace.name': 'default', 'rxkube.reconcile.name': 'good', 'rxkube.reconcile.attempt': 1, 'rxkube.reconcile.result': 'success' });
    expect(first?.attributes['rxkube.queue.wait_ms']).to.be.a('number');
    // Each run-start entry carries its span's trace ID; the span lasts what the run-end entry says (scheduler time).
    const starts = only(entries, 'run-start');
    const ends = only(entries, 'run-end');
    expect(new Set(starts.map((e) => e.traceId))).to.deep.equal(new Set(runs.map((r) => r.spanContext().traceId)));
    for (const run of runs) {
      const i = starts.findIndex((e) => e.traceId === run.spanContext().traceId);
      expect(run.duration[0] * 1000 + run.duration[1] / 1e6).to.equal(ends.filter((e) => e.key === starts[i]?.key)[starts.filter((e, j) => j < i && e.key === starts[i]?.key).length]?.duration);
    }
    expect(failed.map((r) => r.attributes['rxkube.reconcile.attempt'])).to.deep.equal([1, 2]);
  });

  it('links each run to its causes: the informer delta with its resourceVersion, the owned object mapped to its owner, the retry of the failed run', async () => {
    const { tracing } = await traced();
    const runs = tracing.runs('mirror');
    const good = runs.filter((r) => r.attributes['rxkube.reconcile.key'] === 'default/good');
    const initial = good[0]?.links.find((l) => l.attributes?.['rxkube.trigger.resource'] === 'configmaps');
    expect(initial?.attributes).to.include({ 'rxkube.trigger.via': 'for', 'rxkube.trigger.delta': 'Added', 'rxkube.trigger.object': 'default/good', 'rxkube.trigger.initial': true });
    expect(initial?.attributes?.['rxkube.trigger.resource_version']).to.be.a('string');
    const bad = runs.filter((r) => r.attributes['rxkube.reconcile.key'] === 'default/bad');
    expect(linkVia(bad[1] as ReadableSpan)).to.include('retry');
    const retry = bad[1]?.links.find((l) => l.attributes?.['rxkube.trigger.via'] === 'retry');
    expect(retry?.context.spanId).to.equal(bad[0]?.spanContext().spanId);
    expect(linkVia(bad[2] as ReadableSpan)).to.include('retry');
    // The Secret's Added came back through owns, and names the request (of the run) that created it.
    const ownsRun = good.find((r) => linkVia(r).includes('owns'));
    const owns = ownsRun?.links.find((l) => l.attributes?.['rxkube.trigger.via'] === 'owns');
    expect(owns?.attributes).to.include({ 'rxkube.trigger.resource': 'secrets', 'rxkube.trigger.delta': 'Added', 'rxkube.trigger.object': 'default/good' });
    const [create] = tracing.childrenOf(good[0] as ReadableSpan);
    expect(owns?.context.spanId).to.equal(create?.spanContext().spanId);
    expect(owns?.context.traceId).to.equal(good[0]?.spanContext().traceId);
  });

  it('makes each ctx.client request a child span with the HTTP client attributes, and each Event a span event', async () => {
    const { tracing } = await traced();
    const [first] = tracing.runs('mirror').filter((r) => r.attributes['rxkube.reconcile.key'] === 'default/good');
    const [request] = tracing.childrenOf(first as ReadableSpan);
    expect(request?.name).to.equal('POST /api/v1/namespaces/{namespace}/secrets');
    expect(request?.kind).to.equal(SpanKind.CLIENT);
    expect(request?.spanContext().traceId).to.equal(first?.spanContext().traceId);
    expect(request?.attributes).to.deep.equal({
      'http.request.method': 'POST',
      'rxkube.request.verb': 'createOrUpdate',
      'rxkube.object.kind': 'Secret',
      'rxkube.object.key': 'default/good',
      'http.response.status_code': 201,
      'url.template': '/api/v1/namespaces/{namespace}/secrets',
    });
    expect(first?.events.map((e) => [e.name, e.attributes?.['rxkube.event.reason'], e.attributes?.['rxkube.event.regarding']])).to.deep.equal([['event Synced', 'Synced', 'default/good']]);
    // The run the Secret's Added set off found it unchanged: its request sent only the GET.
    const again = tracing.runs('mirror').filter((r) => r.attributes['rxkube.reconcile.key'] === 'default/good')[1];
    expect(tracing.childrenOf(again as ReadableSpan).map((c) => [c.name, c.attributes['http.response.status_code']])).to.deep.equal([['GET /api/v1/namespaces/{namespace}/secrets/{name}', 200]]);
  });

  it("links another controller's run to the run that wrote its object, through rxkube.io/traceparent", async () => {
    const { tracing, read, causes } = await traced();
    const parent = tracing.runs('mirror').find((r) => r.attributes['rxkube.reconcile.key'] === 'default/good');
    const secret = await read('good');
    const ctx = tracing.childrenOf(parent as ReadableSpan)[0]?.spanContext();
    expect(secret.metadata.annotations?.[TRACEPARENT_ANNOTATION]).to.equal(`00-${ctx?.traceId}-${ctx?.spanId}-01`);
    expect(ctx?.traceId).to.equal(parent?.spanContext().traceId);
    const [childRun] = tracing.runs('secret-reader').filter((r) => r.attributes['rxkube.reconcile.key'] === 'default/good');
    const link = childRun?.links.find((l) => l.attributes?.['rxkube.trigger.via'] === 'for');
    expect(link?.context).to.deep.include({ traceId: ctx?.traceId, spanId: ctx?.spanId, isRemote: true });
    expect(tracing.childrenOf(childRun as ReadableSpan).map((c) => c.name)).to.deep.equal(['GET /api/v1/namespaces/{namespace}/secrets/{name}']);
    // ctx.cause says the same to the reconcile.
    expect(causes.find((c) => c.key === 'default/good')?.cause).to.deep.equal({ via: 'for', resource: 'secrets', delta: 'Added', objectKey: 'default/good' });
  });

  it('adds no write and no reconcile: the annotation rides on writes that happen anyway, and an unchanged createOrUpdate stays unwritten', async () => {
    const on = await traced(true);
    const off = await traced(false);
    expect(on.outcomes).to.deep.equal(off.outcomes);
    const writes = (r: typeof on) => only(r.entries, 'write').map((w) => `${w.key} ${w.verb} ${w.code} ${(w.body as { result?: string }).result}`);
    expect(writes(on)).to.deep.equal(writes(off));
    const [withAnnotation, without] = [await on.read('good'), await off.read('good')];
    expect(withAnnotation.metadata.resourceVersion).to.equal(without.metadata.resourceVersion);
    expect(withAnnotation.metadata.annotations?.[TRACEPARENT_ANNOTATION]).to.be.a('string');
    expect(without.metadata.annotations?.[TRACEPARENT_ANNOTATION]).to.equal(undefined);
    expect(on.tracing.runs('secret-reader')).to.have.length(off.tracing.runs('secret-reader').length);
  });
});

describe('the traced client and the triggers from outside', () => {
  it("links a run an external trigger set off to that trigger, by its name and key", async () => {
    const tracing = inMemoryTracing();
    const s = scriptedController((scheduler) => ({ tracing: { tracerProvider: tracing.provider }, triggers: [{ name: 'git-push', keys: timer(2_000, scheduler).pipe(map(() => 'default/good')) }] }));
    s.ctl.subscribe();
    await runVirtualTime(s.scheduler, { until: 3_000 });
    const pushed = tracing.runs('mirror').find((r) => linkVia(r).includes('trigger'));
    expect(pushed?.links.map((l) => l.attributes)).to.deep.include({ 'rxkube.trigger.via': 'trigger', 'rxkube.trigger.resource': 'git-push', 'rxkube.trigger.delta': 'Sync', 'rxkube.trigger.object': 'default/good' });
    expect(pushed?.attributes['rxkube.reconcile.key']).to.equal('default/good');
  });

  it('stamps no apply, update or patch, even with annotate: sent every run, they would change the object each time', async () => {
    const tracing = inMemoryTracing();
    const scheduler = new TestScheduler(() => undefined);
    const inner = memoryClient({ scheduler });
    const run = tracing.provider.getTracer('test').startSpan('run');
    const client = new SpanClient(inner, { tracer: tracing.provider.getTracer('test'), parent: () => run, now: () => scheduler.now(), annotate: true });
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' }, data: { a: '1' } } as KubeObject;
    const versions: (string | undefined)[] = [];
    const go = async () => {
      versions.push((await client.apply(cm, { force: true })).metadata.resourceVersion);
      versions.push((await client.apply(cm, { force: true })).metadata.resourceVersion);
      versions.push((await client.patchMerge<KubeObject>(cm, { data: { a: '1' } })).metadata.resourceVersion);
      const current = await client.get<KubeObject>(cm);
      const updated = await client.update(current);
      versions.push(updated.metadata.resourceVersion);
      return updated;
    };
    const done = go();
    await runVirtualTime(scheduler, { until: 1_000 });
    const last = await done;
    expect(new Set(versions).size, versions.join(' ')).to.equal(1);
    expect(last.metadata.annotations?.[TRACEPARENT_ANNOTATION]).to.equal(undefined);
    expect(tracing.spans().filter((x) => x.parentSpanContext?.spanId === run.spanContext().spanId).map((x) => x.attributes['rxkube.request.verb'])).to.deep.equal(['apply', 'apply', 'patchMerge', 'get', 'update']);
  });
});

describe('controller() without an OpenTelemetry SDK', () => {
  it('makes no tracer, no span and no per-run wrapper: the run gets the very client it was given, and ctx.cause stays unknown', async () => {
    expect(trace.getTracerProvider()).to.be.instanceOf(ProxyTracerProvider);
    const calls: string[] = [];
    const proto = ProxyTracerProvider.prototype;
    const getTracer = proto.getTracer;
    proto.getTracer = function (this: ProxyTracerProvider, ...args: Parameters<typeof getTracer>) {
      calls.push(args[0]);
      return getTracer.apply(this, args);
    };
    try {
      const clients: unknown[] = [];
      const causes: unknown[] = [];
      const s = scriptedController((_scheduler, client) => ({
        reconcile: (_key, ctx) => {
          clients.push(ctx.client === client);
          causes.push(ctx.cause);
        },
      }));
      s.ctl.subscribe();
      await runVirtualTime(s.scheduler, { until: 1_000 });
      expect(clients.length).to.be.greaterThan(1);
      expect(new Set(clients)).to.deep.equal(new Set([true]));
      expect(new Set(causes)).to.deep.equal(new Set([undefined]));
      expect(calls).to.deep.equal([]);
    } finally {
      proto.getTracer = getTracer;
    }
  });

  it('still tells ctx.cause while someone reads the timeline: the trigger, then a retry the queue scheduled', async () => {
    const causes: { key: string; cause: RunCause | undefined }[] = [];
    let failures = 0;
    const s = scriptedController(() => ({
      reconcile: (key, ctx) => {
        causes.push({ key, cause: ctx.cause });
        if (key === 'default/bad' && failures++ < 1) throw new Error('once');
      },
    }));
    s.ctl.timeline.subscribe(() => undefined);
    s.ctl.subscribe();
    await runVirtualTime(s.scheduler, { until: 1_000 });
    expect(causes.filter((c) => c.key === 'default/bad').map((c) => c.cause)).to.deep.equal([
      { via: 'for', resource: 'configmaps', delta: 'Added', objectKey: 'default/bad', initial: true },
      { via: 'retry' },
    ]);
  });
});
