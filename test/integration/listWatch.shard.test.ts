import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { BehaviorSubject, tap, type Subscription } from 'rxjs';
import { deltas, indexer, listWatch, sourceMetrics, type KubeObject, type ListWatchEvent, type ListWatchOptions, type Logger, type StoreEvent } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { slotRanges, slotsOf } from '../../src/sinks/leader/shardSlots.js';
import { maxSentShardRanges } from '../../src/sources/sourceShard.js';
import { evenRanges, fnv1a64, inAnyRange, inRange, type ShardRange } from '../../src/util/shardHash.js';
import { parseShardSelector } from '../../src/util/shardSelector.js';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };
const [lower, upper] = evenRanges(2) as [ShardRange, ShardRange];

/** A logger that keeps what it is told, to count the warnings. */
function recordingLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (fields: Record<string, unknown> | string, message?: string) => lines.push({ level, message: typeof fields === 'string' ? fields : (message ?? '') });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

for (const honours of [true, false]) {
  describe(`listWatch with a shardSelector, against a server that ${honours ? 'honours' : 'ignores'} it`, function () {
    this.timeout(30_000);
    let server: ApiServer;
    let kc: KubeConfig;
    let core: CoreV1Api;
    const running: Subscription[] = [];

    beforeEach(async () => {
      server = await startApiServer({ shardedListAndWatch: honours, bookmarkIntervalMs: 50 });
      kc = server.kubeConfig();
      core = kc.makeApiClient(CoreV1Api);
    });
    afterEach(async () => {
      for (const s of running.splice(0)) s.unsubscribe();
      await server.close();
    });

    const create = async (name: string) => (await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name } } })) as KubeObject;
    const createMany = async (n: number, prefix = 'cm') => {
      const out: KubeObject[] = [];
      for (let i = 0; i < n; i++) out.push(await create(`${prefix}-${i}`));
      return out;
    };
    const namesIn = (objects: readonly KubeObject[], ...ranges: ShardRange[]) =>
      objects.filter((o) => ranges.some((r) => inRange(r, fnv1a64(o.metadata.uid ?? '')))).map((o) => o.metadata.name as string).sort();
    const serverObjects = () => server.snapshot(configmaps) as KubeObject[];
    const requests = (verb: string) => server.requestLog.filter((r) => r.verb === verb && r.resource === 'configmaps');

    function informer(options: ListWatchOptions<KubeObject>) {
      const raw: ListWatchEvent[] = [];
      const out: StoreEvent[] = [];
      const where: string[] = [];
      const logger = recordingLogger();
      const metrics = sourceMetrics();
      let error: unknown;
      const subscription = listWatch(kc, configmaps, {
        idleTimeout: 600_000,
        scheduler: dilatedScheduler(100),
        logger,
        monitor: { ...metrics, shardFilter: (resource, w) => (where.push(w), metrics.shardFilter(resource, w)) },
        ...options,
      })
        .pipe(
          tap((e) => raw.push(e)),
          deltas(),
          indexer(),
        )
        .subscribe({ next: (e) => out.push(e), error: (e: unknown) => (error = e) });
      running.push(subscription);
      const storeNames = () => (out[out.length - 1]?.store.list() ?? []).map((o) => o.metadata.name as string).sort();
      const gauge = async () => (await metrics.registry.getSingleMetric('rxkube_source_shard_filter_client_side')?.get())?.values.map((v) => v.value);
      return { raw, out, where, logger, error: () => error, storeNames, gauge };
    }

    it('holds exactly the objects whose FNV-1a(uid) is in its ranges, through the list and the watch', async () => {
      const before = await createMany(20);
      const i = informer({ shardSelector: { by: 'uid', ranges: [lower] } });
      await waitFor(() => requests('watch').length > 0, 'the watch');
      expect(i.storeNames()).to.deep.equal(namesIn(before, lower));
      const later = await createMany(12, 'late');
      await core.deleteNamespacedConfigMap({ namespace: 'default', name: before[0]!.metadata.name as string });
      await core.deleteNamespacedConfigMap({ namespace: 'default', name: later[0]!.metadata.name as string });
      const expected = namesIn(serverObjects(), lower);
      await waitFor(() => JSON.stringify(i.storeNames()) === JSON.stringify(expected), `the store to hold ${JSON.stringify(expected)}`);
      // Nothing outside the ranges ever went downstream, not even for a moment.
      const passed = i.raw.flatMap((e) => ('object' in e ? [e.object] : []));
      expect(passed.every((o) => inRange(lower, fnv1a64(o.metadata.uid ?? '')))).to.equal(true);
      expect(i.error()).to.equal(undefined);
    });

    it(`sends a replica of 1,024 slots a cover of at most ${maxSentShardRanges} ranges, and holds exactly its own objects`, async () => {
      const made = await createMany(40);
      const owned = slotRanges(slotsOf('a', ['a', 'b'], 1024), 1024);
      const i = informer({ shardSelector: { by: 'uid', ranges: owned } });
      await waitFor(() => requests('watch').length > 0, 'the watch');
      const sent = requests('list').map((r) => parseShardSelector(r.query.shardSelector ?? '').terms.length);
      expect(sent).to.deep.equal([maxSentShardRanges]);
      expect(i.storeNames()).to.deep.equal(namesIn(made, ...owned));
      // Changes that the cover lets through but the replica does not own stay out too.
      const later = await createMany(20, 'late');
      const expected = namesIn([...made, ...later], ...owned);
      await waitFor(() => JSON.stringify(i.storeNames()) === JSON.stringify(expected), `the store to hold ${JSON.stringify(expected)}`);
      const passed = i.raw.flatMap((e) => ('object' in e ? [e.object] : []));
      expect(passed.every((o) => inAnyRange(owned, fnv1a64(o.metadata.uid ?? '')))).to.equal(true);
      expect(i.error()).to.equal(undefined);
    });

    it('sends the selector on the list and on the watch', async () => {
      await createMany(2);
      informer({ shardSelector: { by: 'uid', ranges: [upper] } });
      await waitFor(() => requests('watch').length > 0, 'the watch');
      const sent = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";
      expect(requests('list').map((r) => r.query.shardSelector)).to.deep.equal([sent]);
      expect(requests('watch').map((r) => r.query.shardSelector)).to.deep.equal([sent]);
    });

    it(`says ${honours ? 'that the server filters' : 'once that it filters on its side'}, in the log and in rxkube_source_shard_filter_client_side`, async () => {
      await createMany(3);
      const i = informer({ shardSelector: "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')" });
      await waitFor(() => requests('watch').length > 0, 'the watch');
      // History forgotten and the watch cut: the watch's resume is 410, and the source lists again.
      server.faults.dropWatches();
      await create('while-away');
      server.faults.compact();
      await waitFor(() => requests('list').length >= 2, 'a re-list');
      expect(i.where).to.deep.equal([honours ? 'server' : 'client']);
      expect(await i.gauge()).to.deep.equal([honours ? 0 : 1]);
      const warnings = i.logger.lines.filter((l) => l.level === 'warn' && l.message.includes('shardSelector'));
      expect(warnings.length).to.equal(honours ? 0 : 1);
      if (!honours) expect(warnings[0]!.message).to.contain('filtering on the client side');
    });

    it('re-lists when its ranges change, and the store ends up holding exactly the new share (leavers as finalStateUnknown)', async () => {
      const made = await createMany(20);
      const ranges = new BehaviorSubject<{ by: 'uid'; ranges: ShardRange[] }>({ by: 'uid', ranges: [lower] });
      const i = informer({ shardSelector: ranges });
      await waitFor(() => requests('watch').length > 0, 'the first watch');
      expect(i.storeNames()).to.deep.equal(namesIn(made, lower));
      // The same ranges again: no new list.
      ranges.next({ by: 'uid', ranges: [lower] });
      ranges.next({ by: 'uid', ranges: [upper] });
      await waitFor(() => JSON.stringify(i.storeNames()) === JSON.stringify(namesIn(made, upper)), 'the store to hold the upper half');
      expect(requests('list')).to.have.length(2);
      const gone = i.out.flatMap((e) => ('key' in e && e.type === 'Deleted' ? [e] : []));
      expect(gone.map((d) => d.object.metadata.name).sort()).to.deep.equal(namesIn(made, lower));
      expect(gone.every((d) => d.finalStateUnknown === true)).to.equal(true);
      // Both halves at once: everything.
      ranges.next({ by: 'uid', ranges: [lower, upper] });
      await waitFor(() => i.storeNames().length === made.length, 'the store to hold everything');
      // No ranges: nothing, and no request for it.
      const listsBefore = requests('list').length;
      ranges.next({ by: 'uid', ranges: [] });
      await waitFor(() => i.storeNames().length === 0, 'the store to be emptied');
      expect(requests('list')).to.have.length(listsBefore);
      expect(i.error()).to.equal(undefined);
    });
  });
}

describe('listWatch with a malformed shardSelector', () => {
  let server: ApiServer;
  before(async () => (server = await startApiServer()));
  after(() => server.close());

  it('errors the source with the problem named, before any request', async () => {
    const error = await new Promise<unknown>((resolve) => {
      listWatch(server.kubeConfig(), configmaps, { shardSelector: "shardRange(object.metadata.name, '0x0', '0x1')" }).subscribe({ error: resolve, complete: () => resolve(undefined) });
    });
    expect((error as Error).message).to.match(/^shardSelector: Invalid value: .*listWatch of configmaps: unsupported field path "object\.metadata\.name"/);
    expect(server.requestLog.filter((r) => r.resource === 'configmaps')).to.deep.equal([]);
    const reversed = await new Promise<unknown>((resolve) => {
      listWatch(server.kubeConfig(), configmaps, { shardSelector: { by: 'uid', ranges: [{ start: 5n, end: 5n }] } }).subscribe({ error: resolve });
    });
    expect((reversed as Error).message).to.contain('listWatch of configmaps: shard range [5, 5) is empty or reversed');
  });
});
