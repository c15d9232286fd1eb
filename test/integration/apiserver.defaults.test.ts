import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { raw, start } from './apiserver.helpers.js';
import { defaultsTable, matches, objectFor, valueAt, type KindDefaults } from './defaultsTable.js';

/**
 * Every default of kube-apiserver 1.32's table (test/data/defaults/kube-1.32.json), each checked
 * on what a create over HTTP returns: one test per entry, on an object made from the kind's
 * `object` and the entry's `given`.
 */

function collectionPath(kind: KindDefaults): string {
  const [group, version] = kind.apiVersion.includes('/') ? kind.apiVersion.split('/') : ['', kind.apiVersion];
  const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  return kind.namespaced ? `${base}/namespaces/default/${kind.resource}` : `${base}/${kind.resource}`;
}

describe('apiserver: built-in defaults as kube-apiserver 1.32 gives them', () => {
  let server: ApiServer;
  before(async () => {
    server = await start();
  });
  after(async () => {
    await server.close();
  });

  it(`the table covers ${defaultsTable.kinds.length} kinds and states its origin`, () => {
    expect(defaultsTable.origin.repository).to.equal('github.com/kubernetes/kubernetes');
    expect(String(defaultsTable.origin.version)).to.match(/^v1\.32/);
    const count = defaultsTable.kinds.reduce((n, k) => n + k.defaults.length, 0);
    expect(count).to.be.greaterThan(200);
    for (const kind of defaultsTable.kinds) for (const entry of kind.defaults) expect(entry.source, `${kind.kind} ${entry.path}`).to.match(/\.go$/);
  });

  for (const kind of defaultsTable.kinds) {
    describe(kind.kind, () => {
      // One object per distinct `given`, created once for the entries that share it.
      const created = new Map<string, Record<string, unknown>>();
      before(async () => {
        const givens = new Map<string, Record<string, unknown> | undefined>();
        for (const entry of kind.defaults) givens.set(JSON.stringify(entry.given ?? null), entry.given);
        let i = 0;
        for (const [key, given] of givens) {
          // A CRD's name is its plural and group: one object for it, whatever it is given.
          const name = kind.kind === 'CustomResourceDefinition' ? String((kind.object.metadata as { name: string }).name) : `${kind.resource.slice(0, 20)}-${i++}`;
          const response = await raw(server, 'POST', collectionPath(kind), {
            body: JSON.stringify(objectFor(kind, given, name)),
            headers: { 'content-type': 'application/json' },
          });
          expect(response.status, response.text).to.equal(201);
          created.set(key, response.json());
        }
      });

      for (const entry of kind.defaults) {
        const title = entry.absent === true ? `leaves ${entry.path} unset` : `defaults ${entry.path} to ${JSON.stringify(entry.value)}`;
        const given = entry.given === undefined ? '' : ` given ${JSON.stringify(entry.given)}`;
        it(`${title}${given} (${entry.function})`, () => {
          const returned = created.get(JSON.stringify(entry.given ?? null)) as Record<string, unknown>;
          expect(matches(entry, returned), `${entry.path} is ${JSON.stringify(valueAt(returned, entry.path))}`).to.equal(true);
        });
      }
    });
  }
});
