import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runController, silentLogger, type ControllerOptions, type ControllerReconciler, type KubeObject, type RunningController } from 'rxkube';
import { readRecording, replay, startApiServer, type ApiServer } from 'rxkube/testing';
import { waitFor } from '../support/waitFor.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default' };
const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespace: 'default' };

/** runController's `record`, over real HTTP: the file it leaves, read back and replayed. */
describe('runController({ record }) against the embedded API server', () => {
  let server: ApiServer;
  let dir: string;
  let run: RunningController<KubeObject> | undefined;

  beforeEach(async () => {
    server = await startApiServer();
    dir = await mkdtemp(join(tmpdir(), 'rxkube-run-record-'));
  });
  afterEach(async () => {
    run?.stop();
    await run?.done.catch(() => undefined);
    run = undefined;
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('records the informers\' objects (Secrets redacted), the runs, their calls and answers; done waits for the file; it replays alike', async () => {
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'token' }, data: { password: Buffer.from('hunter2').toString('base64') } } });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { n: '1' } } });
    const path = join(dir, 'run.jsonl');
    const reconcile: ControllerReconciler<KubeObject> = async (key, ctx) => {
      await ctx.client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ctx.namespace, name: ctx.name });
      expect(key).to.equal('default/a');
    };
    const watches: ControllerOptions<KubeObject>['watches'] = [{ resource: secrets, map: () => [] }];
    const options = { for: configmaps, watches, reconcile };
    const seen: string[] = [];
    run = await runController<KubeObject>({
      ...options,
      name: 'recorded',
      kubeConfig: server.kubeConfig(),
      logger: silentLogger,
      handleSignals: false,
      health: false,
      record: path,
      onOutcome: (o) => seen.push(`${o.key} ${o.result}`),
    });
    await waitFor(() => seen.includes('default/a success'), 'the reconcile');
    run.stop();
    await run.done;
    run = undefined;

    const recording = await readRecording(path);
    expect(recording.header).to.deep.include({ controller: 'recorded', part: 0 });
    expect(recording.header.options).to.deep.include({ concurrency: 1, redactSecrets: true });
    const types = recording.entries.map((e) => e.type);
    expect(types).to.include.members(['informer', 'trigger', 'queue', 'run-start', 'write', 'run-end']);
    const listedSecret = recording.entries.find((e) => e.type === 'informer' && e.resource === 'secrets' && e.event === 'Listed');
    expect((listedSecret as { object?: { data?: unknown } } | undefined)?.object?.data).to.deep.equal({ password: '(redacted)' });
    expect(await readFile(path, 'utf8')).not.to.include(Buffer.from('hunter2').toString('base64'));
    const get = recording.entries.find((e) => e.type === 'write');
    expect(get).to.deep.include({ verb: 'get', resource: 'ConfigMap', objectKey: 'default/a', code: 200 });

    const replayed = await replay(recording, { ...options, reconcile });
    expect(replayed.replayed).to.equal(1);
    expect(replayed.differ).to.equal(0);
  });

  it("redacts Secrets in the answers of a reconcile's real get, list and createOrUpdate of Secrets", async () => {
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    const values = ['hunter2', 'correct horse', 'derived-value'];
    const encoded = (v: string): string => Buffer.from(v).toString('base64');
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'token' }, data: { password: encoded(values[0] as string) } } });
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'other' }, data: { phrase: encoded(values[1] as string) } } });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { n: '1' } } });
    const path = join(dir, 'run.jsonl');
    const reconcile: ControllerReconciler<KubeObject> = async (_key, ctx) => {
      await ctx.client.get({ apiVersion: 'v1', kind: 'Secret', namespace: ctx.namespace, name: 'token' });
      await ctx.client.list({ apiVersion: 'v1', kind: 'Secret', namespace: ctx.namespace });
      const derived = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'derived', namespace: ctx.namespace }, data: { out: encoded(values[2] as string) } };
      await ctx.client.createOrUpdate<KubeObject>(derived, (o) => ({ ...o, data: derived.data }));
    };
    const seen: string[] = [];
    run = await runController<KubeObject>({
      for: configmaps,
      reconcile,
      name: 'recorded',
      kubeConfig: server.kubeConfig(),
      logger: silentLogger,
      handleSignals: false,
      health: false,
      record: path,
      onOutcome: (o) => seen.push(`${o.key} ${o.result}`),
    });
    await waitFor(() => seen.includes('default/a success'), 'the reconcile');
    run.stop();
    await run.done;
    run = undefined;

    const recording = await readRecording(path);
    const writes = recording.entries.filter((e) => e.type === 'write');
    expect(writes.map((e) => [e.verb, e.resource, e.code])).to.deep.equal([
      ['get', 'Secret', 200],
      ['list', 'Secret', 200],
      ['createOrUpdate', 'Secret', 201],
    ]);
    const [got, listed, written] = writes.map((e) => e.body) as [{ data: unknown }, { metadata: { name: string }; data: unknown }[], { result: string; object: { data: unknown } }];
    expect(got.data).to.deep.equal({ password: '(redacted)' });
    expect(listed.map((s) => [s.metadata.name, s.data])).to.deep.equal([
      ['other', { phrase: '(redacted)' }],
      ['token', { password: '(redacted)' }],
    ]);
    expect(written).to.deep.include({ result: 'created' });
    expect(written.object.data).to.deep.equal({ out: '(redacted)' });
    const text = await readFile(path, 'utf8');
    for (const v of values) {
      expect(text).not.to.include(encoded(v));
      expect(text).not.to.include(v);
    }
  });
});
