import { expect } from 'chai';
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { deltas, indexer, isDelta, type KubeObject, type ListWatchEvent } from 'rxkube';
import { obj } from '../support/objects.js';

type Command =
  | { op: 'create' | 'update' | 'delete'; name: string }
  | { op: 'disconnect' | 'resume' | 'relist' | 'brokenRelist' };

const names = ['a', 'b', 'c', 'd', 'e', 'f'];
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constantFrom('create', 'update', 'delete'), name: fc.constantFrom(...names) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('disconnect', 'resume', 'relist', 'brokenRelist') }) },
) as fc.Arbitrary<Command>;

/**
 * A model API server and a model client connection: what the server holds,
 * and the ListWatchEvents a list-watch source would emit for a run of
 * commands, including watch events missed while disconnected.
 */
function simulate(commands: Command[]) {
  const server = new Map<string, KubeObject>();
  const events: ListWatchEvent[] = [];
  let rv = 0;
  let uid = 0;
  let connected = true;
  let missed: ListWatchEvent[] = [];
  const send = (event: ListWatchEvent) => (connected ? events.push(event) : missed.push(event));
  const list = (upTo = server.size) => {
    events.push({ type: 'Restart' });
    for (const object of [...server.values()].slice(0, upTo)) events.push({ type: 'Listed', object });
  };
  const relist = () => {
    list();
    events.push({ type: 'Synced', resourceVersion: String(rv) });
    connected = true;
    missed = [];
  };
  relist();
  for (const c of commands) {
    switch (c.op) {
      case 'create': {
        const old = server.get(c.name);
        if (old) send({ type: 'Deleted', object: { ...old, metadata: { ...old.metadata, resourceVersion: String(++rv) } } });
        const created = obj(c.name, String(++rv), { uid: `u${++uid}` });
        server.set(c.name, created);
        send({ type: 'Added', object: created });
        break;
      }
      case 'update': {
        const old = server.get(c.name);
        if (!old) break;
        const updated = obj(c.name, String(++rv), { uid: old.metadata.uid });
        server.set(c.name, updated);
        send({ type: 'Modified', object: updated });
        break;
      }
      case 'delete': {
        const old = server.get(c.name);
        if (!old) break;
        server.delete(c.name);
        send({ type: 'Deleted', object: { ...old, metadata: { ...old.metadata, resourceVersion: String(++rv) } } });
        break;
      }
      case 'disconnect':
        connected = false;
        break;
      case 'resume':
        // The watch resumes from the last version seen: the server replays what was missed.
        events.push(...missed);
        missed = [];
        connected = true;
        break;
      case 'relist':
        relist();
        break;
      case 'brokenRelist':
        list(Math.floor(server.size / 2));
        relist();
        break;
    }
  }
  if (!connected) relist();
  return { server, events };
}

describe('deltas and indexer, against a model of the server', () => {
  it('end with the store equal to the server, and exactly one Deleted for every object seen that vanished', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 80 }), async (commands) => {
        const { server, events } = simulate(commands);
        const out = await lastValueFrom(from(events).pipe(deltas(), indexer(), toArray()));
        const store = out[out.length - 1]!.store;

        const expected = [...server.values()].map((o) => [`default/${o.metadata.name}`, o.metadata.uid, o.metadata.resourceVersion]);
        const actual = store.list().map((o) => [`default/${o.metadata.name}`, o.metadata.uid, o.metadata.resourceVersion]);
        expect(actual.sort()).to.deep.equal(expected.sort());

        const added = new Map<string, number>();
        const deleted = new Map<string, number>();
        for (const d of out.filter(isDelta)) {
          const u = d.object.metadata.uid as string;
          if (d.type === 'Added') added.set(u, (added.get(u) ?? 0) + 1);
          if (d.type === 'Deleted') deleted.set(u, (deleted.get(u) ?? 0) + 1);
          if (d.type === 'Updated') expect(d.object.metadata.resourceVersion).to.not.equal(d.old?.metadata.resourceVersion);
        }
        const alive = new Set([...server.values()].map((o) => o.metadata.uid));
        for (const [u, count] of added) {
          expect(count, `Added deltas for ${u}`).to.equal(1);
          expect(deleted.get(u) ?? 0, `Deleted deltas for ${u}`).to.equal(alive.has(u) ? 0 : 1);
        }
        // Nothing is deleted that was never added.
        for (const u of deleted.keys()) expect(added.has(u), `deleted ${u} without an Added`).to.equal(true);
      }),
      { numRuns: 300 },
    );
  });
});
