import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { RawWatch, startWithClients, watchPath } from './apiserver.helpers.js';
import { itKubectl, kubectlIn } from './kubectl.helpers.js';
import { evenRanges, fnv1a64, inAnyRange, inRange } from '../../src/util/shardHash.js';
import { slotRanges, slotsOf } from '../../src/sinks/leader/shardSlots.js';
import { formatShardSelector, shardSelectorOf } from '../../src/util/shardSelector.js';

/**
 * A GET with the kubeconfig's own credentials (client-node's `applyToHTTPSOptions`), as
 * src/sources sends its requests: client-node's generated list functions have no shardSelector.
 */
function kubeGet(kc: KubeConfig, path: string, accept = 'application/json'): Promise<{ status: number; body: Record<string, unknown> }> {
  return (async () => {
    const url = new URL(path, kc.getCurrentCluster()!.server);
    const options: { method: string; headers: Record<string, string> } = { method: 'GET', headers: { Accept: accept } };
    await kc.applyToHTTPSOptions(options);
    return new Promise((resolve, reject) => {
      const req = request(url, options, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
      });
      req.on('error', reject);
      req.end();
    });
  })();
}

type Item = { metadata: { name: string; uid: string; namespace: string } };
const itemsOf = (body: Record<string, unknown>): Item[] => body.items as Item[];
const namesOf = (items: Item[]): string[] => items.map((i) => i.metadata.name).sort();
const query = (params: Record<string, string>): string => new URLSearchParams(params).toString();

const halves = evenRanges(2);
const uidHalf = (i: number): string => formatShardSelector(shardSelectorOf('uid', [halves[i]!]));

describe('embedded API server: sharded list and watch (KEP-5866 shardSelector)', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let core: CoreV1Api;
  let kc: KubeConfig;

  async function configMaps(namespace: string, count: number): Promise<Item[]> {
    const out: Item[] = [];
    for (let i = 0; i < count; i++) {
      const made = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: `cm-${i}` } } });
      out.push(made as Item);
    }
    return out;
  }

  describe('with the feature on (the default)', () => {
    beforeEach(async () => {
      ({ server, core } = await startWithClients());
      kc = server.kubeConfig();
    });
    afterEach(() => server.close());

    it('lists only the objects whose FNV-1a(metadata.uid) is in the range, and echoes the selector in shardInfo', async () => {
      const made = await configMaps('default', 30);
      const seen: string[][] = [];
      for (const i of [0, 1]) {
        const selector = uidHalf(i);
        const list = await kubeGet(kc, `/api/v1/namespaces/default/configmaps?${query({ shardSelector: selector })}`);
        expect(list.status).to.equal(200);
        expect((list.body.metadata as Record<string, unknown>).shardInfo).to.deep.equal({ selector });
        const expected = made.filter((m) => inRange(halves[i]!, fnv1a64(m.metadata.uid)));
        expect(namesOf(itemsOf(list.body))).to.deep.equal(namesOf(expected));
        seen.push(namesOf(itemsOf(list.body)));
      }
      // The halves split the 30 objects between them, each one in exactly one.
      expect([...seen[0]!, ...seen[1]!].sort()).to.deep.equal(namesOf(made));
      expect(seen[0]!.length).to.be.greaterThan(0);
      expect(seen[1]!.length).to.be.greaterThan(0);
    });

    it('shards by metadata.namespace, and ORs several ranges joined by ||', async () => {
      // Names unlike each other: FNV-1a moves only the low bits for a change in the last bytes, so
      // team-1, team-2, … would all fall in one quarter.
      const namespaces = ['billing', 'ledger', 'mail', 'payments', 'search', 'web'];
      for (const name of namespaces) {
        await core.createNamespace({ body: { metadata: { name } } });
        await configMaps(name, 1);
      }
      const quarters = evenRanges(4);
      const mine = [quarters[0]!, quarters[3]!];
      const selector = formatShardSelector(shardSelectorOf('namespace', mine));
      expect(selector).to.contain(' || ');
      const list = await kubeGet(kc, `/api/v1/configmaps?${query({ shardSelector: selector })}`);
      const expected = namespaces.filter((ns) => mine.some((r) => inRange(r, fnv1a64(ns))));
      expect(expected).to.deep.equal(['mail', 'payments', 'search']);
      expect(itemsOf(list.body).map((i) => i.metadata.namespace)).to.deep.equal(expected);
    });

    it('keeps paging within the shard: every page filtered, no remainingItemCount, the union is the shard', async () => {
      const made = await configMaps('default', 25);
      const selector = uidHalf(0);
      const got: Item[] = [];
      let token: string | undefined;
      do {
        const params: Record<string, string> = { shardSelector: selector, limit: '4' };
        if (token !== undefined) params.continue = token;
        const page = await kubeGet(kc, `/api/v1/namespaces/default/configmaps?${query(params)}`);
        const meta = page.body.metadata as Record<string, unknown>;
        expect(meta.remainingItemCount).to.equal(undefined);
        expect(meta.shardInfo).to.deep.equal({ selector });
        expect(itemsOf(page.body).length).to.be.at.most(4);
        got.push(...itemsOf(page.body));
        token = meta.continue as string | undefined;
      } while (token !== undefined);
      expect(namesOf(got)).to.deep.equal(namesOf(made.filter((m) => inRange(halves[0]!, fnv1a64(m.metadata.uid)))));
    });

    it('carries shardInfo on a metadata-only list too', async () => {
      await configMaps('default', 3);
      const selector = uidHalf(1);
      const list = await kubeGet(kc, `/api/v1/namespaces/default/configmaps?${query({ shardSelector: selector })}`, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1');
      expect(list.body.kind).to.equal('PartialObjectMetadataList');
      expect((list.body.metadata as Record<string, unknown>).shardInfo).to.deep.equal({ selector });
    });

    it('reads an empty shardSelector as none: everything, and no shardInfo', async () => {
      await configMaps('default', 4);
      const list = await kubeGet(kc, `/api/v1/namespaces/default/configmaps?shardSelector=`);
      expect(itemsOf(list.body)).to.have.length(4);
      expect((list.body.metadata as Record<string, unknown>).shardInfo).to.equal(undefined);
    });

    it('watches only the shard: initial events and later changes of objects out of range are not sent', async () => {
      const before = await configMaps('default', 10);
      const selector = uidHalf(0);
      const inShard = (m: Item) => inRange(halves[0]!, fnv1a64(m.metadata.uid));
      const watch = new RawWatch(server, watchPath('/api/v1/namespaces/default/configmaps', { shardSelector: selector }));
      try {
        const initial = before.filter(inShard);
        await watch.until(initial.length, 'ADDED');
        const later: Item[] = [];
        for (let i = 0; i < 10; i++) later.push((await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `late-${i}` } } })) as Item);
        for (const m of later) await core.deleteNamespacedConfigMap({ namespace: 'default', name: m.metadata.name });
        const expectedLater = later.filter(inShard).map((m) => m.metadata.name);
        await watch.until(expectedLater.length, 'DELETED');
        const added = watch.events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata?.name);
        expect(added).to.deep.equal([...initial.map((m) => m.metadata.name), ...expectedLater]);
        expect(watch.events.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata?.name)).to.deep.equal(expectedLater);
      } finally {
        watch.close();
      }
    });

    it('takes a selector of hundreds of ranges (a replica of 1,024 slots: 25 KB of URL), as kube takes request lines up to 1 MiB', async () => {
      const made = await configMaps('default', 20);
      const ranges = slotRanges(slotsOf('a', ['a', 'b'], 1024), 1024);
      const selector = formatShardSelector(shardSelectorOf('uid', ranges));
      const path = `/api/v1/namespaces/default/configmaps?${query({ shardSelector: selector })}`;
      expect(path.length).to.be.greaterThan(20_000);
      const list = await kubeGet(kc, path);
      expect(list.status).to.equal(200);
      expect(namesOf(itemsOf(list.body))).to.deep.equal(namesOf(made.filter((m) => inAnyRange(ranges, fnv1a64(m.metadata.uid)))));
      // Past 1 MiB, refused as Go's server refuses it: a 431, or the connection closed on a
      // client still sending (which of the two comes first is the kernel's to say).
      const outcome = await new Promise<number | string>((resolve) => {
        const req = request(new URL(`/api/v1/namespaces/default/configmaps?x=${'a'.repeat(1 << 20)}`, kc.getCurrentCluster()!.server), (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          req.destroy();
        });
        req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
        req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
        req.end();
      });
      expect(outcome).to.be.oneOf([431, 'ECONNRESET', 'EPIPE']);
    });

    it("answers a malformed selector with 400 BadRequest naming what is wrong, on list and on watch", async () => {
      const bad = "shardRange(object.metadata.name, '0x0', '0x8000000000000000')";
      for (const path of [`/api/v1/configmaps?${query({ shardSelector: bad })}`, `/api/v1/configmaps?${query({ watch: 'true', shardSelector: bad })}`]) {
        const answer = await kubeGet(kc, path);
        expect(answer.status, path).to.equal(400);
        expect(answer.body).to.include({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
        expect(answer.body.message).to.match(/^shardSelector: Invalid value: "shardRange\(object\.metadata\.name, .*unsupported field path "object\.metadata\.name"/);
      }
    });

    itKubectl("serves kubectl get --raw '/api/v1/…?shardSelector=…'", async () => {
      const dir = await mkdtemp(join(tmpdir(), 'rxkube-shard-'));
      const kubectl = kubectlIn(dir, join(dir, 'kubeconfig'));
      try {
        await server.writeKubeconfig(join(dir, 'kubeconfig'));
        const made = await configMaps('default', 8);
        const selector = uidHalf(1);
        const out = JSON.parse(await kubectl.ok(['get', '--raw', `/api/v1/namespaces/default/configmaps?${query({ shardSelector: selector })}`])) as Record<string, unknown>;
        expect((out.metadata as Record<string, unknown>).shardInfo).to.deep.equal({ selector });
        expect(namesOf(itemsOf(out))).to.deep.equal(namesOf(made.filter((m) => inRange(halves[1]!, fnv1a64(m.metadata.uid)))));
        const bad = await kubectl.run(['get', '--raw', `/api/v1/configmaps?${query({ shardSelector: 'shardRange(' })}`]);
        expect(bad.code).to.not.equal(0);
        expect(bad.stderr).to.contain('shardSelector: Invalid value');
      } finally {
        kubectl.stop();
        await rm(dir, { recursive: true, force: true });
      }
    });
  });

  describe('with shardedListAndWatch: false (a server without the feature)', () => {
    beforeEach(async () => {
      ({ server, core } = await startWithClients({ shardedListAndWatch: false }));
      kc = server.kubeConfig();
    });
    afterEach(() => server.close());

    it('ignores shardSelector: every object, no shardInfo, and a malformed one is no error', async () => {
      await configMaps('default', 6);
      for (const selector of [uidHalf(0), 'shardRange(']) {
        const list = await kubeGet(kc, `/api/v1/namespaces/default/configmaps?${query({ shardSelector: selector })}`);
        expect(list.status).to.equal(200);
        expect(itemsOf(list.body)).to.have.length(6);
        expect((list.body.metadata as Record<string, unknown>).shardInfo).to.equal(undefined);
      }
      const watch = new RawWatch(server, watchPath('/api/v1/namespaces/default/configmaps', { shardSelector: uidHalf(0) }));
      try {
        expect(await watch.until(6, 'ADDED')).to.have.length(6);
      } finally {
        watch.close();
      }
    });
  });
});
