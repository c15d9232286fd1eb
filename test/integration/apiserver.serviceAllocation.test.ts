import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { raw, start } from './apiserver.helpers.js';

/**
 * Service cluster IPs and node ports, as kube-apiserver 1.32's service registry allocates them:
 * from the server's service CIDR (kube's default 10.0.0.0/24, or the one it is started with) and
 * 30000-32767, unique, free again once the Service is deleted, a requested value that is taken or
 * out of range refused in kube's words; and each write path (update, every patch, apply) defaults
 * again what it dropped.
 */

const services = '/api/v1/namespaces/default/services';
const json = { 'content-type': 'application/json' };

function service(name: string, spec: Record<string, unknown>): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...spec } });
}

type Spec = { clusterIP?: string; clusterIPs?: string[]; ports: { nodePort?: number }[] };

async function create(server: ApiServer, name: string, spec: Record<string, unknown> = {}): Promise<{ status: number; spec: Spec; message: string }> {
  const res = await raw(server, 'POST', services, { body: service(name, spec), headers: json });
  const body = res.json() as { spec: Spec; message: string };
  return { status: res.status, spec: body.spec, message: body.message };
}

describe('apiserver: Service cluster IPs and node ports, and defaults on every write path', () => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await start();
  });
  afterEach(async () => {
    await server.close();
  });

  it('gives each Service its own IP of 10.0.0.0/24 and frees it when the Service is deleted', async () => {
    const ips = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const made = await create(server, `s${i}`);
      expect(made.spec.clusterIP).to.match(/^10\.0\.0\.\d+$/);
      expect(made.spec.clusterIPs).to.deep.equal([made.spec.clusterIP]);
      ips.add(made.spec.clusterIP as string);
    }
    expect(ips.size).to.equal(20);
    const taken = (await raw(server, 'GET', `${services}/s0`)).json() as { spec: Spec };
    const ip = taken.spec.clusterIP as string;
    const refused = await create(server, 'again', { clusterIP: ip });
    expect([refused.status, refused.message]).to.deep.equal([
      422,
      `Service "again" is invalid: spec.clusterIPs: Invalid value: ["${ip}"]: failed to allocate IP ${ip}: provided IP is already allocated`,
    ]);
    expect((await raw(server, 'DELETE', `${services}/s0`)).status).to.equal(200);
    expect((await create(server, 'again', { clusterIP: ip })).spec.clusterIP).to.equal(ip);
  });

  it('refuses an IP outside the service CIDR in kube\'s words, and keeps a headless Service headless', async () => {
    const refused = await create(server, 'out', { clusterIP: '10.1.0.5' });
    expect(refused.message).to.equal(
      'Service "out" is invalid: spec.clusterIPs: Invalid value: ["10.1.0.5"]: failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid range. The range of valid IPs is 10.0.0.0/24',
    );
    const headless = await create(server, 'headless', { clusterIP: 'None' });
    expect([headless.spec.clusterIP, headless.spec.clusterIPs]).to.deep.equal(['None', ['None']]);
  });

  it('allocates from the CIDR the server is started with', async () => {
    const other = await start({ serviceCidr: '172.20.0.0/16' });
    try {
      expect((await create(other, 'x')).spec.clusterIP).to.match(/^172\.20\.\d+\.\d+$/);
      expect((await create(other, 'y', { clusterIP: '10.0.0.5' })).message).to.contain('The range of valid IPs is 172.20.0.0/16');
    } finally {
      await other.close();
    }
  });

  it('gives NodePort and LoadBalancer ports unique node ports of 30000-32767, refusing a taken or out-of-range one', async () => {
    const a = await create(server, 'np', { type: 'NodePort', ports: [{ port: 80 }, { port: 443 }] });
    const b = await create(server, 'lb', { type: 'LoadBalancer' });
    const ports = [...a.spec.ports, ...b.spec.ports].map((p) => p.nodePort as number);
    expect(new Set(ports).size).to.equal(3);
    for (const port of ports) expect(port).to.be.within(30000, 32767);
    const taken = await create(server, 'taken', { type: 'NodePort', ports: [{ port: 80, nodePort: ports[0] }] });
    expect(taken.message).to.equal(`Service "taken" is invalid: spec.ports[0].nodePort: Invalid value: ${ports[0]}: provided port is already allocated`);
    const out = await create(server, 'out', { type: 'NodePort', ports: [{ port: 80, nodePort: 8080 }] });
    expect(out.message).to.equal('Service "out" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767');
  });

  it('keeps the cluster IP and node ports through a PUT of the manifest, which is then no change at all', async () => {
    const made = await create(server, 'kept', { type: 'NodePort' });
    const before = (await raw(server, 'GET', `${services}/kept`)).json() as { metadata: { resourceVersion: string } };
    const put = await raw(server, 'PUT', `${services}/kept`, { body: service('kept', { type: 'NodePort' }), headers: json });
    const after = put.json() as { spec: Spec; metadata: { resourceVersion: string } };
    expect([after.spec.clusterIP, after.spec.ports[0]?.nodePort]).to.deep.equal([made.spec.clusterIP, made.spec.ports[0]?.nodePort]);
    expect(after.metadata.resourceVersion).to.equal(before.metadata.resourceVersion);
  });

  it('defaults again, on an update and on every patch type and apply, what the write left out', async () => {
    const deployments = '/apis/apps/v1/namespaces/default/deployments';
    const deployment = (spec: Record<string, unknown> = {}): string =>
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } }, ...spec },
      });
    type D = { spec: { revisionHistoryLimit: number; strategy: unknown; progressDeadlineSeconds: number; template: { spec: { dnsPolicy: string } } } };
    expect((await raw(server, 'POST', deployments, { body: deployment(), headers: json })).status).to.equal(201);
    const put = (await raw(server, 'PUT', `${deployments}/d`, { body: deployment({ strategy: { type: 'Recreate' } }), headers: json })).json() as D;
    expect(put.spec.strategy).to.deep.equal({ type: 'Recreate' });
    const merge = (await raw(server, 'PATCH', `${deployments}/d`, { body: '{"spec":{"revisionHistoryLimit":null,"strategy":null}}', headers: { 'content-type': 'application/merge-patch+json' } })).json() as D;
    expect([merge.spec.revisionHistoryLimit, merge.spec.strategy]).to.deep.equal([10, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } }]);
    const jsonPatch = (await raw(server, 'PATCH', `${deployments}/d`, { body: '[{"op":"remove","path":"/spec/template/spec/dnsPolicy"}]', headers: { 'content-type': 'application/json-patch+json' } })).json() as D;
    expect(jsonPatch.spec.template.spec.dnsPolicy).to.equal('ClusterFirst');
    const strategic = (await raw(server, 'PATCH', `${deployments}/d`, { body: '{"spec":{"progressDeadlineSeconds":null}}', headers: { 'content-type': 'application/strategic-merge-patch+json' } })).json() as D;
    expect(strategic.spec.progressDeadlineSeconds).to.equal(600);
    const applied = await raw(server, 'PATCH', `${deployments}/d?fieldManager=me&force=true`, { body: deployment({ revisionHistoryLimit: 3 }), headers: { 'content-type': 'application/apply-patch+yaml' } });
    const a = applied.json() as D & { metadata: { managedFields: { manager: string; fieldsV1: unknown }[] } };
    expect([a.spec.revisionHistoryLimit, a.spec.progressDeadlineSeconds]).to.deep.equal([3, 600]);
    const mine = JSON.stringify(a.metadata.managedFields.find((m) => m.manager === 'me')?.fieldsV1);
    expect(mine).to.contain('"f:revisionHistoryLimit"');
    expect(mine).not.to.contain('"f:progressDeadlineSeconds"');
  });
});
