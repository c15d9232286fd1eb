import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { waitFor } from '../support/waitFor.js';

const child = new URL('../fixtures/shardedChild.ts', import.meta.url).pathname;
const slots = 256;
/** The children's timing (shardedChild.ts): lease 2 s, retry 250 ms. */
const leaseTicks = 2_000 / 250;
/**
 * A killed member's slots are taken within one lease duration plus this
 * margin, counted in renewals of the survivor's own Lease: one tick for
 * the last change it saw before the kill, one to write its claim, one to
 * confirm it, and one for jitter.
 */
const marginTicks = 4;

interface Said {
  who: string;
  t: number;
  start?: string;
  end?: string;
  slots?: number[];
  members?: string[];
  stored?: number;
  error?: string;
}

interface Replica {
  name: string;
  proc: ChildProcess;
  exited: Promise<number>;
}

describe('sharding: replicas in their own processes', function () {
  this.timeout(240_000);
  let server: ApiServer;
  let replicas: Replica[] = [];
  const said: Said[] = [];

  const spawnReplica = (name: string, slotCount = slots): Replica => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, server.url, name, 'uid', String(slotCount)], { stdio: ['ignore', 'pipe', 'inherit'] });
    createInterface(proc.stdout!).on('line', (line) => said.push(JSON.parse(line) as Said));
    const exited = new Promise<number>((resolve) => proc.on('exit', () => resolve(Date.now())));
    const replica = { name, proc, exited };
    replicas.push(replica);
    return replica;
  };
  const latest = (who: string): Said | undefined => said.filter((s) => s.who === who && s.slots !== undefined).at(-1);
  const covered = (names: string[], slotCount = slots): boolean => {
    const owners = names.flatMap((name) => latest(name)?.slots ?? []);
    return owners.length === slotCount && new Set(owners).size === slotCount;
  };

  beforeEach(async () => {
    said.length = 0;
    replicas = [];
    server = await startApiServer();
  });

  afterEach(async () => {
    for (const replica of replicas) replica.proc.kill('SIGKILL');
    await Promise.all(replicas.map((replica) => replica.exited));
    await server.close();
  });

  it('three replicas split the keys, a killed one\'s keys move within a lease duration, and no key ever runs on two at once', async () => {
    const api = server.kubeConfig().makeApiClient(CoreV1Api);
    const names = Array.from({ length: 60 }, (_, i) => `cm-${i}`);
    for (const name of names) await api.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name } } });
    const members = ['replica-a', 'replica-b', 'replica-c'];
    for (const name of members) spawnReplica(name);

    await waitFor(() => covered(members) && members.every((m) => latest(m)?.members?.length === 3), 'the three replicas to split every slot', 60_000);
    await waitFor(() => names.every((name) => said.some((s) => s.end === `default/${name}`)), 'every key to be reconciled', 30_000);
    const ranOn = (key: string) => new Set(said.filter((s) => s.start === key).map((s) => s.who));
    const byReplica = new Map(members.map((m) => [m, names.filter((name) => ranOn(`default/${name}`).has(m)).length]));
    for (const m of members) expect(byReplica.get(m), `keys reconciled by ${m}`).to.be.greaterThan(0);

    // Kill one; count the survivors' renewals until they have taken all its slots.
    const victim = replicas[0]!;
    const leaseWrites = () => server.requestLog.filter((r) => r.method === 'PUT' && r.resource === 'leases');
    const before = leaseWrites().length;
    victim.proc.kill('SIGKILL');
    const killedAt = await victim.exited;
    const survivors = members.slice(1);
    await waitFor(() => covered(survivors) && said.some((s) => s.t > killedAt && s.who === survivors[0]), 'the survivors to take every slot', 30_000);
    const renewals = leaseWrites().slice(before).filter((r) => r.name?.includes(survivors[0]!)).length;
    expect(renewals, `renewals of ${survivors[0]}'s Lease until the takeover`).to.be.at.most(leaseTicks + marginTicks);
    expect(renewals, 'the takeover waited for the lease to expire').to.be.at.least(leaseTicks - 1);

    // Every key changes once more: all of them are now reconciled by the survivors.
    const changedAt = Date.now();
    for (const name of names) await api.replaceNamespacedConfigMap({ namespace: 'default', name, body: { metadata: { name }, data: { round: '2' } } });
    await waitFor(() => names.every((name) => said.some((s) => s.end === `default/${name}` && s.t >= changedAt)), 'every key to be reconciled after the kill', 30_000);
    for (const name of names) {
      const after = said.filter((s) => s.start === `default/${name}` && s.t >= changedAt).map((s) => s.who);
      expect(after.every((who) => survivors.includes(who)), `default/${name} after the kill`).to.equal(true);
    }

    // From every start and end: no key ran on two replicas at once (a run of the killed replica ended when it died).
    const runs = new Map<string, Array<{ who: string; from: number; to: number }>>();
    const open = new Map<string, number>();
    for (const s of said) {
      if (s.start !== undefined) open.set(`${s.who} ${s.start}`, s.t);
      if (s.end !== undefined) {
        const from = open.get(`${s.who} ${s.end}`)!;
        open.delete(`${s.who} ${s.end}`);
        runs.set(s.end, [...(runs.get(s.end) ?? []), { who: s.who, from, to: s.t }]);
      }
    }
    for (const [at, from] of open) {
      const [who, key] = at.split(' ') as [string, string];
      runs.set(key, [...(runs.get(key) ?? []), { who, from, to: who === victim.name ? killedAt : Infinity }]);
    }
    const overlaps = [...runs].flatMap(([key, list]) =>
      list.flatMap((x, i) => list.slice(i + 1).filter((y) => x.who !== y.who && x.from < y.to && y.from < x.to).map((y) => `${key}: ${x.who} and ${y.who}`)),
    );
    expect(overlaps).to.deep.equal([]);
    expect(said.filter((s) => s.error !== undefined)).to.deep.equal([]);
  });

  it('with the server honouring shardSelector, each replica\'s store holds about a third of the objects, and together all of them once', async () => {
    const api = server.kubeConfig().makeApiClient(CoreV1Api);
    const total = 900;
    // Finer slots split more evenly, but rendezvous hashing scatters a member's slots, and each range is a
    // term of the selector sent in the URL: 512 slots keep it near 10 kB, under Node's 16 kB header limit.
    const fine = 512;
    await Promise.all(
      Array.from({ length: 6 }, async (_, batch) => {
        for (let i = batch; i < total; i += 6) await api.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `cm-${i}` } } });
      }),
    );
    const members = ['replica-a', 'replica-b', 'replica-c'];
    for (const name of members) spawnReplica(name, fine);
    const stored = (who: string) => latest(who)?.stored ?? 0;
    await waitFor(
      // Each store re-lists as its ranges settle: wait until every one holds its share of the final split.
      () => covered(members, fine) && members.every((m) => latest(m)?.members?.length === 3 && stored(m) > 0) && members.reduce((n, m) => n + stored(m), 0) === total,
      'the three replicas to split every slot and cache their share',
      150_000,
    );
    for (const m of members) expect(stored(m), `objects in ${m}'s store`).to.be.within((total / 3) * 0.8, (total / 3) * 1.2);
    // Listed with the selector, answered with shardInfo: the server did the filtering.
    const lists = server.requestLog.filter((r) => r.verb === 'list' && r.resource === 'configmaps' && r.query.shardSelector !== undefined);
    expect(lists.length).to.be.greaterThan(0);
    expect(said.filter((s) => s.error !== undefined)).to.deep.equal([]);
  });
});
