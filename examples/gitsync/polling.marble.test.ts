import { expect } from 'chai';
import type { KubeObject } from 'rxkube';
import { runReconcile } from 'rxkube/testing';
import { applicationCrd } from './crd.js';
import { gitSyncReconciler } from './reconcile.js';
import { RevisionError } from './repository.js';
import type { DesiredState } from './source.js';
import { API_VERSION, applications, KIND, type Application, type ApplicationSpec } from './types.js';

/**
 * The gitsync reconcile's polling in virtual time (rxkube/testing): the
 * desired state comes from a reader that stands for the repository (its
 * Git reading has its own tests, with real I/O), so that the poll times
 * are exact virtual milliseconds.
 */

const configMap = (v: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { v } }) as KubeObject;
const app = (spec: Partial<ApplicationSpec>): Application => ({
  apiVersion: API_VERSION,
  kind: KIND,
  metadata: { name: 'web', namespace: 'default' },
  spec: { repoURL: '/repo', revision: 'main', path: '.', ...spec },
});
const webRef = { apiVersion: API_VERSION, kind: KIND, namespace: 'default', name: 'web' };

/** A repository whose branch points at `head`; `reads` counts the polls. */
function fakeRepository(head: { commit: string; v: string } | undefined) {
  const repo = {
    head,
    reads: [] as number[],
    read: (now: () => number) => (_spec: ApplicationSpec): Promise<DesiredState> => {
      repo.reads.push(now());
      if (repo.head === undefined) return Promise.reject(new RevisionError('RevisionNotFound', 'revision "main" is no branch, tag or commit of the repository'));
      return Promise.resolve({ commit: repo.head.commit, manifests: [{ file: 'a.yaml', object: configMap(repo.head.v) }], errors: [] });
    },
  };
  return repo;
}

describe('examples/gitsync: polling in virtual time (rxkube/testing)', () => {
  it('reads the repository every pollIntervalSeconds, and applies a commit made in between at the next poll, not before', async () => {
    const repo = fakeRepository({ commit: 'c1'.padEnd(40, '0'), v: '1' });
    let clock = () => 0;
    const run = await runReconcile<Application>(
      { name: 'gitsync', for: applications(), reconcile: gitSyncReconciler({ cacheDir: '/unused', read: (spec) => repo.read(clock)(spec) }), client: { resources: [applicationCrd()] }, until: 130_000 },
      ({ seed, cluster, scheduler }) => {
        clock = () => scheduler.now();
        seed(app({ pollIntervalSeconds: 60 }));
        cluster('30s a', { a: () => (repo.head = { commit: 'c2'.padEnd(40, '0'), v: '2' }) });
      },
    );
    // Reads at start, then every 60 s; a run that wrote the status is followed at once by one more (its
    // watch event brings the Application back), which finds nothing to do: one poll, two reads.
    const polls = [...new Set(repo.reads.filter((t) => t >= 1000).map((t) => Math.floor(t / 1000) * 1000))];
    expect(polls).to.have.length(2);
    expect(polls[0]).to.be.within(60_000, 61_000);
    expect(polls[1]).to.be.within(120_000, 122_000);
    // Every run applies (a no-op when nothing changed); what each sent tells which commit it applied.
    const applied = (w: { body?: unknown }) => (w.body as { data?: { v?: string } }).data?.v;
    const applies = run.writes.filter((w) => w.verb === 'apply' && w.resource === 'configmaps');
    expect(applies.filter((w) => w.at < 60_000).map(applied).every((v) => v === '1'), 'before the poll of 60 s').to.equal(true);
    expect(applies.filter((w) => w.at >= 60_000)[0]?.at).to.be.within(60_000, 61_000);
    expect(applies.filter((w) => w.at >= 60_000).map(applied).every((v) => v === '2'), 'from the poll of 60 s on').to.equal(true);
    const live = await run.client.get<Application>(webRef);
    expect(live.status?.sync?.revision).to.equal('c2'.padEnd(40, '0'));
  });

  it('polls at the default of 180 s, and keeps polling a revision it cannot read until it can', async () => {
    const repo = fakeRepository(undefined);
    let clock = () => 0;
    const run = await runReconcile<Application>(
      { name: 'gitsync', for: applications(), reconcile: gitSyncReconciler({ cacheDir: '/unused', read: (spec) => repo.read(clock)(spec) }), client: { resources: [applicationCrd()] }, until: 400_000 },
      ({ seed, cluster, scheduler }) => {
        clock = () => scheduler.now();
        seed(app({}));
        cluster('200s a', { a: () => (repo.head = { commit: 'c1'.padEnd(40, '0'), v: '1' }) });
      },
    );
    const polls = [...new Set(repo.reads.filter((t) => t >= 1000).map((t) => Math.floor(t / 1000) * 1000))];
    expect(polls).to.have.length(2);
    expect(polls[0]).to.be.within(180_000, 181_000);
    expect(polls[1]).to.be.within(360_000, 362_000);
    const applies = run.writes.filter((w) => w.verb === 'apply' && w.resource === 'configmaps');
    expect(applies.length, 'nothing applied while the revision could not be read').to.be.greaterThan(0);
    expect(applies.every((w) => w.at >= 360_000 && w.at <= 362_000)).to.equal(true);
    expect((await run.client.get<Application>(webRef)).status?.sync?.status).to.equal('Synced');
  });
});
