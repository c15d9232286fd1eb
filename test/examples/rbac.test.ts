import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import { parseAllDocuments } from 'yaml';
import { controller, findCondition, installCrd, isForbidden, kubeClient, runPipeline, silentLogger, type KubeClient, type KubeObject, type Logger, type RunningPipeline } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { runCli } from '../../src/cli.js';
import { define, isPipeline, loadDefinition } from '../../src/deploy/definition.js';
import { initWorkTree } from '../../examples/gitsync/workTree.js';
import { waitFor } from '../support/waitFor.js';

/**
 * RBAC checked, not trusted: each example controller runs as the
 * ServiceAccount of its generated manifests, applied to the embedded API
 * server with RBAC on. It converges without one refusal, and a write its
 * wiring does not declare is a 403 that names the missing permission as
 * kube words it.
 */

interface Example {
  module: string;
  namespace: string;
  /** What the example needs to find in the cluster, created as the admin. */
  setup(admin: KubeClient, namespace: string): Promise<void>;
  /** The cluster shows the controller did its work. */
  converged(server: ApiServer, namespace: string): boolean;
  /** A write the wiring does not declare, made with the controller's own credentials. */
  outside(client: KubeClient, namespace: string): Promise<unknown>;
  /** The refusal kube words for it. */
  refusal(namespace: string): string;
}

const deployment = (namespace: string, name: string, template: Record<string, unknown> = {}): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'pause', ...template }] } } },
  }) as KubeObject;

const find = (server: ApiServer, group: string, resource: string, namespace: string, name: string): (KubeObject & Record<string, any>) | undefined => // eslint-disable-line @typescript-eslint/no-explicit-any
  server.snapshot({ group, version: 'v1', resource, namespace }).find((o) => o.metadata.name === name);

const autoscalerScaled = (server: ApiServer, namespace: string): boolean => {
  const pa = find(server, 'autoscaling.rxkube.dev', 'podautoscalers', namespace, 'web');
  return findCondition(pa?.status?.conditions, 'Ready')?.reason === 'Scaled' && find(server, 'apps', 'deployments', namespace, 'web')?.spec.replicas === 3;
};
const createAutoscaled = async (admin: KubeClient, namespace: string): Promise<void> => {
  await admin.create(deployment(namespace, 'web'));
  await admin.create({ apiVersion: 'autoscaling.rxkube.dev/v1', kind: 'PodAutoscaler', metadata: { name: 'web', namespace }, spec: { targetDeployment: 'web', replicas: 3 } } as KubeObject);
};

/** Folders the examples' setups made, removed after the suite. */
const temporary: string[] = [];

const examples: Example[] = [
  {
    module: 'examples/podautoscaler/controller.ts',
    namespace: 'autoscalers',
    setup: createAutoscaled,
    converged: autoscalerScaled,
    outside: (client, namespace) => client.create(deployment(namespace, 'sneaky')),
    refusal: (ns) => `deployments.apps is forbidden: User "system:serviceaccount:${ns}:podautoscaler" cannot create resource "deployments" in API group "apps" in the namespace "${ns}"`,
  },
  {
    module: 'examples/configmap-rollout/controller.ts',
    namespace: 'rollout',
    setup: async (admin, namespace) => {
      await admin.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace }, data: { level: 'info' } } as KubeObject);
      await admin.create(deployment(namespace, 'web', { envFrom: [{ configMapRef: { name: 'settings' } }] }));
    },
    converged: (server, namespace) => find(server, 'apps', 'deployments', namespace, 'web')?.spec.template.metadata.annotations?.['rollout.rxkube.dev/config-hash'] !== undefined,
    outside: (client, namespace) => client.patchMerge({ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', namespace }, { data: { level: 'debug' } }),
    refusal: (ns) => `configmaps "settings" is forbidden: User "system:serviceaccount:${ns}:configmap-rollout" cannot patch resource "configmaps" in API group "" in the namespace "${ns}"`,
  },
  {
    module: 'examples/leader-elected/replica.ts',
    namespace: 'elected',
    setup: createAutoscaled,
    converged: (server, namespace) => autoscalerScaled(server, namespace) && find(server, 'coordination.k8s.io', 'leases', namespace, 'podautoscaler-leader') !== undefined,
    // Its grant on Leases is for its own Lease only.
    outside: (client, _namespace) => client.patchMerge({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: 'podautoscaler-leader', namespace: 'default' }, { spec: { holderIdentity: 'me' } }),
    refusal: (ns) => `leases.coordination.k8s.io "podautoscaler-leader" is forbidden: User "system:serviceaccount:${ns}:podautoscaler" cannot patch resource "leases" in API group "coordination.k8s.io" in the namespace "default"`,
  },
  {
    module: 'examples/gitsync/controller.ts',
    namespace: 'gitops',
    setup: async (admin, namespace) => {
      const dir = await mkdtemp(join(tmpdir(), 'rxkube-rbac-gitsync-'));
      temporary.push(dir);
      const repo = await initWorkTree(join(dir, 'repo'));
      await repo.commit(
        {
          'deploy/config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: web-config }\ndata: { greeting: hello }\n',
          'deploy/web.yaml': 'apiVersion: v1\nkind: Service\nmetadata: { name: web }\nspec: { selector: { app: web }, ports: [{ port: 80 }] }\n',
        },
        'the manifests',
      );
      await admin.create({ apiVersion: 'gitsync.rxkube.dev/v1', kind: 'Application', metadata: { name: 'web', namespace }, spec: { repoURL: repo.dir, revision: 'main', path: 'deploy' } } as KubeObject);
    },
    converged: (server, namespace) =>
      find(server, 'gitsync.rxkube.dev', 'applications', namespace, 'web')?.status?.sync?.status === 'Synced' && find(server, '', 'configmaps', namespace, 'web-config')?.data?.greeting === 'hello' && find(server, '', 'services', namespace, 'web') !== undefined,
    // It applies ConfigMaps, Services and Deployments, not Secrets.
    outside: (client, namespace) => client.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sneaky', namespace }, stringData: { token: 'x' } } as KubeObject),
    refusal: (ns) => `secrets is forbidden: User "system:serviceaccount:${ns}:gitsync" cannot create resource "secrets" in API group "" in the namespace "${ns}"`,
  },
  {
    // A pipeline composed by hand, not by controller(): its definition declares what it lists, watches and writes.
    module: 'examples/mirror/controller.ts',
    namespace: 'mirrored',
    setup: async (admin, namespace) => {
      await admin.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace, labels: { mirror: 'true' } }, data: { level: 'info' } } as KubeObject);
    },
    converged: (server, namespace) => find(server, '', 'configmaps', namespace, 'settings-mirror')?.data?.level === 'info',
    // It applies ConfigMaps (a patch), never deletes one.
    outside: (client, namespace) => client.remove({ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', namespace }),
    refusal: (ns) => `configmaps "settings" is forbidden: User "system:serviceaccount:${ns}:mirror" cannot delete resource "configmaps" in API group "" in the namespace "${ns}"`,
  },
];

/** A logger that keeps the warnings and errors, so a test can say none was a refusal. */
function keepingLogger(lines: string[]): Logger {
  const keep = (obj: string | Record<string, unknown>, msg?: string): void => {
    lines.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
  };
  return { ...silentLogger, warn: keep, error: keep };
}

describe('each example as its ServiceAccount, with its generated RBAC and nothing more', function () {
  this.timeout(120_000);
  let server: ApiServer;
  let admin: KubeClient;
  const running: Subscription[] = [];
  const pipelines: RunningPipeline[] = [];

  before(async () => {
    server = await startApiServer({ rbac: true, logger: silentLogger });
    admin = kubeClient(server.kubeConfig(), { fieldManager: 'admin' });
  });
  afterEach(async () => {
    for (const s of running.splice(0)) s.unsubscribe();
    for (const p of pipelines.splice(0)) {
      p.stop(); // a graceful stop: no key starts, the runs in flight end, the pipeline completes
      await p.done;
    }
  });
  after(async () => {
    await server?.close();
    for (const dir of temporary.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  for (const example of examples) {
    it(`${example.module}: converges, and a write it did not declare is a 403 naming the missing permission`, async () => {
      const { namespace } = example;
      await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      const printed: string[] = [];
      const errors: string[] = [];
      expect(await runCli(['manifests', example.module, '--namespace', namespace], { out: (l) => printed.push(l), err: (l) => errors.push(l), untilStopped: () => new Promise(() => {}) }), errors.join('\n')).to.equal(0);
      const objects = parseAllDocuments(printed.join('\n')).map((d) => d.toJS() as KubeObject);
      for (const object of objects) {
        if (object.kind === 'CustomResourceDefinition') await installCrd(admin, object, { interval: 50 });
        else await admin.apply(object, { force: true });
      }
      await example.setup(admin, namespace);

      const asServiceAccount = server.kubeConfigFor({ serviceAccount: `${namespace}/${objects.find((o) => o.kind === 'ServiceAccount')?.metadata.name ?? ''}` });
      const defined = define(await loadDefinition(example.module), asServiceAccount, namespace);
      const logged: string[] = [];
      if (isPipeline(defined)) {
        const { name, pipeline } = defined;
        pipelines.push(await runPipeline({ name, pipeline, kubeConfig: asServiceAccount, logger: keepingLogger(logged), health: false, handleSignals: false, gracePeriod: 5_000 }));
      } else running.push(controller({ ...defined, logger: keepingLogger(logged) }).subscribe());
      await waitFor(() => example.converged(server, namespace), `${example.module} to converge`, 60_000);
      const events = () => server.snapshot({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace }).filter((e) => (e as { reportingController?: string }).reportingController === defined.name);
      await waitFor(() => events().length > 0, `an Event of ${defined.name}`, 30_000);
      expect(logged.filter((l) => /forbidden|403/i.test(l)), 'refusals logged').to.deep.equal([]);

      const refused = await example.outside(kubeClient(asServiceAccount), namespace).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isForbidden(refused), `expected a 403, got ${String(refused)}`).to.equal(true);
      expect((refused as Error).message).to.contain(example.refusal(namespace));
    });
  }
});
