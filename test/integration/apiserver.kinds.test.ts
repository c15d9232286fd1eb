import { KubernetesObjectApi, PatchStrategy, Watch, type KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { eventually, json, raw, start } from './apiserver.helpers.js';

/**
 * Every built-in kind of issue 13's item 1, through client-node's generic object API: created,
 * read back with the fields it was given (none pruned as unknown), listed, watched, patched and
 * deleted; with `generation` where kube's strategy keeps one, and the status and scale
 * subresources where kube serves them. The list is written out here, not read from the server,
 * so a kind that stops being served fails.
 */

interface KindCase {
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  /** The object's body besides apiVersion, kind and metadata. */
  body: Record<string, unknown>;
  /** A path (dotted) into the body whose value must come back as given. */
  probe: string;
  generation?: boolean;
  status?: boolean;
  scale?: boolean;
}

const podSpec = { containers: [{ name: 'app', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] };
const template = { metadata: { labels: { app: 'k' } }, spec: podSpec };
const selector = { matchLabels: { app: 'k' } };
const rules = [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }];
const webhooks = [
  {
    name: 'check.example.com',
    clientConfig: { url: 'https://hooks.example.com/check' },
    rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
  },
];

const kinds: KindCase[] = [
  { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false, body: { spec: {} }, probe: 'spec.finalizers.0', status: true },
  { apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true, body: { spec: podSpec }, probe: 'spec.containers.0.image', status: true },
  { apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true, body: { spec: { selector: { app: 'k' }, ports: [{ port: 80, targetPort: 8080 }] } }, probe: 'spec.ports.0.targetPort', status: true },
  { apiVersion: 'v1', kind: 'Endpoints', plural: 'endpoints', namespaced: true, body: { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] }, probe: 'subsets.0.addresses.0.ip' },
  { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true, body: { data: { mode: 'fast' } }, probe: 'data.mode' },
  { apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true, body: { type: 'Opaque', data: { key: 'czNjcmV0' } }, probe: 'data.key' },
  { apiVersion: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true, body: { automountServiceAccountToken: false }, probe: 'automountServiceAccountToken' },
  {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    plural: 'persistentvolumeclaims',
    namespaced: true,
    body: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    probe: 'spec.resources.requests.storage',
    status: true,
  },
  {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    plural: 'persistentvolumes',
    namespaced: false,
    body: { spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' } } },
    probe: 'spec.hostPath.path',
    status: true,
  },
  { apiVersion: 'v1', kind: 'Node', plural: 'nodes', namespaced: false, body: { spec: { podCIDR: '10.244.0.0/24' } }, probe: 'spec.podCIDR', status: true },
  {
    apiVersion: 'v1',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    body: { involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'Started', message: 'started', type: 'Normal' },
    probe: 'involvedObject.name',
  },
  { apiVersion: 'v1', kind: 'LimitRange', plural: 'limitranges', namespaced: true, body: { spec: { limits: [{ type: 'Container', max: { cpu: '2' } }] } }, probe: 'spec.limits.0.max.cpu' },
  { apiVersion: 'v1', kind: 'ResourceQuota', plural: 'resourcequotas', namespaced: true, body: { spec: { hard: { pods: '10' } } }, probe: 'spec.hard.pods', status: true },
  { apiVersion: 'apps/v1', kind: 'Deployment', plural: 'deployments', namespaced: true, body: { spec: { replicas: 2, selector, template } }, probe: 'spec.template.spec.containers.0.ports.0.containerPort', generation: true, status: true, scale: true },
  { apiVersion: 'apps/v1', kind: 'StatefulSet', plural: 'statefulsets', namespaced: true, body: { spec: { replicas: 2, serviceName: 'k', selector, template } }, probe: 'spec.serviceName', generation: true, status: true, scale: true },
  { apiVersion: 'apps/v1', kind: 'DaemonSet', plural: 'daemonsets', namespaced: true, body: { spec: { selector, template } }, probe: 'spec.template.metadata.labels.app', generation: true, status: true },
  { apiVersion: 'apps/v1', kind: 'ReplicaSet', plural: 'replicasets', namespaced: true, body: { spec: { replicas: 2, selector, template } }, probe: 'spec.replicas', generation: true, status: true, scale: true },
  { apiVersion: 'apps/v1', kind: 'ControllerRevision', plural: 'controllerrevisions', namespaced: true, body: { revision: 3, data: { spec: { template } } }, probe: 'revision' },
  { apiVersion: 'batch/v1', kind: 'Job', plural: 'jobs', namespaced: true, body: { spec: { backoffLimit: 2, template: { spec: { ...podSpec, restartPolicy: 'Never' } } } }, probe: 'spec.backoffLimit', generation: true, status: true },
  {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    plural: 'cronjobs',
    namespaced: true,
    body: { spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { ...podSpec, restartPolicy: 'OnFailure' } } } } } },
    probe: 'spec.schedule',
    generation: true,
    status: true,
  },
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    plural: 'ingresses',
    namespaced: true,
    body: { spec: { rules: [{ host: 'example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'k', port: { number: 80 } } } }] } }] } },
    probe: 'spec.rules.0.http.paths.0.backend.service.port.number',
    generation: true,
    status: true,
  },
  { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', plural: 'networkpolicies', namespaced: true, body: { spec: { podSelector: selector, policyTypes: ['Ingress'] } }, probe: 'spec.policyTypes.0', generation: true },
  { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', plural: 'ingressclasses', namespaced: false, body: { spec: { controller: 'example.com/ingress' } }, probe: 'spec.controller', generation: true },
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', namespaced: true, body: { spec: { minAvailable: 1, selector } }, probe: 'spec.minAvailable', generation: true, status: true },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', plural: 'roles', namespaced: true, body: { rules }, probe: 'rules.0.verbs.1' },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    plural: 'rolebindings',
    namespaced: true,
    body: { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' }, subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'default' }] },
    probe: 'subjects.0.name',
  },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false, body: { rules }, probe: 'rules.0.resources.0' },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    plural: 'clusterrolebindings',
    namespaced: false,
    body: { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'r' }, subjects: [{ kind: 'User', name: 'bob', apiGroup: 'rbac.authorization.k8s.io' }] },
    probe: 'roleRef.kind',
  },
  { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', plural: 'leases', namespaced: true, body: { spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } }, probe: 'spec.holderIdentity' },
  {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    body: { eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'c', reportingInstance: 'c-1', action: 'Scale', reason: 'Scaled', regarding: { kind: 'Deployment', name: 'd' }, type: 'Normal' },
    probe: 'reportingController',
  },
  { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', plural: 'mutatingwebhookconfigurations', namespaced: false, body: { webhooks }, probe: 'webhooks.0.clientConfig.url', generation: true },
  { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', plural: 'validatingwebhookconfigurations', namespaced: false, body: { webhooks }, probe: 'webhooks.0.name', generation: true },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    plural: 'validatingadmissionpolicies',
    namespaced: false,
    body: { spec: { validations: [{ expression: 'object.spec.replicas <= 5' }], matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] } } },
    probe: 'spec.validations.0.expression',
    generation: true,
    status: true,
  },
  {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
    body: {
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'things', singular: 'thing', kind: 'Thing' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    },
    probe: 'spec.names.kind',
    generation: true,
    status: true,
  },
  {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    namespaced: true,
    body: { addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }], ports: [{ port: 80, protocol: 'TCP' }] },
    probe: 'endpoints.0.addresses.0',
    generation: true,
  },
  { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', plural: 'storageclasses', namespaced: false, body: { provisioner: 'example.com/disk', reclaimPolicy: 'Retain' }, probe: 'reclaimPolicy' },
];

function at(object: unknown, path: string): unknown {
  let current = object;
  for (const part of path.split('.')) current = (current as Record<string, unknown> | undefined)?.[part];
  return current;
}

function nameOf(c: KindCase): string {
  return c.kind === 'CustomResourceDefinition' ? 'things.example.com' : `k-${c.kind.toLowerCase()}`;
}

function collectionPath(c: KindCase): string {
  const [group, version] = c.apiVersion.includes('/') ? c.apiVersion.split('/') : ['', c.apiVersion];
  const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  return `${base}${c.namespaced ? '/namespaces/default' : ''}/${c.plural}`;
}

describe('embedded API server: every built-in kind controllers use', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let objects: KubernetesObjectApi;
  const watches: AbortController[] = [];

  before(async () => {
    server = await start();
    objects = KubernetesObjectApi.makeApiClient(server.kubeConfig());
  });
  after(async () => {
    for (const w of watches) w.abort();
    await server.close();
  });

  for (const c of kinds) {
    it(`${c.apiVersion} ${c.kind}: create, read, list, watch, patch, delete${c.generation ? ', generation' : ''}${c.status ? ', status' : ''}${c.scale ? ', scale' : ''}`, async () => {
      const name = nameOf(c);
      const metadata = { name, ...(c.namespaced ? { namespace: 'default' } : {}), labels: { app: 'k' } };
      const spec = { apiVersion: c.apiVersion, kind: c.kind, metadata, ...c.body } as KubernetesObject;

      const created = await objects.create(spec);
      expect(created.metadata?.uid).to.be.a('string');
      expect(at(created, c.probe), `${c.probe} kept`).to.deep.equal(c.kind === 'Namespace' ? 'kubernetes' : at(spec, c.probe));
      expect(created.metadata?.generation, 'generation').to.equal(c.generation === true ? 1 : undefined);

      const read = await objects.read({ apiVersion: c.apiVersion, kind: c.kind, metadata: { name, namespace: metadata.namespace } });
      // (A CRD's status is set by the server's CRD controller right after the create.)
      expect(read.metadata?.uid).to.equal(created.metadata?.uid);
      expect(at(read, c.probe)).to.deep.equal(at(created, c.probe));

      const listed = await objects.list(c.apiVersion, c.kind, metadata.namespace);
      expect(listed.items.map((o) => o.metadata?.name)).to.include(name);

      const seen: { type: string; object: KubernetesObject }[] = [];
      watches.push(
        await new Watch(server.kubeConfig()).watch(
          collectionPath(c),
          { resourceVersion: listed.metadata?.resourceVersion ?? '', fieldSelector: `metadata.name=${name}` },
          (type, object: KubernetesObject) => seen.push({ type, object }),
          () => {},
        ),
      );

      const labelPatch: KubernetesObject = { apiVersion: c.apiVersion, kind: c.kind, metadata: { name, namespace: metadata.namespace, labels: { patched: 'yes' } } };
      const patched = await objects.patch(labelPatch, undefined, undefined, undefined, undefined, PatchStrategy.MergePatch);
      // A Namespace carries the label SetDefaults_Namespace gives it.
      const defaulted = c.kind === 'Namespace' ? { 'kubernetes.io/metadata.name': name } : {};
      expect(patched.metadata?.labels).to.deep.equal({ app: 'k', patched: 'yes', ...defaulted });
      expect(patched.metadata?.generation, 'a label patch leaves generation').to.equal(created.metadata?.generation);
      await eventually(() => seen.some((e) => e.type === 'MODIFIED' && e.object.metadata?.labels?.patched === 'yes'), 5000, `MODIFIED of ${c.kind}`);

      if (c.status) {
        const res = await json(server, 'PATCH', `${collectionPath(c)}/${name}/status`, { metadata: { annotations: { 'status-touched': 'yes' } } }, 'application/merge-patch+json');
        expect(res.status, res.text).to.equal(200);
        // Through /status only the status changes: the annotation does not stick.
        expect((res.json().metadata as { annotations?: Record<string, string> }).annotations?.['status-touched']).to.equal(undefined);
      } else {
        expect((await raw(server, 'GET', `${collectionPath(c)}/${name}/status`)).status).to.equal(404);
      }
      if (c.scale) {
        const scale = (await raw(server, 'GET', `${collectionPath(c)}/${name}/scale`)).json() as { kind: string; spec: { replicas: number } };
        expect(scale).to.deep.include({ kind: 'Scale', spec: { replicas: 2 } });
      }

      await objects.delete({ apiVersion: c.apiVersion, kind: c.kind, metadata: { name, namespace: metadata.namespace } });
      await eventually(() => seen.some((e) => e.type === 'DELETED'), 10_000, `DELETED of ${c.kind}`);
    });
  }

  it('bumps generation on a spec change of the kinds that keep one, and only those', async () => {
    for (const c of kinds.filter((k) => k.kind === 'Deployment' || k.kind === 'ConfigMap' || k.kind === 'NetworkPolicy')) {
      const name = `${nameOf(c)}-gen`;
      const metadata = { name, namespace: 'default' };
      await objects.create({ apiVersion: c.apiVersion, kind: c.kind, metadata, ...c.body } as KubernetesObject);
      const change = c.kind === 'ConfigMap' ? { data: { mode: 'slow' } } : c.kind === 'Deployment' ? { spec: { replicas: 3 } } : { spec: { policyTypes: ['Egress'] } };
      const patched = await objects.patch({ apiVersion: c.apiVersion, kind: c.kind, metadata, ...change } as KubernetesObject, undefined, undefined, undefined, undefined, PatchStrategy.MergePatch);
      expect(patched.metadata?.generation, c.kind).to.equal(c.generation ? 2 : undefined);
    }
  });
});
