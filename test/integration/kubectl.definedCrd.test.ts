import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { installCrd, isInvalid, kubeClient, uninstallCrd } from 'rxkube';
import type { ApiServer } from 'rxkube/testing';
import { Database } from '../customResources/database.fixture.js';
import { start } from './apiserver.helpers.js';
import { describeKubectl, kubectlIn, type Kubectl } from './kubectl.helpers.js';

/**
 * A CRD made by `defineCustomResource`, as a user deploys it: applied with
 * `kubectl apply --server-side`, served with its printer columns, scale
 * subresource and CEL rules; and installed by `installCrd` from the
 * definition itself.
 */
describeKubectl('a defined custom resource on the embedded API server', function () {
  this.timeout(60_000);
  let server: ApiServer;
  let dir: string;
  let kubectl: Kubectl;

  before(async () => {
    server = await start();
    dir = await mkdtemp(join(tmpdir(), 'rxkube-defined-crd-'));
    await server.writeKubeconfig(join(dir, 'kubeconfig'));
    kubectl = kubectlIn(dir, join(dir, 'kubeconfig'));
  });
  after(async () => {
    kubectl?.stop();
    await server?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('is applied by kubectl apply --server-side, Established, and serves its kind with its columns, rules and scale', async () => {
    expect(await kubectl.ok(['apply', '--server-side', '-f', '-'], stringify(Database.crd))).to.contain('customresourcedefinition.apiextensions.k8s.io/databases.db.example.com serverside-applied');
    await kubectl.ok(['wait', '--for=condition=Established', '--timeout=20s', 'crd/databases.db.example.com']);
    const orders = Database.make({ metadata: { name: 'orders', namespace: 'default' }, spec: { engine: 'mysql', replicas: 2, storage: '10Gi' } });
    await kubectl.ok(['apply', '--server-side', '-f', '-'], stringify(orders));
    const table = await kubectl.ok(['get', 'db', 'orders']);
    expect(table.split('\n')[0]).to.match(/^NAME\s+ENGINE\s+REPLICAS\s+AGE$/);
    expect(table.split('\n')[1]).to.match(/^orders\s+mysql\s+2\s+\S+$/);
    const tooMany = Database.make({ metadata: { name: 'big', namespace: 'default' }, spec: { engine: 'mysql', replicas: 4, storage: 1 } });
    const refused = await kubectl.run(['apply', '--server-side', '-f', '-'], stringify(tooMany));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain('spec.replicas: Forbidden: only postgres runs more than 3 replicas');
    await kubectl.ok(['scale', 'db/orders', '--replicas=3']);
    expect(await kubectl.ok(['get', 'db', 'orders', '-o', 'jsonpath={.spec.replicas}'])).to.equal('3');
  });

  it('is installed and removed by installCrd and uninstallCrd from the definition, and defaults what its schema defaults', async () => {
    const client = kubeClient(server.kubeConfig());
    await uninstallCrd(client, Database, { timeout: 10_000 });
    await installCrd(client, Database, { timeout: 10_000 });
    // What a client leaves out (engine, replicas), the schema's defaults fill in.
    const created = await client.create({ apiVersion: Database.apiVersion, kind: Database.kind, metadata: { name: 'tiny', namespace: 'default' }, spec: { storage: 1 } });
    expect(created.spec).to.deep.include({ engine: 'postgres', replicas: 1 });
    const longName = Database.make({ metadata: { name: 'a-name-longer-than-thirty-characters', namespace: 'default' }, spec: { engine: 'postgres', replicas: 1, storage: 1 } });
    let error: unknown;
    await client.create(longName).catch((err: unknown) => (error = err));
    expect(isInvalid(error), String(error)).to.equal(true);
    expect(String(error)).to.contain('a database name has at most 30 characters');
  });
});
