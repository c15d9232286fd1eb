import { KubeConfig, type ApiextensionsV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { firstValueFrom } from 'rxjs';
import { silentLogger } from 'rxkube';
import type { ApiServer } from 'rxkube/testing';
import { servedInDiscovery } from '../../src/sources/discoveryProbe.js';
import { modelCrd, startWithClients, widgetCrd } from './apiserver.helpers.js';
import { waitFor } from '../support/waitFor.js';

describe('servedInDiscovery: whether the server serves a resource type, from its discovery', () => {
  let server: ApiServer;
  let extensions: ApiextensionsV1Api;
  before(async () => {
    ({ server, extensions } = await startWithClients({ logger: silentLogger }));
  });
  after(async () => {
    await server.close();
  });

  it('says false for a CRD not installed (its group unknown, 404) and true once it is, and reads the core group', async () => {
    const kc = server.kubeConfig();
    const widgets = { group: 'example.com', version: 'v1', resource: 'widgets' };
    const codes: number[] = [];
    const requests = { request: () => (code: number) => void codes.push(code) };
    expect(await firstValueFrom(servedInDiscovery(kc, widgets, requests))).to.equal(false);
    await extensions.createCustomResourceDefinition({ body: modelCrd(widgetCrd()) });
    expect(await firstValueFrom(servedInDiscovery(kc, widgets, requests))).to.equal(true);
    // Another plural of a group the server knows: listed, but not this one.
    expect(await firstValueFrom(servedInDiscovery(kc, { ...widgets, resource: 'gadgets' }))).to.equal(false);
    expect(await firstValueFrom(servedInDiscovery(kc, { version: 'v1', resource: 'configmaps' }))).to.equal(true);
    expect(await firstValueFrom(servedInDiscovery(kc, { version: 'v1', resource: 'configmaps/status' }))).to.equal(false);
    expect(codes).to.deep.equal([404, 200]);
  });

  describe('against a server that answers otherwise', () => {
    let fake: Server;
    let kc: KubeConfig;
    let answer: { status: number; body: string };
    before(async () => {
      fake = createServer((_req, res) => res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(answer.body));
      await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
      kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'fake', server: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`, skipTLSVerify: true }],
        users: [{ name: 'fake' }],
        contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
        currentContext: 'fake',
      });
    });
    after(async () => {
      fake.closeAllConnections();
      await new Promise((resolve) => fake.close(resolve));
    });

    const failure = async (): Promise<Error> => {
      try {
        await firstValueFrom(servedInDiscovery(kc, { group: 'example.com', version: 'v1', resource: 'widgets' }));
      } catch (err) {
        return err as Error;
      }
      throw new Error('expected the probe to fail');
    };

    it('errors naming the status and the Status message of an answer other than 200 or 404', async () => {
      answer = { status: 503, body: JSON.stringify({ kind: 'Status', reason: 'ServiceUnavailable', message: 'the server is shutting down' }) };
      expect((await failure()).message).to.equal('discovery of /apis/example.com/v1 answered 503 ServiceUnavailable: the server is shutting down');
    });

    it('errors on a body that is no APIResourceList, or no JSON', async () => {
      answer = { status: 200, body: '{"kind":"Status"}' };
      expect((await failure()).message).to.equal('discovery of /apis/example.com/v1 is no APIResourceList (no resources array)');
      answer = { status: 200, body: '<html>' };
      expect((await failure()).message).to.equal('discovery of /apis/example.com/v1 is not JSON');
    });

    it('aborts its request when unsubscribed', async () => {
      let requests = 0;
      let closed = 0;
      const held = createServer((req, res) => {
        requests++;
        req.on('close', () => closed++);
        void res;
      });
      await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
      const heldConfig = new KubeConfig();
      heldConfig.loadFromOptions({
        clusters: [{ name: 'held', server: `http://127.0.0.1:${(held.address() as AddressInfo).port}`, skipTLSVerify: true }],
        users: [{ name: 'held' }],
        contexts: [{ name: 'held', cluster: 'held', user: 'held' }],
        currentContext: 'held',
      });
      try {
        const subscription = servedInDiscovery(heldConfig, { group: 'example.com', version: 'v1', resource: 'widgets' }).subscribe();
        await waitFor(() => requests === 1, 'the request');
        subscription.unsubscribe();
        await waitFor(() => closed === 1, 'the request to be aborted');
      } finally {
        held.closeAllConnections();
        await new Promise((resolve) => held.close(resolve));
      }
    });
  });
});
