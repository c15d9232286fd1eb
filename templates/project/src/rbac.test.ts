import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { installCrd, isForbidden, kubeClient, silentLogger, type KubeClient, type KubeObject, type Logger } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/apiserver';
import { apis } from './apis.js';
import { until } from './until.js';

// RBAC checked, not trusted: each controller runs as the ServiceAccount of its generated manifests, applied to
// the embedded API server with RBAC on. It converges without one refusal, and a write its wiring does not declare
// is kube's 403.

const namespace = 'operators';
let server: ApiServer;
let admin: KubeClient;

before(async () => {
  server = await startApiServer({ rbac: true, logger: silentLogger });
  admin = kubeClient(server.kubeConfig(), { fieldManager: 'admin' });
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
});
after(async () => {
  await server.close();
});

for (const api of apis) {
  it(`${api.kind}: converges as its ServiceAccount with the RBAC of its manifests, and a write it did not declare is refused`, async () => {
    const objects = api.manifests({ namespace, image: 'controller:test' });
    for (const object of objects) {
      if (object.kind === 'CustomResourceDefinition') await installCrd(admin, object);
      else await admin.apply(object, { force: true });
    }
    const account = objects.find((o) => o.kind === 'ServiceAccount')?.metadata.name as string;
    const asServiceAccount = server.kubeConfigFor({ serviceAccount: `${namespace}/${account}` });
    const complaints: string[] = [];
    const running = api.controller(asServiceAccount, namespace, complaining(complaints)).subscribe();
    try {
      await api.converge(admin, namespace);
      // Its Events too: the recorder's writes are allowed by the Role.
      await until(`an Event of ${account}`, async () => {
        const events = await admin.list<KubeObject & { reportingController?: string }>({ apiVersion: 'events.k8s.io/v1', kind: 'Event', namespace });
        return events.find((e) => e.reportingController === account);
      });
      assert.deepEqual(complaints.filter((line) => /forbidden|403/i.test(line)), [], 'refusals logged');
      const refused: unknown = await kubeClient(asServiceAccount)
        .create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sneaky', namespace } })
        .then(() => undefined, (err: unknown) => err);
      assert.ok(isForbidden(refused), `expected a 403, got ${String(refused)}`);
      assert.match((refused as Error).message, new RegExp(`secrets is forbidden: User "system:serviceaccount:${namespace}:${account}" cannot create resource "secrets"`));
    } finally {
      running.unsubscribe();
    }
  });
}

/** A logger that keeps the warnings and errors, so that the test can say none was a refusal. */
function complaining(lines: string[]): Logger {
  const keep = (fields: string | Record<string, unknown>, message?: string): void => {
    lines.push(`${message ?? ''} ${JSON.stringify(fields)}`);
  };
  return { ...silentLogger, warn: keep, error: keep };
}
