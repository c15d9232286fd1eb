import { expect } from 'chai';
import { Registry } from 'prom-client';
import { concatMap, Subject, timer, type SchedulerLike } from 'rxjs';
import type { ControllerContext, KubeObject, Logger } from 'rxkube';
import { runReconcile, type ReconcileRun } from 'rxkube/testing';
import type { TriggerValue } from '../../src/controller/triggers.js';

// The primary: an App; what it owns: a ConfigMap named after it, made once.
const apps = { group: 'example.com', version: 'v1', resource: 'apps', kind: 'App' };
const configMaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
const app = (name: string): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'App', metadata: { name, namespace: 'default' } });

/** Creates the App's ConfigMap when the cache shows none: the reconcile that the duplicate-create race breaks. */
async function ensureChild(key: string, ctx: ControllerContext): Promise<void> {
  const owner = ctx.object;
  if (owner === undefined || ctx.stores.configmaps?.has(`${key}-config`)) return;
  await ctx.client.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `${ctx.name}-config`,
      namespace: ctx.namespace,
      ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'App', name: ctx.name, uid: owner.metadata.uid ?? '', controller: true }],
    },
    data: { made: 'once' },
  });
}

/** What a logger was told at warn, fields and message. */
function capturingLogger(): Logger & { warnings: { fields: Record<string, unknown>; message: string }[] } {
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const ignore = () => {};
  return {
    warnings,
    debug: ignore,
    info: ignore,
    error: ignore,
    warn: (fields, message) => void warnings.push({ fields: typeof fields === 'object' ? fields : {}, message: String(message ?? fields) }),
  };
}

const ran = (run: ReconcileRun<KubeObject>) => run.outcomes.map((o) => `${o.at} ${o.key} ${o.result}`);
const writes = (run: ReconcileRun<KubeObject>) => run.writes.map((w) => `${w.at} ${w.verb} ${w.resource} ${w.key}${w.code >= 400 ? ` ${w.code}` : ''}`);

async function waits(registry: Registry, result: string): Promise<number> {
  const metric = await registry.getSingleMetric('rxkube_own_write_waits_total')?.get();
  return metric?.values.find((v) => v.labels.result === result)?.value ?? 0;
}

/**
 * The race in virtual time: the App's ConfigMap is created at 0, and the
 * watch shows it 10 ms later (`watchLatency`); a poke at 3 triggers the
 * App again in between.
 */
function race(readYourWrites: boolean | { timeout: number }, pokes: string, extra: { logger?: Logger; registry?: Registry; watchLatency?: number; seeds?: string[] } = {}) {
  const poke = new Subject<TriggerValue>();
  return runReconcile(
    {
      for: apps,
      owns: [configMaps],
      readYourWrites,
      triggers: [{ name: 'poke', keys: poke }],
      reconcile: ensureChild,
      client: { watchLatency: extra.watchLatency ?? 10 },
      ...(extra.logger !== undefined ? { logger: extra.logger } : {}),
      ...(extra.registry !== undefined ? { registry: extra.registry } : {}),
    },
    ({ seed, hot }) => {
      seed(...(extra.seeds ?? ['a']).map(app));
      hot(pokes, { a: 'default/a', b: 'default/b' }).subscribe(poke);
    },
  );
}

describe('controller({ readYourWrites }) in virtual time', () => {
  it('holds a key whose run wrote until the cache shows the write, and runs it at that frame: one create, not two', async () => {
    const run = await race(true, '3ms a');
    // Written at 0, poked at 3 (held), the ConfigMap in the cache at 10: the run at 10 sees it and writes nothing.
    expect(ran(run)).to.deep.equal(['0 default/a success', '10 default/a success']);
    expect(writes(run)).to.deep.equal(['0 create configmaps default/a-config']);
  });

  it('without it, the poke runs on the stale cache and creates the ConfigMap a second time (what the hold prevents)', async () => {
    const run = await race(false, '3ms a');
    expect(ran(run).slice(0, 2)).to.deep.equal(['0 default/a success', '3 default/a error']);
    expect(writes(run).slice(0, 2)).to.deep.equal(['0 create configmaps default/a-config', '3 create configmaps default/a-config 409']);
  });

  it('runs a held key at the timeout when the cache never shows the write, with a warning naming the key and the object, and counts it', async () => {
    const logger = capturingLogger();
    const registry = new Registry();
    // The watch is 60 s late; the wait gives up 1 s after the write.
    const run = await race({ timeout: 1000 }, '3ms a', { logger, registry, watchLatency: 60_000 });
    expect(ran(run).slice(0, 2)).to.deep.equal(['0 default/a success', '1000 default/a error']);
    const warning = logger.warnings.find((w) => w.fields.key === 'default/a' && Array.isArray(w.fields.objects));
    expect(warning?.fields.objects).to.deep.equal(['ConfigMap default/a-config']);
    expect(warning?.message).to.equal('own writes not seen in the cache within 1000 ms: reconciling default/a anyway');
    expect(await waits(registry, 'timeout')).to.equal(1);
    expect(await waits(registry, 'seen')).to.equal(0);
  });

  it('counts a wait that ended with the write seen, and none for a key that never waited', async () => {
    const registry = new Registry();
    await race(true, '3ms a', { registry });
    expect(await waits(registry, 'seen')).to.equal(1);
    expect(await waits(registry, 'timeout')).to.equal(0);
  });

  it('holds only the key that wrote: another key triggered meanwhile runs at once', async () => {
    const run = await race(true, '3ms (ab)', { seeds: ['a', 'b'] });
    // a and b both create their ConfigMap at 0 (seen at 10): both poked at 3, both held, each by its own write.
    expect(ran(run)).to.deep.equal(['0 default/a success', '0 default/b success', '10 default/a success', '10 default/b success']);
    const unrelated = await race(true, '3ms b', { seeds: ['a'] });
    // b has no App (its run does nothing) and wrote nothing: it runs at 3, while a waits for its write (the
    // ConfigMap's Added at 10 triggers a, as its owner).
    expect(ran(unrelated)).to.deep.equal(['0 default/a success', '3 default/b success', '10 default/a success']);
  });

  it('makes the rerun a trigger during a run asks for wait, inside that rerun, until the run\'s write is seen', async () => {
    let scheduler: SchedulerLike | undefined;
    const poke = new Subject<TriggerValue>();
    const run = await runReconcile(
      {
        for: apps,
        owns: [configMaps],
        readYourWrites: true,
        triggers: [{ name: 'poke', keys: poke }],
        client: { watchLatency: 10 },
        // The run takes 4 ms, then writes: the poke at 2 comes during it.
        reconcile: (key, ctx) => timer(4, scheduler).pipe(concatMap(() => ensureChild(key, ctx))),
      },
      ({ seed, hot, scheduler: s }) => {
        scheduler = s;
        seed(app('a'));
        hot('2ms a', { a: 'default/a' }).subscribe(poke);
      },
    );
    expect(ran(run)).to.deep.equal(['4 default/a success', '18 default/a success']);
    expect(writes(run)).to.deep.equal(['4 create configmaps default/a-config']);
  });

  it('makes a retry the queue starts on its own wait inside its run until the write is seen', async () => {
    let attempt = 0;
    const starts: number[] = [];
    const run = await runReconcile(
      {
        for: apps,
        owns: [configMaps],
        readYourWrites: true,
        client: { watchLatency: 10 },
        reconcile: async (key, ctx) => {
          starts.push(ctx.now());
          await ensureChild(key, ctx);
          if (attempt++ === 0) throw new Error('a later step failed');
        },
      },
      ({ seed }) => void seed(app('a')),
    );
    // The retry is due at 5 ms (the rate limiter), but its reconcile starts at 10, when the ConfigMap is cached;
    // the ConfigMap's Added (which triggers its owner) comes while the retry waits, and that one run serves it.
    expect(starts).to.deep.equal([0, 10]);
    expect(ran(run)).to.deep.equal(['0 default/a error', '10 default/a success']);
    expect(writes(run)).to.deep.equal(['0 create configmaps default/a-config']);
  });

  it('waits for a delete until the object is gone from the cache', async () => {
    const poke = new Subject<TriggerValue>();
    const seen: boolean[] = [];
    const run = await runReconcile(
      {
        for: apps,
        owns: [configMaps],
        readYourWrites: true,
        triggers: [{ name: 'poke', keys: poke }],
        client: { watchLatency: 10 },
        reconcile: async (key, ctx) => {
          const child = ctx.stores.configmaps?.get(`${key}-config`);
          seen.push(child !== undefined);
          if (child !== undefined) await ctx.client.remove(child);
        },
      },
      ({ seed, hot }) => {
        seed(app('a'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a-config', namespace: 'default' } });
        hot('3ms a', { a: 'default/a' }).subscribe(poke);
      },
    );
    // Deleted at 0, gone from the cache at 10: the poke at 3 runs then, and finds nothing to delete.
    expect(ran(run)).to.deep.equal(['0 default/a success', '10 default/a success']);
    expect(seen).to.deep.equal([true, false]);
  });
});
