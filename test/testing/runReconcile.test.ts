import { AssertionError } from 'node:assert';
import { expect } from 'chai';
import type { Observable } from 'rxjs';
import { isConflict, KubeApiError, type ControllerContext, type KubeClient, type KubeObject, type ListWatchEvent, type ObjectKey, type WatchedResource } from 'rxkube';
import { deleted, list, modified, restart, runReconcile } from 'rxkube/testing';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const configMaps: WatchedResource = { version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
const configMap = (name: string, data: Record<string, string> = {}): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data,
});

/** Stamps `data.seen = "yes"` on every ConfigMap that lacks it: a write, then nothing to do. */
async function stampSeen(_key: ObjectKey, ctx: ControllerContext<ConfigMap>): Promise<void> {
  const cm = ctx.object;
  if (cm === undefined || cm.data?.seen === 'yes') return;
  await ctx.client.update({ ...cm, data: { ...cm.data, seen: 'yes' } }, { signal: ctx.signal });
  ctx.recorder.record(cm, { type: 'Normal', reason: 'Stamped', action: 'Stamp', note: 'marked as seen' });
}

describe('runReconcile: a reconcile marble-tested in virtual time', () => {
  it('retries a failing reconcile after exactly the default rate limiter\'s delays (5, 10, 20 ms), then succeeds', async () => {
    await runReconcile<ConfigMap>(
      {
        for: configMaps,
        reconcile: (_key, ctx) => {
          if (ctx.attempt < 3) throw new Error(`not yet (${ctx.attempt})`);
        },
      },
      ({ seed, expectOutcomes }) => {
        seed(configMap('web'));
        expectOutcomes('a 4ms b 9ms c 19ms d', {
          a: { key: 'default/web', result: 'error', attempt: 0, error: /not yet \(0\)/ },
          b: { result: 'error', attempt: 1 },
          c: { result: 'error', attempt: 2 },
          d: { result: 'success', attempt: 3 },
        });
      },
    );
  });

  it('reruns after requeueAfter, and stops at `until` a reconcile that would requeue forever', async () => {
    await runReconcile<ConfigMap>({ for: configMaps, reconcile: () => ({ requeueAfter: 30_000 }), until: 100_000 }, ({ seed, expectOutcomes }) => {
      seed(configMap('web'));
      expectOutcomes('a 29999ms a 29999ms a 29999ms a', { a: 'default/web requeue_after' });
    });
  });

  it('runs a key triggered during its run exactly once more, however many triggers came (coalescing)', async () => {
    const seen: string[] = [];
    const run = await runReconcile<ConfigMap>(
      {
        for: configMaps,
        // Every request takes 10 ms: a reconcile that makes one is in flight from 0 to 10.
        client: { latency: 10 },
        reconcile: async (key, ctx) => {
          seen.push(`${key}@${ctx.object?.data?.v ?? '-'}`);
          await ctx.client.get({ apiVersion: 'v1', kind: 'ConfigMap', name: ctx.name, namespace: ctx.namespace }, { signal: ctx.signal });
        },
      },
      ({ seed, cluster, expectOutcomes }) => {
        seed(configMap('web', { v: '0' }));
        // Someone edits it three times while the first run is in flight.
        const edit = (v: string) => (kubectl: KubeClient) => kubectl.patchMerge(configMap('web'), { data: { v } });
        cluster('--a-b-c', { a: edit('1'), b: edit('2'), c: edit('3') });
        expectOutcomes('10ms a 9ms a', { a: 'default/web success' });
      },
    );
    // The second run read the last edit: nothing was lost, nothing ran twice.
    expect(seen).to.deep.equal(['default/web@0', 'default/web@3']);
    // The controller's own metrics counted the same two runs, both successes.
    const total = await run.controller.metrics.registry.getSingleMetric('controller_runtime_reconcile_total')?.get();
    expect(total?.values.filter((v) => v.value > 0).map((v) => [v.labels.result, v.value])).to.deep.equal([['success', 2]]);
  });

  it('retries after an injected 409 Conflict on a write, and the write then comes back through the watch', async () => {
    await runReconcile<ConfigMap>({ for: configMaps, reconcile: stampSeen }, ({ seed, client, expectOutcomes, expectWrites }) => {
      seed(configMap('web'));
      client.faults.failNext(1, { code: 409, verb: 'update' });
      // 0: the update meets the conflict; 5: the retry writes; 5: its watch event reruns the key, which finds nothing to do.
      expectOutcomes('a 4ms (bc)', {
        a: { key: 'default/web', result: 'error', error: KubeApiError },
        b: { result: 'success', attempt: 1 },
        c: { result: 'success', attempt: 0 },
      });
      expectWrites('a 4ms b', {
        a: 'update configmaps default/web 409 Conflict',
        b: { verb: 'update', key: 'default/web', code: 200, body: { data: { seen: 'yes' } } },
      });
    });
  });

  it('lets a reconcile tell a conflict apart and requeue on it', async () => {
    const run = await runReconcile<ConfigMap>(
      {
        for: configMaps,
        reconcile: async (key, ctx) => {
          try {
            await stampSeen(key, ctx);
          } catch (err) {
            if (isConflict(err)) return { requeue: true };
            throw err;
          }
          return undefined;
        },
      },
      ({ seed, client, expectOutcomes }) => {
        seed(configMap('web'));
        client.faults.failNext(2, { code: 409, kind: 'ConfigMap' });
        expectOutcomes('a 4ms b 9ms (cd)', { a: 'default/web requeue', b: 'default/web requeue', c: 'default/web success', d: 'default/web success' });
      },
    );
    expect(run.writes.map((w) => `${w.at} ${w.code}`)).to.deep.equal(['0 409', '5 409', '15 200']);
  });

  it('reads back the Events a reconcile recorded, at the time it recorded them', async () => {
    await runReconcile<ConfigMap>({ for: configMaps, reconcile: stampSeen }, ({ seed, cluster, expectEvents }) => {
      seed(configMap('a'));
      cluster('---b', { b: (kubectl) => kubectl.create(configMap('b')) });
      expectEvents('a--b', {
        a: 'Normal Stamped default/a',
        b: { type: 'Normal', reason: 'Stamped', key: 'default/b', note: 'marked as seen', regarding: { kind: 'ConfigMap', name: 'b' } },
      });
    });
  });

  it('feeds the store from a scripted watch, and puts what it shows into the cluster for the reconcile to write to', async () => {
    const cm = (rv: string, data: Record<string, string> = {}): ConfigMap => ({ ...configMap('web', data), metadata: { name: 'web', namespace: 'default', uid: 'u1', resourceVersion: rv } });
    const sizes: (number | undefined)[] = [];
    await runReconcile<ConfigMap>(
      {
        for: configMaps,
        reconcile: async (key, ctx) => {
          sizes.push(ctx.store.size);
          await stampSeen(key, ctx);
        },
      },
      ({ cold, watch, expectOutcomes, expectWrites }) => {
        watch(configMaps, cold('a 9ms b 9ms c', { a: list([cm('1')]), b: modified(cm('2', { seen: 'yes' })), c: deleted(cm('3', { seen: 'yes' })) }));
        expectOutcomes('a 9ms b 9ms c', { a: 'default/web success', b: 'default/web success', c: 'default/web success' });
        expectWrites('a', { a: 'update configmaps default/web' });
      },
    );
    expect(sizes).to.deep.equal([1, 1, 0]);
  });

  it('maps a change of an owned object to its owner\'s key, as controller() does', async () => {
    const owners: WatchedResource = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' };
    const reconciled: string[] = [];
    await runReconcile(
      { for: owners, owns: [configMaps], reconcile: (key) => void reconciled.push(key) },
      ({ seed, cluster, expectOutcomes }) => {
        const [owner] = seed<KubeObject>({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' } });
        const ownerRef = { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: owner?.metadata.uid as string, controller: true };
        cluster('-----a', { a: (kubectl) => kubectl.create({ ...configMap('owned'), metadata: { name: 'owned', namespace: 'default', ownerReferences: [ownerRef] } }) });
        expectOutcomes('a----a', { a: 'default/w success' });
      },
    );
    expect(reconciled).to.deep.equal(['default/w', 'default/w']);
  });
});

describe('runReconcile: how a run starts and ends', () => {
  it('ends when scripted watches complete: in-flight runs drain and the outcomes complete, as controller() does', async () => {
    const run = await runReconcile<ConfigMap>({ for: configMaps, reconcile: () => undefined }, ({ cold, watch, expectOutcomes }) => {
      watch(configMaps, cold('a--|', { a: list([configMap('web')]) }));
      expectOutcomes('a--|', { a: 'default/web success' });
    });
    expect(run.stoppedBy).to.equal('completed');
  });

  it('does not blame a reconcile that ignores its signal once the workqueue timed it out', async () => {
    const run = await runReconcile<ConfigMap>(
      { for: configMaps, timeout: 50, maxRetries: 0, reconcile: () => new Promise<void>(() => undefined) },
      ({ seed, expectOutcomes }) => {
        seed(configMap('web'));
        expectOutcomes('50ms a', { a: { key: 'default/web', result: 'dropped', error: /timed out after 50 ms/ } });
      },
    );
    expect(run.stoppedBy).to.equal('idle');
  });

  it('records any Observable from the start of the run for expectObservable, such as the cluster\'s own watch', async () => {
    await runReconcile<ConfigMap>({ for: configMaps, reconcile: stampSeen }, ({ seed, client, expectObservable }) => {
      seed(configMap('web'));
      const seen = client.watch<ConfigMap>(configMaps);
      // The list at 0 (Restart, Listed, Synced), then the stamp the reconcile wrote, as an event one action later.
      // The seeded `data: {}` is stored as kube stores it: left out (Go's omitempty).
      expectObservable(seen).toBe('(abcd)', {
        a: { type: 'Restart' },
        b: { type: 'Listed', object: { data: undefined } },
        c: { type: 'Synced' },
        d: { type: 'Modified', object: { data: { seen: 'yes' } } },
      });
    });
  });
});

describe('runReconcile: failures that say what went wrong', () => {
  async function failure(promise: Promise<unknown>): Promise<Error> {
    try {
      await promise;
    } catch (err) {
      return err as Error;
    }
    throw new Error('expected runReconcile to fail');
  }

  it('shows both timelines when the outcomes differ from the diagram', async () => {
    const err = await failure(
      runReconcile<ConfigMap>({ for: configMaps, reconcile: stampSeen }, ({ seed, expectOutcomes }) => {
        seed(configMap('web'));
        expectOutcomes('a', { a: 'default/web success' });
      }),
    );
    expect(err).to.be.instanceOf(AssertionError);
    expect(err.message).to.equal(
      "outcomes do not match the marble diagram 'a'\n  expected:\n    0ms  default/web success\n  actual:\n    0ms  default/web success\n    0ms  default/web success (attempt 0, 0 ms)",
    );
  });

  it('names a reconcile that never finishes although virtual time has nothing left to do', async () => {
    const err = await failure(
      runReconcile<ConfigMap>({ for: configMaps, reconcile: () => new Promise<void>(() => undefined) }, ({ scheduler, seed }) => {
        seed(configMap('web'));
        scheduler.schedule(() => undefined, 7);
      }),
    );
    expect(err.message).to.match(/^a reconcile never finished although virtual time has nothing left to do at 7 ms: "default\/web" \(started at 0 ms\)\. It waits for something outside virtual time/);
  });

  it('fails with the error of a change someone else made that the cluster refused', async () => {
    const err = await failure(
      runReconcile<ConfigMap>({ for: configMaps, reconcile: () => undefined }, ({ seed, cluster }) => {
        seed(configMap('web'));
        cluster('--a', { a: (kubectl) => kubectl.create(configMap('web')) });
      }),
    );
    expect(err.message).to.equal(`the cluster change at 2 ms of '--a' failed: create configmaps "default/web": configmaps "web" already exists (409 AlreadyExists)`);
  });

  it('fails when the reconcile records an Event the real recorder would refuse', async () => {
    const err = await failure(
      runReconcile<ConfigMap>(
        { for: configMaps, reconcile: (_key, ctx) => ctx.recorder.record(ctx.object as ConfigMap, { type: 'Normal', reason: '', action: 'X' }) },
        ({ seed }) => void seed(configMap('web')),
      ),
    );
    expect(err.message).to.equal('the reconcile recorded Events that the real recorder refuses: at 0 ms: event reason must be 1 to 128 characters, got ""');
  });

  it('fails when the controller\'s output errors unless the outcomes expect it', async () => {
    const broken = ({ cold, watch }: { cold: <V>(m: string, v?: Record<string, V>, e?: unknown) => Observable<V>; watch: (r: WatchedResource, e: Observable<ListWatchEvent>) => void }) =>
      watch(configMaps, cold('a-#', { a: restart() }, new Error('watch refused: 403 Forbidden')));
    const err = await failure(runReconcile<ConfigMap>({ for: configMaps, reconcile: () => undefined }, broken));
    expect(err.message).to.equal('the controller failed at 2 ms: watch refused: 403 Forbidden');
    await runReconcile<ConfigMap>({ for: configMaps, reconcile: () => undefined }, (helpers) => {
      broken(helpers);
      helpers.expectOutcomes('--#', undefined, /403 Forbidden/);
    });
  });

  it('ends the controller with an error naming the watch whose map threw, and the delta', async () => {
    const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret' };
    const err = await failure(
      runReconcile<ConfigMap>(
        {
          for: configMaps,
          watches: [{ resource: secrets, map: () => { throw new TypeError('no owner label'); } }],
          reconcile: () => undefined,
        },
        ({ seed }) => void seed({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token', namespace: 'default' } }),
      ),
    );
    expect(err.message).to.equal('the controller failed at 0 ms: mapToKeys: the function "watches[0].map (secrets)" threw on Added "default/token": no owner label');
  });

  it('refuses a scripted watch of a resource the controller does not watch', async () => {
    const err = await failure(
      runReconcile<ConfigMap>({ for: configMaps, reconcile: () => undefined }, ({ cold, watch }) => {
        watch({ group: 'apps', version: 'v1', resource: 'deployments' }, cold('-'));
      }),
    );
    expect(err.message).to.equal('watch(deployments.apps) scripts a resource the controller does not watch (it watches configmaps)');
  });
});
