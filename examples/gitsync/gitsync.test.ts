import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { stringify } from 'yaml';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findCondition, silentLogger, type KubeObject } from 'rxkube';
import { kubectlIn, itKubectl } from '../../test/integration/kubectl.helpers.js';
import { waitFor } from '../../test/support/waitFor.js';
import { useEmbeddedServer } from '../support/harness.js';
import { gitSyncController } from './controller.js';
import { serveGitOverHttp } from './gitHttpServer.js';
import { applicationCrd, installApplicationCrd } from './crd.js';
import { API_VERSION, INVENTORY_LABEL, KIND, type Application, type ApplicationSpec } from './types.js';
import { initWorkTree, type WorkTree } from './workTree.js';

const configMap = (name: string, data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${Object.entries(data).map(([k, v]) => `  ${k}: "${v}"`).join('\n')}\n`;
const deployment = (name: string, replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name} }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec: { containers: [{ name: web, image: nginx }] }
`;

const cmRef = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name });

describe('examples/gitsync against the embedded API server', function () {
  this.timeout(20_000);
  const h = useEmbeddedServer();
  let dir: string;
  let repo: WorkTree;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gitsync-test-'));
    repo = await initWorkTree(join(dir, 'repo'));
    await installApplicationCrd(h.client);
  });
  afterEach(async () => {
    await h.stopAll();
    await rm(dir, { recursive: true, force: true });
  });

  // No test waits for a timer: the Applications poll hourly, and a test that needs the next run touches the
  // Application (polling's cadence is polling.marble.test.ts's, in virtual time).
  const start = () =>
    h.start((signal) =>
      gitSyncController(h.server.kubeConfig(), { logger: silentLogger, cacheDir: join(dir, 'cache'), signal }),
    );
  const createApp = (name: string, spec: Partial<ApplicationSpec> = {}) =>
    h.client.create<Application>({ apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace: 'default' }, spec: { repoURL: repo.dir, revision: 'main', path: 'deploy', pollIntervalSeconds: 3600, ...spec } });
  const app = (name = 'web'): Application | undefined =>
    h.server.snapshot({ group: 'gitsync.rxkube.dev', version: 'v1', resource: 'applications', namespace: 'default' }).find((a) => a.metadata.name === name) as Application | undefined;
  const configMaps = () => h.server.snapshot({ group: '', version: 'v1', resource: 'configmaps', namespace: 'default' }) as (KubeObject & { data?: Record<string, string> })[];
  const cm = (name: string) => configMaps().find((c) => c.metadata.name === name);
  const syncedAt = (commit: string, name = 'web') => app(name)?.status?.sync?.revision === commit && app(name)?.status?.sync?.status === 'Synced';
  const notes = (reason: string) => h.events(reason).map((e) => e.note ?? '');
  /**
   * Waits until the Application has run twice: its first sync, and the run its own status write caused.
   * Then, when it applies no watched kind, nothing makes it run again before `touch` or a poll.
   */
  const idle = () => waitFor(() => h.outcomes.filter((o) => o.key === 'default/web').length >= 2, 'the run after its own writes');
  let touches = 0;
  /** Makes the controller run the Application's reconcile now, as the next poll would: a change to it (an annotation) is an event. */
  const touch = (name = 'web', namespace = 'default') =>
    h.client.patchMerge({ apiVersion: API_VERSION, kind: KIND, namespace, name }, { metadata: { annotations: { 'test.rxkube.dev/touched': String(++touches) } } });

  it('applies every manifest of the folder at the branch, labelled with the inventory label, and reports Synced with the commit, each object and a Synced Event', async () => {
    const commit = await repo.commit(
      { 'deploy/config.yaml': `${configMap('one', { a: '1' })}---\n${configMap('two', { b: '2' })}`, 'deploy/web.json': JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { ports: [{ port: 80 }] } }), 'README.md': 'not a manifest', 'other/ignored.yaml': configMap('outside', { x: '1' }) },
      'first',
    );
    await createApp('web');
    start();
    await waitFor(() => syncedAt(commit), 'the Application to sync the first commit');
    expect(cm('one')?.data).to.deep.equal({ a: '1' });
    expect(cm('two')?.metadata.labels).to.deep.equal({ [INVENTORY_LABEL]: 'web' });
    expect(cm('outside')).to.equal(undefined);
    const status = app()!.status!;
    expect(status.health).to.equal('Healthy');
    expect(status.resources?.map((r) => `${r.kind}/${r.name}:${r.status}:${r.health}:${r.file}`)).to.deep.equal([
      'ConfigMap/one:Synced:Healthy:deploy/config.yaml',
      'ConfigMap/two:Synced:Healthy:deploy/config.yaml',
      'Service/web:Synced:Healthy:deploy/web.json',
    ]);
    expect(findCondition(status.conditions, 'Synced')).to.include({ status: 'True', reason: 'Synced' });
    await waitFor(() => h.events('Synced').length > 0, 'the Synced Event');
    expect(notes('Synced')[0]).to.equal(`commit ${commit.slice(0, 7)}: 3 created, 0 updated, 0 unchanged, 0 pruned`);
    const live = await h.client.get(cmRef('one'));
    const managedFields = (live.metadata as { managedFields?: { manager: string; operation: string }[] }).managedFields;
    expect(managedFields?.map((m) => `${m.manager}:${m.operation}`)).to.deep.equal(['gitsync:Apply']);
    expect(live.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}`)).to.deep.equal(['Application/web']);
  });

  it('follows the branch: a manifest added, changed and removed in new commits is created, updated and pruned', async () => {
    const first = await repo.commit({ 'deploy/a.yaml': configMap('a', { v: '1' }), 'deploy/b.yaml': configMap('b', { v: '1' }) }, 'a and b');
    await createApp('web');
    start();
    await waitFor(() => syncedAt(first), 'the first commit');
    const second = await repo.commit({ 'deploy/a.yaml': configMap('a', { v: '2' }), 'deploy/b.yaml': null, 'deploy/c.yaml': configMap('c', { v: '1' }) }, 'change a, drop b, add c');
    await touch();
    await waitFor(() => syncedAt(second), 'the second commit');
    expect(cm('a')?.data).to.deep.equal({ v: '2' });
    expect(cm('b')).to.equal(undefined);
    expect(cm('c')?.data).to.deep.equal({ v: '1' });
    expect(app()!.status!.resources?.map((r) => r.name)).to.deep.equal(['a', 'c']);
    await waitFor(() => notes('Synced').length === 2, 'the second Synced Event');
    expect(notes('Synced')).to.include(`commit ${second.slice(0, 7)}: 1 created, 1 updated, 0 unchanged, 1 pruned (ConfigMap b)`);
  });

  it('prunes only what it applied: an object without its label is left alone, also when a manifest names it', async () => {
    await h.client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'theirs', namespace: 'default' }, data: { owner: 'someone' } });
    await h.client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bystander', namespace: 'default', labels: { [INVENTORY_LABEL]: 'another-app' } }, data: { owner: 'another' } });
    const first = await repo.commit({ 'deploy/mine.yaml': configMap('mine', { v: '1' }), 'deploy/theirs.yaml': configMap('theirs', { owner: 'gitsync' }) }, 'mine and theirs');
    await createApp('web');
    start();
    await waitFor(() => app()?.status?.sync?.revision === first, 'the first commit');
    const theirs = app()!.status!.resources!.find((r) => r.name === 'theirs');
    expect(theirs).to.include({ status: 'Failed', health: 'Missing' });
    expect(theirs?.message).to.match(/exists and is not this Application's/);
    expect(app()!.status!.sync?.status).to.equal('OutOfSync');
    expect(cm('theirs')?.data).to.deep.equal({ owner: 'someone' });
    const second = await repo.commit({ 'deploy/mine.yaml': null, 'deploy/theirs.yaml': null, 'deploy/keep.yaml': configMap('keep', { v: '1' }) }, 'only keep');
    await touch();
    await waitFor(() => syncedAt(second), 'the second commit');
    expect(cm('mine')).to.equal(undefined);
    expect(cm('theirs')?.data).to.deep.equal({ owner: 'someone' });
    expect(cm('bystander')?.data).to.deep.equal({ owner: 'another' });
    expect(cm('keep')?.data).to.deep.equal({ v: '1' });
  });

  it('corrects a change made by hand to a watched kind at once, with a DriftCorrected Event', async () => {
    const commit = await repo.commit({ 'deploy/a.yaml': configMap('a', { v: '1' }) }, 'a');
    await createApp('web');
    start();
    await waitFor(() => syncedAt(commit), 'the commit');
    await h.client.patchMerge(cmRef('a'), { data: { v: 'by hand' } });
    await waitFor(() => cm('a')?.data?.v === '1', 'the ConfigMap restored');
    await waitFor(() => notes('DriftCorrected').length === 1, 'the DriftCorrected Event');
    expect(notes('DriftCorrected')[0]).to.equal(`ConfigMap a changed in the cluster; restored to commit ${commit.slice(0, 7)}`);
    expect(app()?.status?.sync?.status).to.equal('Synced');
  });

  it('corrects drift of a kind it does not watch at its next run (the next poll; here the Application touched)', async () => {
    const commit = await repo.commit({ 'deploy/sa.yaml': 'apiVersion: v1\nkind: ServiceAccount\nmetadata: { name: robot }\nautomountServiceAccountToken: false\n' }, 'sa');
    await createApp('web');
    start();
    await waitFor(() => syncedAt(commit), 'the commit');
    await idle();
    const ref = { apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'default', name: 'robot' };
    await h.client.patchMerge(ref, { automountServiceAccountToken: true });
    await touch();
    await waitFor(() => notes('DriftCorrected').length === 1, 'the correction at the next run');
    expect((await h.client.get<KubeObject & { automountServiceAccountToken?: boolean }>(ref)).automountServiceAccountToken).to.equal(false);
  });

  it('reports a Deployment Progressing until its rollout is complete, then Healthy', async () => {
    const commit = await repo.commit({ 'deploy/web.yaml': deployment('web', 2) }, 'web');
    await createApp('web');
    start();
    await waitFor(() => syncedAt(commit), 'the commit');
    expect(app()?.status?.health).to.equal('Progressing');
    expect(app()?.status?.resources?.[0]).to.include({ kind: 'Deployment', status: 'Synced', health: 'Progressing' });
    // What the Deployment controller of a real cluster would write once both replicas are up.
    await h.client.patchStatus({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' }, { status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2 } });
    await waitFor(() => app()?.status?.health === 'Healthy', 'the Application Healthy');
    expect(app()?.status?.resources?.[0]).to.include({ health: 'Healthy' });
    await h.client.patchStatus({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' }, { status: { conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] } });
    await waitFor(() => app()?.status?.health === 'Degraded', 'the Application Degraded');
    expect(app()?.status?.sync?.status, 'health is not sync: the manifest is applied as it is').to.equal('Synced');
  });

  it('reports a broken manifest (bad YAML, no kind, unknown or cluster-scoped kind, another namespace, an invalid object) in status and Events, applies the others, and holds prune back', async () => {
    const first = await repo.commit({ 'deploy/a.yaml': configMap('a', { v: '1' }), 'deploy/old.yaml': configMap('old', { v: '1' }) }, 'a and old');
    await createApp('web');
    start();
    await waitFor(() => syncedAt(first), 'the first commit');
    const second = await repo.commit(
      {
        'deploy/a.yaml': configMap('a', { v: '2' }),
        'deploy/old.yaml': null,
        'deploy/bad.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [unclosed\n',
        'deploy/nokind.yaml': 'apiVersion: v1\nmetadata: { name: x }\n',
        'deploy/unknown.yaml': 'apiVersion: nowhere.example.com/v1\nkind: Gadget\nmetadata: { name: g }\n',
        'deploy/invalid.yaml': configMap('Not_A_Valid_Name', { v: '1' }),
        'deploy/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata: { name: grabbed }\n',
        'deploy/elsewhere.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: elsewhere, namespace: kube-system }\n',
      },
      'broken',
    );
    await touch();
    await waitFor(() => app()?.status?.sync?.revision === second, 'the second commit read');
    expect(cm('a')?.data).to.deep.equal({ v: '2' });
    expect(cm('old'), 'prune is held back while manifests are broken').to.not.equal(undefined);
    const status = app()!.status!;
    expect(status.sync?.status).to.equal('OutOfSync');
    expect(status.health).to.equal('Degraded');
    expect(status.errors?.map((e) => e.file)).to.deep.equal(['deploy/bad.yaml', 'deploy/nokind.yaml']);
    expect(status.errors?.[0]?.message).to.match(/not YAML/);
    expect(status.errors?.[1]?.message).to.equal('no kind');
    const byName = Object.fromEntries(status.resources!.map((r) => [r.name, r]));
    expect(byName.a).to.include({ status: 'Synced' });
    expect(byName.g).to.include({ status: 'Failed' });
    expect(byName.g?.message).to.match(/unknown kind/);
    expect(byName.Not_A_Valid_Name).to.include({ status: 'Failed' });
    expect(byName.Not_A_Valid_Name?.message).to.match(/Invalid|invalid/);
    expect(byName.grabbed?.message).to.equal('Namespace is cluster-scoped: an Application applies only into its own namespace');
    expect(byName.elsewhere?.message).to.equal('names namespace "kube-system": an Application applies only into its own namespace "default"');
    expect(h.server.snapshot({ group: '', version: 'v1', resource: 'namespaces' }).map((n) => n.metadata.name)).to.not.include('grabbed');
    expect(findCondition(status.conditions, 'Synced')).to.include({ status: 'False', reason: 'ManifestError' });
    await waitFor(() => h.events('ManifestError').length === 1 && h.events('ApplyFailed').length === 1, 'the Warnings');
    // Fixed in the next commit: the rest applies, and what left the repository is pruned now.
    const third = await repo.commit({ 'deploy/bad.yaml': null, 'deploy/nokind.yaml': null, 'deploy/unknown.yaml': null, 'deploy/invalid.yaml': null, 'deploy/namespace.yaml': null, 'deploy/elsewhere.yaml': null }, 'fixed');
    await touch();
    await waitFor(() => syncedAt(third), 'the fixed commit');
    expect(cm('old')).to.equal(undefined);
    const [manifestError] = h.events('ManifestError');
    expect(manifestError?.note).to.match(/^deploy\/bad\.yaml: .*not YAML.*; deploy\/nokind\.yaml: no kind$/);
    expect((manifestError as { series?: unknown }).series, 'a Warning when a problem appears, not at every poll').to.equal(undefined);
    const applyFailed = h.events('ApplyFailed')[0]?.note ?? '';
    expect(applyFailed.split('; ').map((part) => part.slice(0, part.indexOf(':')))).to.deep.equal([
      'ConfigMap elsewhere (deploy/elsewhere.yaml)',
      'ConfigMap Not_A_Valid_Name (deploy/invalid.yaml)',
      'Namespace grabbed (deploy/namespace.yaml)',
      'Gadget g (deploy/unknown.yaml)',
    ]);
  });

  it('stays on a revision pinned to a commit (full or abbreviated) or a tag while the branch moves on', async () => {
    const first = await repo.commit({ 'deploy/a.yaml': configMap('a', { v: '1' }) }, 'v1');
    await repo.tag('v1');
    const pinned = async (name: string, revision: string) => {
      await h.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      await h.client.create<Application>({ apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace: name }, spec: { repoURL: repo.dir, revision, path: 'deploy', pollIntervalSeconds: 3600 } });
    };
    await pinned('full', first);
    await pinned('short', first.slice(0, 8));
    await pinned('tag', 'v1');
    await createApp('web');
    start();
    const pinnedApp = (name: string) => h.server.snapshot({ group: 'gitsync.rxkube.dev', version: 'v1', resource: 'applications', namespace: name })[0] as Application | undefined;
    await waitFor(() => syncedAt(first) && ['full', 'short', 'tag'].every((n) => pinnedApp(n)?.status?.sync?.revision === first), 'all four on the first commit');
    const second = await repo.commit({ 'deploy/a.yaml': configMap('a', { v: '2' }) }, 'v2');
    await touch();
    await waitFor(() => syncedAt(second), 'the branch to follow');
    // Each pinned Application has run since the new commit: it reconciled after the one that follows the branch did.
    h.outcomes.length = 0;
    for (const name of ['full', 'short', 'tag']) await touch(name, name);
    await waitFor(() => ['full', 'short', 'tag'].every((n) => h.outcomes.some((o) => o.key === `${n}/${n}`)), 'a run of each pinned Application');
    for (const name of ['full', 'short', 'tag']) expect(pinnedApp(name)?.status?.sync).to.include({ status: 'Synced', revision: first });
    const pinnedA = ['full', 'short', 'tag'].map((n) => h.server.snapshot({ group: '', version: 'v1', resource: 'configmaps', namespace: n })[0] as KubeObject & { data?: Record<string, string> });
    expect(pinnedA.map((c) => `${c.metadata.labels?.[INVENTORY_LABEL]}:${c.data?.v}`)).to.deep.equal(['full:1', 'short:1', 'tag:1']);
    expect(cm('a')?.data).to.deep.equal({ v: '2' });
  });

  it('reports a revision it cannot find as Unknown with a Warning, changes nothing, and syncs once the branch exists', async () => {
    await repo.commit({ 'deploy/a.yaml': configMap('a', { v: '1' }) }, 'a');
    await createApp('web', { revision: 'release' });
    start();
    await waitFor(() => app()?.status?.sync?.status === 'Unknown', 'the Unknown sync status');
    expect(findCondition(app()!.status!.conditions, 'Synced')).to.include({ status: 'Unknown', reason: 'RevisionNotFound' });
    await waitFor(() => h.events('RevisionNotFound').length === 1, 'the Warning');
    expect(notes('RevisionNotFound')[0]).to.equal('revision "release" is no branch, tag or commit of the repository');
    expect(cm('a')).to.equal(undefined);
    await repo.branch('release');
    const head = app()!.status!;
    expect(head.health).to.equal('Degraded');
    await touch();
    await waitFor(() => app()?.status?.sync?.status === 'Synced', 'the sync once the branch exists');
    expect(cm('a')?.data).to.deep.equal({ v: '1' });
  });

  it('reports a repository path that is no Git repository, and a path that is no folder at the commit', async () => {
    const commit = await repo.commit({ 'deploy/a.yaml': configMap('a', { v: '1' }) }, 'a');
    await createApp('norepo', { repoURL: join(dir, 'nothing-here') });
    await createApp('nopath', { path: 'missing/folder' });
    start();
    await waitFor(() => app('norepo')?.status?.sync?.status === 'Unknown' && app('nopath')?.status?.sync?.status === 'Unknown', 'both Unknown');
    expect(findCondition(app('norepo')!.status!.conditions, 'Synced')?.reason).to.equal('RepositoryUnreadable');
    expect(app('norepo')!.status!.sync?.message).to.match(/is no Git repository/);
    expect(app('nopath')!.status!.sync?.message).to.equal(`path "missing/folder" is no folder at commit ${commit.slice(0, 7)}`);
    expect(findCondition(app('nopath')!.status!.conditions, 'Synced')?.reason).to.equal('PathNotFound');
  });

  it('leaves the leftovers in place with prune off, and says so in the sync status', async () => {
    const first = await repo.commit({ 'deploy/a.yaml': configMap('a', { v: '1' }), 'deploy/b.yaml': configMap('b', { v: '1' }) }, 'a and b');
    await createApp('web', { prune: false });
    start();
    await waitFor(() => syncedAt(first), 'the first commit');
    const second = await repo.commit({ 'deploy/b.yaml': null }, 'drop b');
    await touch();
    await waitFor(() => app()?.status?.sync?.revision === second, 'the second commit');
    expect(cm('b')?.data).to.deep.equal({ v: '1' });
    expect(app()?.status?.sync?.status).to.equal('OutOfSync');
    expect(app()?.status?.sync?.message).to.equal(`at ${second.slice(0, 7)}: prune is off; left over: ConfigMap b`);
    expect(findCondition(app()!.status!.conditions, 'Synced')?.reason).to.equal('PruneRequired');
  });

  it('deletes what it applied when the Application is deleted (the objects are owned by it)', async () => {
    const commit = await repo.commit({ 'deploy/a.yaml': configMap('a', { v: '1' }) }, 'a');
    await createApp('web');
    start();
    await waitFor(() => syncedAt(commit), 'the commit');
    await h.client.remove({ apiVersion: API_VERSION, kind: KIND, namespace: 'default', name: 'web' });
    await waitFor(() => cm('a') === undefined, 'the garbage collector to delete the ConfigMap');
  });

  it('syncs a repository named by URL (cloned, then fetched at every run) and follows its branch', async () => {
    const server = await serveGitOverHttp(dir);
    try {
      // A kind it does not watch, so that nothing but `touch` makes it run after `idle`.
      const robot = (automount: boolean) => `apiVersion: v1\nkind: ServiceAccount\nmetadata: { name: robot }\nautomountServiceAccountToken: ${automount}\n`;
      const first = await repo.commit({ 'deploy/sa.yaml': robot(false) }, 'robot');
      await createApp('web', { repoURL: `${server.url}/repo/.git` });
      start();
      await waitFor(() => syncedAt(first), 'the first commit over HTTP');
      await idle();
      const second = await repo.commit({ 'deploy/sa.yaml': robot(true) }, 'robot again');
      await touch();
      await waitFor(() => syncedAt(second), 'the second commit, fetched');
      const ref = { apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'default', name: 'robot' };
      expect((await h.client.get<KubeObject & { automountServiceAccountToken?: boolean }>(ref)).automountServiceAccountToken).to.equal(true);
    } finally {
      await h.stopAll();
      await server.close();
    }
  });

  itKubectl('is driven with kubectl as a user would: apply the CRD and an Application, and get shows its Sync, Health and Revision', async () => {
    const commit = await repo.commit({ 'deploy/a.yaml': configMap('a', { v: '1' }) }, 'a');
    const kubeconfig = join(dir, 'kubeconfig');
    await h.server.writeKubeconfig(kubeconfig);
    const kubectl = kubectlIn(dir, kubeconfig);
    try {
      await kubectl.ok(['apply', '-f', '-'], stringify(applicationCrd()));
      const application = `apiVersion: ${API_VERSION}\nkind: ${KIND}\nmetadata: { name: web, namespace: default }\nspec: { repoURL: ${repo.dir}, revision: main, path: deploy, pollIntervalSeconds: 3600 }\n`;
      await kubectl.ok(['apply', '-f', '-'], application);
      start();
      await waitFor(() => syncedAt(commit), 'the commit');
      const table = await kubectl.ok(['get', 'applications', '-n', 'default']);
      expect(table.split('\n')[0]?.split(/\s+/).filter(Boolean)).to.deep.equal(['NAME', 'SYNC', 'HEALTH', 'REVISION', 'AGE']);
      expect(table.split('\n')[1]?.split(/\s+/).slice(0, 4)).to.deep.equal(['web', 'Synced', 'Healthy', commit]);
      const defaults = JSON.parse(await kubectl.ok(['get', 'application', 'web', '-n', 'default', '-o', 'jsonpath={.spec}'])) as ApplicationSpec;
      expect(defaults).to.include({ recurse: false, prune: true });
    } finally {
      kubectl.stop();
    }
  });
});
