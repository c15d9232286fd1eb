import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type KubeObject } from 'rxkube';
import { waitFor } from '../../test/support/waitFor.js';
import { useEmbeddedServer } from '../support/harness.js';
import { gitSyncController } from './controller.js';
import { installApplicationCrd } from './crd.js';
import { servePushEndpoint, type PushEndpoint } from './pushes.js';
import { API_VERSION, KIND, type Application } from './types.js';
import { initWorkTree, type WorkTree } from './workTree.js';

const configMap = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pushed\ndata:\n  v: "${v}"\n`;

describe('examples/gitsync: push notifications against the embedded API server', function () {
  this.timeout(20_000);
  const h = useEmbeddedServer();
  let dir: string;
  let repo: WorkTree;
  let endpoint: PushEndpoint | undefined;
  const secret = 'push-secret';

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gitsync-push-'));
    repo = await initWorkTree(join(dir, 'repo'));
    await installApplicationCrd(h.client);
  });
  afterEach(async () => {
    await h.stopAll();
    await endpoint?.close();
    endpoint = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const app = () =>
    h.server.snapshot({ group: 'gitsync.rxkube.dev', version: 'v1', resource: 'applications', namespace: 'default' }).find((a) => a.metadata.name === 'web') as Application | undefined;
  const cm = () => h.server.snapshot({ group: '', version: 'v1', resource: 'configmaps', namespace: 'default' }).find((c) => c.metadata.name === 'pushed') as (KubeObject & { data?: Record<string, string> }) | undefined;
  const push = (body: string, headers: Record<string, string> = {}) =>
    fetch(endpoint?.url ?? '', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const signed = (body: string) => ({ 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` });

  it('syncs a commit as soon as the Git provider notifies the push, long before the hourly poll, and refuses an unsigned notification', async () => {
    endpoint = await servePushEndpoint({ secret });
    const first = await repo.commit({ 'deploy/cm.yaml': configMap('1') }, 'first');
    await h.client.create<Application>({ apiVersion: API_VERSION, kind: KIND, metadata: { name: 'web', namespace: 'default' }, spec: { repoURL: repo.dir, revision: 'main', path: 'deploy', pollIntervalSeconds: 3600 } });
    const pushes = endpoint.pushes;
    h.start((signal) => gitSyncController(h.server.kubeConfig(), { logger: silentLogger, cacheDir: join(dir, 'cache'), pushes, signal }));
    await waitFor(() => app()?.status?.sync?.revision === first, 'the first sync');
    // Its own status write brings it back once; after that, only a poll (an hour away) or a push runs it.
    await waitFor(() => h.outcomes.filter((o) => o.key === 'default/web').length >= 2, 'the run after its own writes');
    const second = await repo.commit({ 'deploy/cm.yaml': configMap('2') }, 'second');

    const body = JSON.stringify({ ref: 'refs/heads/main', repository: { clone_url: `${repo.dir}.git`, html_url: 'https://example.invalid/web' } });
    const unsigned = await push(body);
    expect(unsigned.status).to.equal(401);
    const forged = await push(body, { 'x-hub-signature-256': 'sha256=' + '0'.repeat(64) });
    expect(forged.status).to.equal(401);
    expect((await push('not json', signed('not json'))).status).to.equal(400);
    const runs = h.outcomes.length;
    expect(app()?.status?.sync?.revision, 'nothing ran for the refused notifications').to.equal(first);

    const accepted = await push(body, signed(body));
    expect(accepted.status).to.equal(202);
    await waitFor(() => app()?.status?.sync?.revision === second, 'the sync of the pushed commit');
    expect(cm()?.data).to.deep.equal({ v: '2' });
    // The outcome comes once the run ends, after the status write the wait above saw.
    await waitFor(() => h.outcomes.length > runs, 'the outcome of the run the push started');
  });
});
