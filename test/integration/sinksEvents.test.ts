import { EventsV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { silentLogger, type Logger, kubeClient, type KubeClient, eventRecorder, type EventInput, type EventRecorder, type KubeObject } from 'rxkube';
import { kubeMicroTime } from '../../src/util/time.js';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { RecordingScheduler } from '../sinks/recordingScheduler.js';

interface EventObject extends KubeObject {
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  type: string;
  note?: string;
  regarding: Record<string, string>;
  related?: Record<string, string>;
  series?: { count: number; lastObservedTime: string };
}

const minute = 60_000;
const scaled: EventInput = { type: 'Normal', reason: 'Scaled', action: 'Scale', note: 'scaled to 3' };

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (fields: Record<string, unknown> | string, message?: string) =>
    lines.push(`${level} ${message ?? ''} ${JSON.stringify(fields)}`);
  return { lines, debug: () => {}, info: log('info'), warn: log('warn'), error: log('error') };
}

describe('event recorder against the embedded API server', () => {
  let server: ApiServer;
  let client: KubeClient;
  let scheduler: RecordingScheduler;
  let recorder: EventRecorder;
  let app: KubeObject;

  const events = (namespace = 'default') =>
    server.snapshot({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace }) as EventObject[];
  const eventWrites = () => server.requestLog.filter((r) => r.resource === 'events' && (r.verb === 'create' || r.verb === 'patch'));

  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
    scheduler = new RecordingScheduler();
    scheduler.advance(Date.UTC(2024, 4, 1, 10, 0, 0));
    client = kubeClient(server.kubeConfig(), { logger: silentLogger, scheduler });
    recorder = eventRecorder({
      client,
      reportingController: 'example.com/app-controller',
      reportingInstance: 'app-controller-7d9f',
      scheduler,
      logger: silentLogger,
      random: () => 0.5,
    });
    app = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'default' } });
  });
  afterEach(async () => {
    await recorder.close();
    await server.close();
  });

  it('creates an events.k8s.io/v1 Event about the object, with the reporter and a MicroTime', async () => {
    expect(recorder.record(app, { ...scaled, related: { apiVersion: 'v1', kind: 'Pod', name: 'app-1', namespace: 'default' } })).to.equal(
      undefined,
    );
    await recorder.flush();
    const [event, ...others] = events();
    expect(others).to.deep.equal([]);
    expect(event?.metadata.name).to.match(/^app\.[0-9a-f]+$/);
    expect(event).to.deep.include({
      reportingController: 'example.com/app-controller',
      reportingInstance: 'app-controller-7d9f',
      action: 'Scale',
      reason: 'Scaled',
      type: 'Normal',
      note: 'scaled to 3',
      eventTime: '2024-05-01T10:00:00.000000Z',
    });
    expect(event?.regarding).to.deep.equal({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'app',
      namespace: 'default',
      uid: app.metadata.uid,
      resourceVersion: app.metadata.resourceVersion,
    });
    expect(event?.related).to.deep.equal({ apiVersion: 'v1', kind: 'Pod', name: 'app-1', namespace: 'default' });
    expect(event?.series).to.equal(undefined);
    const viaClientNode = await server.kubeConfig().makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: 'default' });
    expect(viaClientNode.items.map((e) => e.reason)).to.deep.equal(['Scaled']);
  });

  it('patches one Event series for repeats within 6 minutes, its count rising, instead of creating more', async () => {
    recorder.record(app, scaled);
    await recorder.flush();
    scheduler.advance(minute);
    recorder.record(app, { ...scaled, note: 'a later note does not start a new series' });
    await recorder.flush();
    let [event] = events();
    expect(event?.series).to.deep.equal({ count: 2, lastObservedTime: '2024-05-01T10:01:00.000000Z' });
    scheduler.advance(5 * minute);
    recorder.record(app, scaled);
    await recorder.flush();
    [event] = events();
    expect(events()).to.have.length(1);
    expect(event?.series).to.deep.equal({ count: 3, lastObservedTime: '2024-05-01T10:06:00.000000Z' });
    expect(event?.note).to.equal('scaled to 3');
    expect(eventWrites().map((r) => r.verb)).to.deep.equal(['create', 'patch', 'patch']);
    expect(recorder.stats()).to.deep.include({ recorded: 3, created: 1, patched: 2, failed: 0 });
  });

  it('starts a new Event when a repeat comes 6 minutes or more after the last one', async () => {
    recorder.record(app, scaled);
    await recorder.flush();
    scheduler.advance(6 * minute);
    recorder.record(app, scaled);
    await recorder.flush();
    const all = events();
    expect(all).to.have.length(2);
    expect(all.map((e) => e.series)).to.deep.equal([undefined, undefined]);
    expect(all.map((e) => e.eventTime).sort()).to.deep.equal(['2024-05-01T10:00:00.000000Z', '2024-05-01T10:06:00.000000Z']);
  });

  it('keeps events that differ in reason, type, action, object version or related object apart', async () => {
    recorder.record(app, scaled);
    recorder.record(app, { ...scaled, reason: 'Failed' });
    recorder.record(app, { ...scaled, type: 'Warning' });
    recorder.record(app, { ...scaled, action: 'Other' });
    recorder.record({ ...app, metadata: { ...app.metadata, resourceVersion: '999' } }, scaled);
    recorder.record(app, { ...scaled, related: { kind: 'Pod', name: 'p' } });
    await recorder.flush();
    expect(events()).to.have.length(6);
    expect(events().every((e) => e.series === undefined)).to.equal(true);
  });

  it('coalesces a burst of repeats into a few writes that carry the final count', async () => {
    for (let i = 0; i < 50; i++) recorder.record(app, scaled);
    await recorder.flush();
    const [event] = events();
    expect(event?.series?.count).to.equal(50);
    expect(eventWrites().length).to.be.at.most(3);
    expect(recorder.stats()).to.deep.include({ recorded: 50, failed: 0 });
  });

  it('creates the series anew when its Event was deleted meanwhile', async () => {
    recorder.record(app, scaled);
    await recorder.flush();
    const [first] = events();
    await client.remove(first as KubeObject);
    recorder.record(app, scaled);
    await recorder.flush();
    const [again, ...rest] = events();
    expect(rest).to.deep.equal([]);
    expect(again?.metadata.name).to.equal(first?.metadata.name);
    expect(again?.series?.count).to.equal(2);
  });

  it('forgets series older than the window as new events come, so memory follows recent events', async () => {
    recorder.record(app, scaled);
    recorder.record(app, { ...scaled, reason: 'Failed' });
    recorder.record(app, { ...scaled, reason: 'Other' });
    await recorder.flush();
    expect(recorder.stats().tracked).to.equal(3);
    scheduler.advance(7 * minute);
    recorder.record(app, { ...scaled, reason: 'Later' });
    await recorder.flush();
    expect(recorder.stats().tracked).to.equal(1);
  });

  it('puts events about cluster-scoped objects in the default namespace', async () => {
    recorder.record({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', uid: 'u1' } }, scaled);
    await recorder.flush();
    expect(events('default').map((e) => e.regarding.name)).to.deep.equal(['team-a']);
  });

  it('retries a write the server could not take (503) after client-go-like waits, through the scheduler', async () => {
    server.faults.failNext(2, { code: 503, verb: 'create', resource: 'events' });
    recorder.record(app, scaled);
    await recorder.flush();
    expect(events()).to.have.length(1);
    expect(scheduler.delays).to.deep.equal([10_000, 10_000]);
    expect(recorder.stats()).to.deep.include({ created: 1, failed: 0 });
  });

  it('never throws into the caller nor blocks it: refusals and invalid events are logged and counted', async () => {
    const logger = recordingLogger();
    const quiet = eventRecorder({ client, reportingController: 'c', reportingInstance: 'i', scheduler, logger });
    server.faults.forbid({ verb: 'create', resource: 'events' });
    expect(() => quiet.record(app, scaled)).to.not.throw();
    expect(() => quiet.record(app, { ...scaled, type: 'Bad' as 'Normal' })).to.not.throw();
    expect(() => quiet.record({ kind: 'ConfigMap', metadata: {} } as KubeObject, scaled)).to.not.throw();
    expect(() => quiet.record(null as unknown as KubeObject, null as unknown as EventInput)).to.not.throw();
    await quiet.flush();
    expect(events()).to.deep.equal([]);
    expect(quiet.stats()).to.deep.include({ recorded: 1, created: 0, failed: 4 });
    expect(logger.lines.filter((l) => l.startsWith('error'))).to.have.length(4);
    expect(logger.lines.some((l) => l.includes('forbidden'))).to.equal(true);
    expect(logger.lines.some((l) => l.includes('event type must be \\"Normal\\" or \\"Warning\\"'))).to.equal(true);
    await quiet.close();
  });

  it('gives up after its attempts when the server stays unreachable', async () => {
    const unreachable = eventRecorder({
      kubeConfig: server.kubeConfig(),
      reportingController: 'c',
      reportingInstance: 'i',
      scheduler,
      logger: silentLogger,
      maxAttempts: 3,
      retryDelay: 100,
      random: () => 0,
    });
    await server.close();
    unreachable.record(app, scaled);
    await unreachable.flush();
    expect(unreachable.stats()).to.deep.include({ created: 0, failed: 1 });
    expect(scheduler.delays.slice(-2)).to.deep.equal([75, 75]);
    server = await startApiServer({ logger: silentLogger });
  });

  it('drops events recorded after close, counting them', async () => {
    await recorder.close();
    recorder.record(app, scaled);
    await recorder.flush();
    expect(events()).to.deep.equal([]);
    expect(recorder.stats().dropped).to.equal(1);
  });

  it('refuses to be made without a reporter or a way to write', () => {
    expect(() => eventRecorder({ client, reportingController: '', reportingInstance: 'i' })).to.throw(TypeError, /reportingController/);
    expect(() => eventRecorder({ reportingController: 'c', reportingInstance: 'i' })).to.throw(TypeError, /a client or a kubeConfig/);
  });

  it('formats MicroTime with six fractional digits', () => {
    expect(kubeMicroTime(Date.UTC(2024, 0, 2, 3, 4, 5, 678))).to.equal('2024-01-02T03:04:05.678000Z');
  });
});
