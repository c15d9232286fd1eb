import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Subscription } from 'rxjs';
import { controller, installCrd, isInvalid, isNotFound, kubeClient, type KubeClient, type KubeObject } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/apiserver';
import { until } from '../until.js';
import { widgetOptions } from './controller.js';
import { DIRECTORY } from './reconcile.js';
import { Widget } from './resource.js';

// The controller over real HTTP, through the real client-node, against the embedded API server, as it runs against a cluster.

let server: ApiServer;
let client: KubeClient;
let running: Subscription;

before(async () => {
  server = await startApiServer();
  client = kubeClient(server.kubeConfig());
  await installCrd(client, Widget);
  running = controller(widgetOptions(server.kubeConfig())).subscribe();
});
after(async () => {
  running.unsubscribe();
  await server.close();
});

const blog = { ...Widget.resource, namespace: 'default', name: 'blog' };

it('serves a Widget created over HTTP: an owned Deployment and Service, a directory entry, a status', async () => {
  await client.create(Widget.make({ metadata: { name: 'blog', namespace: 'default' }, spec: { image: 'ghost:5', replicas: 1, port: 2368 } }));
  await eventually(async () => {
    const deployment = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'blog' });
    assert.equal(deployment.metadata.ownerReferences?.[0]?.kind, 'Widget');
    const service = await client.get<KubeObject & { spec: { ports: { targetPort: number }[] } }>({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 'blog' });
    assert.equal(service.spec.ports[0]?.targetPort, 2368);
    const widget = await client.get(blog);
    assert.equal(widget.status?.conditions?.[0]?.reason, 'Progressing');
  });
});

it('is refused by the CRD\'s CEL rule when it asks for port 22', async () => {
  const ssh = { apiVersion: blog.apiVersion, kind: blog.kind, metadata: { name: 'ssh', namespace: 'default' }, spec: { image: 'sshd', replicas: 1, port: 22 } };
  await assert.rejects(client.create(ssh), (err: Error) => isInvalid(err) && err.message.includes('port 22 is for SSH, not for a web server'));
});

it('unlists a deleted Widget from the directory before it goes (its finalizer)', async () => {
  await client.remove(blog);
  await eventually(async () => {
    await assert.rejects(client.get(blog), (err: unknown) => isNotFound(err));
    const directory = await client.get<KubeObject & { data?: Record<string, string> }>({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: DIRECTORY });
    assert.equal(directory.data?.blog, undefined);
  });
});

/** Runs `check` until it passes, for 30 s at most; then fails with its last error. */
async function eventually(check: () => Promise<void>): Promise<void> {
  let last: unknown;
  const passed = await until('a check to pass', () =>
    check().then(
      () => true,
      (err: unknown) => {
        last = err;
        return undefined;
      },
    ),
  ).catch(() => undefined);
  if (passed === undefined) throw last;
}
