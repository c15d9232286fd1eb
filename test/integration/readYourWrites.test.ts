import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { expect } from 'chai';
import { controller, silentLogger, type KubeObject } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { waitFor } from '../support/waitFor.js';


const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default' };
const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespace: 'default' };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The watch of Secrets lags this far behind the writes (the embedded server's `delayWatchEvents` fault). */
const WATCH_DELAY_MS = 600;

describe('read-your-own-writes against the embedded API server, the watch of the children delayed', () => {
  let server: ApiServer | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /**
   * The duplicate-create race: a ConfigMap's reconcile creates a Secret
   * (under a fresh name, so that a second create makes a second Secret) when
   * its cache holds none of its own; the ConfigMap is changed once the
   * first Secret is created, while the watch still hides that Secret.
   * Returns the Secrets the server holds once the run after the change has
   * happened and the cache shows every Secret.
   */
  async function race(readYourWrites: boolean): Promise<{ children: number; runs: number[] }> {
    server = await startApiServer();
    const kubeConfig = server.kubeConfig();
    const core = kubeConfig.makeApiClient(CoreV1Api);
    server.faults.delayWatchEvents(WATCH_DELAY_MS, { resource: 'secrets' });
    const seenChildren: number[] = [];
    let created = 0;
    const ctl = controller({
      name: 'ryow',
      kubeConfig,
      for: configmaps,
      owns: [secrets],
      logger: silentLogger,
      readYourWrites,
      reconcile: async (_key, ctx) => {
        const parent = ctx.object;
        if (parent === undefined) return;
        const children = (ctx.stores.secrets?.list() ?? []).filter((s) => s.metadata.ownerReferences?.some((r) => r.uid === parent.metadata.uid));
        seenChildren.push(children.length);
        if (children.length > 0) return;
        await ctx.client.create<KubeObject>({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            // A fresh name for each create, as generateName would give (which the client does not take): a second create is a second Secret.
            name: `${ctx.name}-${seenChildren.length}`,
            namespace: ctx.namespace,
            ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: ctx.name, uid: parent.metadata.uid ?? '', controller: true }],
          },
        });
        created += 1;
      },
    });
    const subscription = ctl.subscribe();
    try {
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'parent' } } });
      await waitFor(() => created === 1, 'the first Secret');
      const before = seenChildren.length;
      await core.patchNamespacedConfigMap({ namespace: 'default', name: 'parent', body: { metadata: { labels: { changed: 'yes' } } } }, mergePatch);
      const onServer = async () => (await core.listNamespacedSecret({ namespace: 'default' })).items.length;
      // Until the run after the change has happened and the cache shows every Secret the server holds.
      const deadline = Date.now() + 10_000;
      while (!(seenChildren.length > before && ctl.stores.secrets?.size === (await onServer()))) {
        if (Date.now() > deadline) throw new Error(`timed out: runs saw ${seenChildren.join(', ')} children`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return { children: await onServer(), runs: seenChildren };
    } finally {
      subscription.unsubscribe();
    }
  }

  it('creates one child when the reconcile is triggered again before the child is in the cache', async () => {
    const { children, runs } = await race(true);
    expect(children).to.equal(1);
    // The run after the change waited for the Secret: it saw it.
    expect(runs.slice(1).every((n) => n === 1), `children seen by each run: ${runs.join(', ')}`).to.equal(true);
  });

  it('creates two with read-your-own-writes off: the race this test catches is real', async () => {
    const { children, runs } = await race(false);
    expect(children).to.equal(2);
    expect(runs.slice(0, 2)).to.deep.equal([0, 0]);
  });
});
