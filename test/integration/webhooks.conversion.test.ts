import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiextensionsV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { conversionWebhook, selfSignedCertificates, startWebhookServer, type SelfSignedCertificates, type WebhookServer } from 'rxkube/webhooks';
import { failure, modelCrd, RawWatch, start, watchPath } from './apiserver.helpers.js';

/**
 * A CRD with `spec.conversion.strategy: Webhook`: objects are stored in v2
 * and converted by rxkube's conversion webhook when read or written through
 * v1, on get, list, watch, create and patch, through the real client-node.
 */

interface V1Widget {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string };
  spec: { size: number };
}

const widget = (name: string, size: number): V1Widget => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'default' }, spec: { size } });

describe('the embedded API server converting through a conversion webhook', function () {
  this.timeout(60_000);
  let certs: SelfSignedCertificates;
  let webhooks: WebhookServer;
  let server: ApiServer;
  let custom: CustomObjectsApi;
  let reviews = 0;
  const watches: RawWatch[] = [];

  const crd = (url: string, caBundle: string): Record<string, unknown> => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: ['v1', 'v2'].map((name) => ({ name, served: true, storage: name === 'v2', schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } })),
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url, caBundle } } },
    },
  });

  before(async () => {
    certs = await selfSignedCertificates();
    webhooks = await startWebhookServer({
      port: 0,
      host: '127.0.0.1',
      tls: certs,
      webhooks: {
        '/convert': conversionWebhook([
          {
            group: 'example.com',
            kind: 'Widget',
            hub: 'v2',
            spokes: {
              v1: {
                toHub: (o) => {
                  reviews++;
                  const { spec, ...rest } = o as unknown as V1Widget;
                  if (spec.size < 0) throw new Error('spec.size may not be negative');
                  return { ...rest, spec: { dimensions: { size: spec.size } } } as never;
                },
                fromHub: (o) => {
                  reviews++;
                  const { spec, ...rest } = o as unknown as { spec: { dimensions: { size: number } } };
                  return { ...rest, spec: { size: spec.dimensions.size } } as never;
                },
              },
            },
          },
        ]),
      },
    });
    server = await start();
    const kc = server.kubeConfig();
    custom = kc.makeApiClient(CustomObjectsApi);
    await kc.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: modelCrd(crd(`${webhooks.url}/convert`, certs.caBundle)) });
  });
  after(async () => {
    for (const w of watches) w.close();
    await server?.close();
    await webhooks?.close();
  });

  const get = (version: string, name: string) => custom.getNamespacedCustomObject({ group: 'example.com', version, namespace: 'default', plural: 'widgets', name });
  const list = (version: string) => custom.listNamespacedCustomObject({ group: 'example.com', version, namespace: 'default', plural: 'widgets' });

  it('stores an object written at v1 in v2, and reads it back at either version', async () => {
    const created = (await custom.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', body: widget('a', 3) })) as V1Widget;
    expect(created).to.deep.include({ apiVersion: 'example.com/v1', spec: { size: 3 } });
    const atV2 = (await get('v2', 'a')) as { apiVersion: string; spec: unknown; metadata: { uid: string } };
    expect(atV2.apiVersion).to.equal('example.com/v2');
    expect(atV2.spec).to.deep.equal({ dimensions: { size: 3 } });
    expect(atV2.metadata.uid).to.equal(created.metadata.uid);
    expect(((await get('v1', 'a')) as V1Widget).spec).to.deep.equal({ size: 3 });
    expect(reviews).to.be.greaterThan(0);
  });

  it('converts every item of a list', async () => {
    await custom.createNamespacedCustomObject({ group: 'example.com', version: 'v2', namespace: 'default', plural: 'widgets', body: { apiVersion: 'example.com/v2', kind: 'Widget', metadata: { name: 'b' }, spec: { dimensions: { size: 7 } } } });
    const v1 = (await list('v1')) as { apiVersion: string; items: V1Widget[] };
    expect(v1.apiVersion).to.equal('example.com/v1');
    expect(v1.items.map((w) => [w.apiVersion, w.metadata.name, w.spec])).to.deep.equal([
      ['example.com/v1', 'a', { size: 3 }],
      ['example.com/v1', 'b', { size: 7 }],
    ]);
  });

  it('applies a merge patch at v1 to the object as v1 shows it', async () => {
    await custom.patchNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', name: 'b', body: { spec: { size: 8 } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect(((await get('v2', 'b')) as { spec: unknown }).spec).to.deep.equal({ dimensions: { size: 8 } });
  });

  it('converts the objects of a watch at v1, in order', async () => {
    const watch = new RawWatch(server, watchPath('/apis/example.com/v1/namespaces/default/widgets'));
    watches.push(watch);
    const initial = await watch.until(2, 'ADDED');
    expect(initial.map((e) => [e.object.apiVersion, e.object.metadata?.name, e.object.spec])).to.deep.equal([
      ['example.com/v1', 'a', { size: 3 }],
      ['example.com/v1', 'b', { size: 8 }],
    ]);
    await custom.createNamespacedCustomObject({ group: 'example.com', version: 'v2', namespace: 'default', plural: 'widgets', body: { apiVersion: 'example.com/v2', kind: 'Widget', metadata: { name: 'c' }, spec: { dimensions: { size: 1 } } } });
    const [, , third] = await watch.until(3, 'ADDED');
    expect([third?.object.apiVersion, third?.object.spec]).to.deep.equal(['example.com/v1', { size: 1 }]);
  });

  (existsSync('/usr/bin/kubectl') ? it : it.skip)('shows kubectl the object converted to the version it asks for', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rxkube-conversion-'));
    try {
      const kubeconfig = join(dir, 'kubeconfig');
      await server.writeKubeconfig(kubeconfig);
      const run = (args: string[]) => promisify(execFile)('/usr/bin/kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], { env: { PATH: process.env.PATH ?? '', HOME: dir } });
      expect((await run(['get', 'widgets.v1.example.com', 'a', '-o', 'jsonpath={.apiVersion} {.spec.size}'])).stdout).to.equal('example.com/v1 3');
      expect((await run(['get', 'widgets.v2.example.com', 'a', '-o', 'jsonpath={.apiVersion} {.spec.dimensions.size}'])).stdout).to.equal('example.com/v2 3');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('fails a write the webhook cannot convert with a 500 that carries its message, storing nothing', async () => {
    const refused = await failure(custom.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', body: widget('bad', -1) }));
    expect(refused.code).to.equal(500);
    expect(refused.body.message).to.equal('Internal error occurred: conversion webhook for example.com/v2, Kind=Widget failed: Widget default/bad: converting v1 to the hub v2 failed: spec.size may not be negative');
    expect(((await list('v2')) as { items: unknown[] }).items).to.have.length(3);
  });
});
