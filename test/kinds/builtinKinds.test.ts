import { expect } from 'chai';
import type { Subscription } from 'rxjs';
import { controller, kubeClient, type ControllerContext, type KubeClient, type Lister, type ObjectKey, type WatchedResource } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/apiserver';
import * as kinds from 'rxkube/kinds';
import { configMaps, deployments, pods, type ConfigMap, type Deployment } from 'rxkube/kinds';
import { runReconcile } from 'rxkube/testing';
import { waitFor } from '../support/waitFor.js';

const web: Deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
  },
};

/**
 * Reads what `for: deployments` types, with no cast and no interface of its own:
 * the compiler checks these lines (test/project.test.ts runs tsc over the tests).
 */
async function readReplicas(key: ObjectKey, ctx: ControllerContext<Deployment>, seen: Map<string, unknown>): Promise<void> {
  const replicas: number | undefined = ctx.store.get(key)?.spec?.replicas;
  seen.set('replicas', replicas);
  // @ts-expect-error a field a Deployment's spec does not have
  seen.set('wrong', ctx.store.get(key)?.spec?.replica);
  // Times are the JSON's strings, as the cache holds them, not client-node's Dates.
  const created: string | undefined = ctx.object?.metadata.creationTimestamp;
  seen.set('created', created);
  // @ts-expect-error a time is no Date
  const asDate: Date | undefined = ctx.object?.status?.conditions?.[0]?.lastTransitionTime;
  void asDate;
  const cms: Lister<ConfigMap> = ctx.lister(configMaps);
  seen.set('configMaps', cms.list().map((cm) => cm.data?.['owner']));
  const read = await ctx.client.get({ ...deployments, namespace: 'default', name: 'web' }, { signal: ctx.signal });
  const image: string | undefined = read.spec?.template.spec?.containers[0]?.image;
  seen.set('image', image);
  const listed = await ctx.client.list({ ...configMaps, namespace: 'default' }, { signal: ctx.signal });
  seen.set('listed', listed.map((cm) => cm.data?.['owner']));
}

describe('rxkube/kinds: the built-in kinds, typed', () => {
  it('types for: deployments as Deployment through the store, ctx.object, ctx.lister and ctx.client, in a marble run', async () => {
    const seen = new Map<string, unknown>();
    const run = await runReconcile(
      { for: deployments, owns: [configMaps], reconcile: (key, ctx) => readReplicas(key, ctx, seen) },
      ({ seed }) => {
        seed(web);
        seed<ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-config', namespace: 'default' }, data: { owner: 'web' } });
      },
    );
    expect(run.outcomes.map((o) => `${o.key} ${o.result}`)).to.deep.equal(['default/web success']);
    expect(seen.get('replicas')).to.equal(3);
    expect(seen.get('wrong')).to.equal(undefined);
    expect(seen.get('configMaps')).to.deep.equal(['web']);
    expect(seen.get('image')).to.equal('nginx:1.27');
    expect(seen.get('listed')).to.deep.equal(['web']);
  });

  it('refuses at compile time a reconcile of another kind, and a typed reference read as another kind', () => {
    const check = (client: KubeClient, cmReconcile: (key: ObjectKey, ctx: ControllerContext<ConfigMap>) => void) => {
      // @ts-expect-error a ConfigMap reconcile for Deployments
      void runReconcile({ for: deployments, reconcile: cmReconcile }, () => {});
      // @ts-expect-error a Deployment reference read as a ConfigMap
      void client.get<ConfigMap>({ ...deployments, namespace: 'default', name: 'web' });
      // An untyped resource still takes any reconcile, as before.
      const untyped: WatchedResource = { version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
      void runReconcile({ for: untyped, reconcile: cmReconcile }, () => {});
    };
    expect(check).to.be.a('function');
  });

  it('names by ctx.lister the resources there are, for one the controller does not watch', async () => {
    const errors: unknown[] = [];
    await runReconcile(
      {
        for: deployments,
        owns: [configMaps],
        reconcile: (_key, ctx) => {
          try {
            ctx.lister(pods);
          } catch (err) {
            errors.push(err);
          }
        },
      },
      ({ seed }) => void seed(web),
    );
    expect(errors).to.have.length(1);
    expect((errors[0] as Error).message).to.equal(
      'ctx.lister: the controller does not watch pods (it watches deployments.apps, configmaps): add it to owns or watches',
    );
  });

  it('are frozen, so that no controller changes another\'s resource; a spread adds a namespace and keeps the type', () => {
    expect(Object.isFrozen(deployments)).to.equal(true);
    expect(() => {
      (deployments as { namespace?: string }).namespace = 'x';
    }).to.throw(TypeError);
    const inWeb = { ...pods, namespace: 'web' };
    expect(inWeb).to.deep.equal({ version: 'v1', apiVersion: 'v1', resource: 'pods', kind: 'Pod', namespace: 'web' });
  });

  describe('against the embedded API server', function () {
    this.timeout(60_000);
    let server: ApiServer;
    let client: KubeClient;
    before(async () => {
      server = await startApiServer();
      client = kubeClient(server.kubeConfig());
    });
    after(async () => {
      await server.close();
    });

    it('name each resource as discovery serves it: group, version, plural and kind', async () => {
      const constants = Object.entries(kinds);
      expect(constants.length).to.be.greaterThan(30);
      const wrong: string[] = [];
      for (const [name, r] of constants) {
        const info = await client.resource(r.apiVersion, r.kind);
        const ours = { group: r.group ?? '', version: r.version, resource: r.resource, kind: r.kind };
        const served = { group: info.group, version: info.version, resource: info.resource, kind: info.kind };
        if (JSON.stringify(ours) !== JSON.stringify(served)) wrong.push(`${name}: ${JSON.stringify(ours)} but discovery says ${JSON.stringify(served)}`);
        if (r.apiVersion !== (info.group === '' ? info.version : `${info.group}/${info.version}`)) wrong.push(`${name}: apiVersion ${r.apiVersion}`);
      }
      expect(wrong).to.deep.equal([]);
    });

    it('cover every built-in kind the server lists and watches (the core v1 Event aside: events is events.k8s.io\'s)', async () => {
      const get = async <B>(path: string): Promise<B> => (await (await fetch(`${server.url}${path}`)).json()) as B;
      const { groups } = await get<{ groups: { preferredVersion: { groupVersion: string } }[] }>('/apis');
      const ours = new Set(Object.values(kinds).map((r) => `${r.apiVersion} ${r.kind}`));
      const missing: string[] = [];
      for (const gv of ['v1', ...groups.map((g) => g.preferredVersion.groupVersion)]) {
        const { resources } = await get<{ resources: { name: string; kind: string; verbs: string[] }[] }>(gv === 'v1' ? '/api/v1' : `/apis/${gv}`);
        for (const { name, kind, verbs } of resources) {
          // Subresources and the create-only reviews (TokenReview, SubjectAccessReview) are nothing a controller watches.
          if (name.includes('/') || !verbs.includes('watch') || (gv === 'v1' && kind === 'Event')) continue;
          if (!ours.has(`${gv} ${kind}`)) missing.push(`${gv} ${kind}`);
        }
      }
      expect(missing).to.deep.equal([]);
    });

    it('run a controller over HTTP whose reconcile reads a Deployment typed as the server sent it (times as strings)', async () => {
      const seen = new Map<string, unknown>();
      let running: Subscription | undefined;
      try {
        await client.create(web);
        await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-config', namespace: 'default' }, data: { owner: 'web' } });
        running = controller({
          name: 'typed',
          kubeConfig: server.kubeConfig(),
          for: deployments,
          owns: [configMaps],
          reconcile: (key, ctx) => readReplicas(key, ctx, seen),
        }).subscribe();
        await waitFor(() => seen.has('listed'), 'the reconcile to read everything');
      } finally {
        running?.unsubscribe();
      }
      expect(seen.get('replicas')).to.equal(3);
      expect(seen.get('created')).to.be.a('string').and.match(/^\d{4}-\d\d-\d\dT/);
      expect(seen.get('image')).to.equal('nginx:1.27');
      expect(seen.get('listed')).to.deep.equal(['web']);
    });
  });
});
