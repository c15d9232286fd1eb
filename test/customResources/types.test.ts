import { expect } from 'chai';
import Type from 'typebox';
import { defineCustomResource, type ControllerContext, type ObjectOf } from 'rxkube';
import { runReconcile } from 'rxkube/testing';
import { Database } from './database.fixture.js';

/**
 * The type of a defined custom resource's objects, as the compiler sees
 * it: this file is compiled by the project's tsc check (test/project.test.ts),
 * where each `@ts-expect-error` must meet an error, so a spec field that
 * lost its type (or a cast that crept in) fails the suite.
 */

type Db = ObjectOf<typeof Database>;

describe('the type of a defined custom resource', () => {
  it('flows from controller({ for }) into ctx.object, ctx.store and the client, with no cast', async () => {
    const seen: string[] = [];
    const run = await runReconcile(
      {
        for: Database.resource,
        client: { resources: [Database] },
        reconcile: async (key, ctx) => {
          const db = ctx.object;
          if (db === undefined) return;
          const engine: 'postgres' | 'mysql' = db.spec.engine;
          const replicas: number = db.spec.replicas;
          // @ts-expect-error the schema has no `engines`
          void db.spec.engines;
          // @ts-expect-error replicas is an integer, not a string
          const wrong: string = db.spec.replicas;
          void wrong;
          const storage: string | number = db.spec.storage;
          const users: { name: string; role: string }[] | undefined = db.spec.users;
          const phase: string | undefined = ctx.store.get(key)?.status?.phase;
          seen.push(`${engine} ${replicas} ${String(storage)} ${users?.length ?? 0} ${phase ?? '-'}`);
          // The client infers the type from the object it is given: the status is checked against the schema's.
          await ctx.client.updateStatus(db, (live) => {
            live.status = { phase: 'Ready', conditions: [{ type: 'Ready', status: 'True', reason: 'Up' }] };
          });
        },
      },
      ({ seed }) => {
        seed(Database.make({ metadata: { name: 'orders', namespace: 'shop' }, spec: { engine: 'mysql', replicas: 2, storage: '10Gi', users: [{ name: 'app', role: 'rw' }] } }));
      },
    );
    expect(seen[0]).to.equal('mysql 2 10Gi 1 -');
    const stored = run.client.object<Db>({ apiVersion: Database.apiVersion, kind: 'Database', namespace: 'shop', name: 'orders' });
    expect(stored?.status?.phase).to.equal('Ready');
  });

  it('types each version by its own schema, and refuses objects the schema does not allow', () => {
    const beta: ObjectOf<typeof Database, 'v1beta1'> = { apiVersion: Database.versions.v1beta1.apiVersion, kind: 'Database', metadata: { name: 'x' }, spec: { engine: 'anything' } };
    // @ts-expect-error v1beta1 has no status schema
    void beta.status;
    // @ts-expect-error engine is 'postgres' or 'mysql' in v1
    Database.make({ metadata: { name: 'x' }, spec: { engine: 'oracle', replicas: 1, storage: 1 } });
    // @ts-expect-error replicas is required (it has a default, which the server fills in; a client must still say it)
    Database.make({ metadata: { name: 'x' }, spec: { engine: 'mysql', storage: 1 } });
    const lone = defineCustomResource({ group: 'x.example.com', kind: 'Lone', scope: 'Cluster', versions: { v2: { schema: { spec: Type.Object({ n: Type.Number() }) } } } });
    // A lone version is the storage version, in the type as at run time.
    const storage: 'v2' = lone.storageVersion;
    expect(storage).to.equal('v2');
    expect(beta.spec.engine).to.equal('anything');
  });

  it('refuses a reconcile written for another kind', () => {
    const Other = defineCustomResource({ group: 'x.example.com', kind: 'Other', scope: 'Namespaced', versions: { v1: { schema: { spec: Type.Object({ color: Type.String() }) } } } });
    const reconcileOther = (_key: string, ctx: ControllerContext<ObjectOf<typeof Other>>) => void ctx.object?.spec.color;
    // @ts-expect-error a Database controller's reconcile gets Databases, which have no spec.color
    void runReconcile({ for: Database.resource, reconcile: reconcileOther }).catch(() => undefined);
    expect(Other.resource.kind).to.equal('Other');
  });
});
