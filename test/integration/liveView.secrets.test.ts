import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { runController, silentLogger, type KubeObject, type RunningController } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { waitFor } from '../support/waitFor.js';

const secrets = { version: 'v1', resource: 'secrets', kind: 'Secret' };
const password = 'hunter2-correct-horse';
const encoded = Buffer.from(password).toString('base64');

/** The first event of the live view's stream (its snapshot), read over HTTP and the stream closed. */
async function firstEvent(url: string): Promise<string> {
  const abort = new AbortController();
  const res = await fetch(url, { signal: abort.signal });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (!text.includes('\n\n', text.indexOf('data: '))) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
  } finally {
    abort.abort();
    await reader.cancel().catch(() => {});
  }
  return text;
}

/** A controller of Secrets on the embedded API server: what its live view sends, read over real HTTP. */
describe('the live view of a controller of Secrets', () => {
  let api: ApiServer;
  let running: RunningController<KubeObject> | undefined;

  beforeEach(async () => {
    api = await startApiServer({ logger: silentLogger });
  });
  afterEach(async () => {
    running?.stop();
    await running?.done.catch(() => {});
    running = undefined;
    await api.close();
  });

  it("shows a Secret's keys but never its values: in a key's detail (data, stringData, kubectl's last-applied annotation), the snapshot, the stream and the history", async () => {
    const reconciled = new Set<string>();
    running = await runController<KubeObject>({
      name: 'secrets',
      kubeConfig: api.kubeConfig(),
      for: secrets,
      health: { port: 0, host: '127.0.0.1' },
      liveView: { port: 0 },
      handleSignals: false,
      logger: silentLogger,
      onOutcome: (outcome) => reconciled.add(outcome.key),
      reconcile: async (key, ctx) => {
        // A read through ctx.client: its answer, the Secret, is a write entry of the timeline.
        await ctx.client.get({ apiVersion: 'v1', kind: 'Secret', namespace: ctx.namespace, name: ctx.name });
        if (key === 'default/failing') throw new Error('the reconcile failed');
      },
    });
    const lastApplied = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'default' }, stringData: { password } });
    const core = api.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: 'db', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied, team: 'storage' } }, data: { password: encoded }, stringData: { token: password } },
    });
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'failing' }, data: { password: encoded } } });
    await waitFor(() => reconciled.has('default/db') && reconciled.has('default/failing'), 'both Secrets to be reconciled');

    const base = running.liveView as string;
    const detailText = await (await fetch(`${base}api/key?key=default/db`)).text();
    const detail = JSON.parse(detailText) as { cached: boolean; object: KubeObject & { data?: Record<string, string>; stringData?: Record<string, string> }; history: Array<{ type: string; verb?: string }> };
    expect(detail.cached).to.equal(true);
    // The keys stay (a reader sees which exist), the values do not; other annotations stay as they are. (kube-apiserver merges
    // stringData into data; the embedded server keeps it apart: either way, every value reads the same.)
    expect({ ...detail.object.data, ...detail.object.stringData }).to.deep.equal({ password: '(redacted)', token: '(redacted)' });
    expect(detail.object.metadata.annotations).to.deep.equal({ 'kubectl.kubernetes.io/last-applied-configuration': '(redacted)', team: 'storage' });
    expect(detail.history.map((e) => e.verb ?? e.type)).to.include('get');

    const payloads = {
      detail: detailText,
      failingDetail: await (await fetch(`${base}api/key?key=default/failing`)).text(),
      state: await (await fetch(`${base}api/state`)).text(),
      stream: await firstEvent(`${base}events`),
    };
    expect(payloads.stream).to.contain('event: snapshot');
    for (const [name, text] of Object.entries(payloads)) {
      expect(text, name).to.not.contain(encoded);
      expect(text, name).to.not.contain(password);
    }
  });
});
