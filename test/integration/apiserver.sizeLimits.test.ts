import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { memoryClient, type ApiServer } from 'rxkube/testing';
import { failure, json, raw, startWithClients } from './apiserver.helpers.js';
import { describeKubectl, kubectlIn, type Kubectl } from './kubectl.helpers.js';

/**
 * The limits kube-apiserver 1.32 sets on what it stores, in its words: 256 KiB
 * of annotations on any object, 1 MiB of ConfigMap or Secret data, base64 in
 * a Secret's `data` (and a ConfigMap's `binaryData`), and 3 MiB per request
 * body. Each at the limit (stored) and just past it (refused).
 */

const KiB = 1024;
const MiB = 1024 * KiB;
const cmPath = '/api/v1/namespaces/default/configmaps';
const secretPath = '/api/v1/namespaces/default/secrets';

/** A string of `n` bytes (a two-byte character first, so bytes and characters differ). */
const bytes = (n: number): string => `é${'x'.repeat(n - 2)}`;

describe('embedded API server: size limits and Secret data', function () {
  this.timeout(20_000);
  let server: ApiServer;
  let core: CoreV1Api;

  before(async () => {
    ({ server, core } = await startWithClients());
  });
  after(async () => {
    await server.close();
  });

  it('stores 256 KiB of annotations (keys and values, in bytes) and refuses one byte more with kube 422, on create and update', async () => {
    const at = { a: bytes(256 * KiB - 1) };
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'notes', annotations: at } } });
    const over = { ab: bytes(256 * KiB - 1) };
    const created = await failure(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'notes-2', annotations: over } } }));
    expect(created.code).to.equal(422);
    expect(created.body).to.deep.include({
      reason: 'Invalid',
      message: 'ConfigMap "notes-2" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes',
      details: { name: 'notes-2', kind: 'ConfigMap', causes: [{ reason: 'FieldValueTooLong', message: 'Too long: may not be more than 262144 bytes', field: 'metadata.annotations' }] },
    });
    const updated = await failure(core.patchNamespacedConfigMap({ namespace: 'default', name: 'notes', body: [{ op: 'add', path: '/metadata/annotations/b', value: '' }] }));
    expect(updated.code).to.equal(422);
    // Any kind: the limit is kube's ObjectMeta validation.
    const ns = await failure(core.createNamespace({ body: { metadata: { name: 'noted', annotations: over } } }));
    expect(ns.body.message).to.equal('Namespace "noted" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes');
  });

  it('stores a ConfigMap of 1 MiB of data and binaryData together, and refuses one byte more on the whole object ([]), as kube does', async () => {
    const binary = Buffer.alloc(MiB / 2, 7).toString('base64');
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'full' }, data: { text: bytes(MiB / 2) }, binaryData: { bin: binary } } });
    const over = await failure(
      core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'over' }, data: { text: bytes(MiB / 2 + 1) }, binaryData: { bin: binary } } }),
    );
    expect(over.code).to.equal(422);
    expect(over.body).to.deep.include({ message: 'ConfigMap "over" is invalid: []: Too long: may not be more than 1048576 bytes' });
    expect((over.body.details as { causes: unknown }).causes).to.deep.equal([{ reason: 'FieldValueTooLong', message: 'Too long: may not be more than 1048576 bytes', field: '[]' }]);
    const grown = await failure(core.patchNamespacedConfigMap({ namespace: 'default', name: 'full', body: [{ op: 'add', path: '/data/more', value: 'x' }] }));
    expect(grown.code).to.equal(422);
  });

  it('stores a Secret of 1 MiB of decoded data (stringData counted with it) and refuses one byte more on data', async () => {
    const half = Buffer.alloc(MiB / 2, 1).toString('base64');
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'full' }, data: { a: half }, stringData: { b: bytes(MiB / 2) } } });
    const over = await failure(core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'over' }, data: { a: half }, stringData: { b: bytes(MiB / 2 + 1) } } }));
    expect(over.code).to.equal(422);
    expect(over.body.message).to.equal('Secret "over" is invalid: data: Too long: may not be more than 1048576 bytes');
    // A key in both counts once, as its stringData.
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'overridden' }, data: { a: half, b: half }, stringData: { b: bytes(MiB / 2) } } });
  });

  it('refuses Secret data that is not base64 with kube 400, naming the byte as Go does, on create and update; binaryData too', async () => {
    const cases: [string, number][] = [
      ['admin', 4],
      ['<foo>', 0],
      ['YWJj', -1],
      ['YWI=', -1],
      ['YQ==', -1],
      ['YQ=', 3],
      ['YQ', 0],
      ['YW\nJj', -1],
      ['YWJj=', 4],
      ['YQ==YQ==', 4],
      ['APIKEY_BASE64', 6],
    ];
    for (const [value, offset] of cases) {
      const res = await json(server, 'POST', secretPath, { metadata: { generateName: 's-' }, data: { k: value } });
      if (offset < 0) {
        expect(res.status, value).to.equal(201);
        continue;
      }
      expect(res.status, value).to.equal(400);
      expect(res.json()).to.deep.include({ reason: 'BadRequest', message: `Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte ${offset}` });
    }
    await json(server, 'POST', secretPath, { metadata: { name: 'b64' }, data: { k: 'YWJj' } });
    const put = await json(server, 'PUT', `${secretPath}/b64`, { metadata: { name: 'b64' }, data: { k: 'not base64' } });
    expect(put.status).to.equal(400);
    expect(put.json().message).to.equal('Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3');
    const bin = await json(server, 'POST', cmPath, { metadata: { name: 'bin' }, binaryData: { k: 'é' } });
    expect(bin.status).to.equal(400);
    expect(bin.json().message).to.equal('ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 0');
  });

  it('takes a body of exactly 3 MiB and answers one byte more with 413, in kube words', async () => {
    // A body of an exact size: a ConfigMap's JSON padded with spaces, which JSON allows.
    const body = (size: number): string => {
      const text = JSON.stringify({ metadata: { name: `body-${size}` } });
      return text + ' '.repeat(size - text.length);
    };
    const at = await raw(server, 'POST', cmPath, { body: body(3 * MiB), headers: { 'Content-Type': 'application/json' } });
    expect(at.status).to.equal(201);
    const over = await raw(server, 'POST', cmPath, { body: body(3 * MiB + 1), headers: { 'Content-Type': 'application/json' } });
    expect(over.status).to.equal(413);
    expect(over.json()).to.deep.equal({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Request entity too large: limit is 3145728', reason: 'RequestEntityTooLarge', code: 413 });
  });

  it('holds the in-process memory client to the same 3 MiB body limit', async () => {
    const client = memoryClient();
    const big = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'big', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x', args: ['y'.repeat(3 * MiB)] }] } };
    const error = await client.create(big).then(
      () => undefined,
      (e: unknown) => e as { code?: number; message?: string },
    );
    expect(error?.code).to.equal(413);
    expect(error?.message).to.contain('Request entity too large: limit is 3145728');
  });
});

describeKubectl('kubectl against the embedded API server: size limits', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let dir: string;
  let kubectl: Kubectl;

  before(async () => {
    ({ server } = await startWithClients());
    dir = await mkdtemp(join(tmpdir(), 'rxkube-kubectl-sizes-'));
    await server.writeKubeconfig(join(dir, 'kubeconfig'));
    kubectl = kubectlIn(dir, join(dir, 'kubeconfig'));
  });
  after(async () => {
    kubectl.stop();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses kubectl apply of a ConfigMap whose last-applied annotation passes 256 KiB, as a cluster does, and creates it with kubectl create', async () => {
    const manifest = stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dashboard', namespace: 'default' }, data: { 'board.json': 'x'.repeat(300 * KiB) } });
    const applied = await kubectl.run(['apply', '-f', '-'], manifest);
    expect(applied.code).to.equal(1);
    expect(applied.stderr).to.equal('The ConfigMap "dashboard" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes\n');
    expect(await kubectl.ok(['create', '-f', '-'], manifest)).to.equal('configmap/dashboard created\n');
  });

  it('refuses kubectl create of a Secret whose data is not base64, in kube words', async () => {
    const manifest = stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'default' }, data: { username: 'admin' } });
    const created = await kubectl.run(['create', '-f', '-'], manifest);
    expect(created.code).to.equal(1);
    expect(created.stderr).to.contain('Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 4');
  });
});
