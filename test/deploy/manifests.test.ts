import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { controller } from 'rxkube';
import type { DefinedController } from '../../src/deploy/definition.js';
import { controllerManifests } from '../../src/deploy/manifests.js';
import { Database, expectedDatabaseCrd } from '../customResources/database.fixture.js';

const widgets = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' };
const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' }, spec: { group: 'example.com', names: { plural: 'widgets', kind: 'Widget' }, scope: 'Namespaced', versions: [] } };
const kubeConfig = new KubeConfig();
const defined = (extra: Partial<DefinedController> = {}): DefinedController => ({ name: 'widgets', kubeConfig, for: { ...widgets, namespace: 'apps' }, reconcile: () => undefined, ...extra });

type Loose = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const byKind = (objects: object[], kind: string): Loose[] => (objects as Loose[]).filter((o) => o.kind === kind);

describe('controllerManifests: the objects that deploy a controller definition', () => {
  it('runs the Deployment as its ServiceAccount, probes /healthz and /readyz on the health port, and outlasts the controller\'s grace period', () => {
    const objects = controllerManifests(defined({ gracePeriod: 45_000, health: { port: 9090 } }), { namespace: 'apps', image: 'example.com/widgets:1' });
    expect(objects.map((o) => o.kind)).to.deep.equal(['ServiceAccount', 'Role', 'RoleBinding', 'Service', 'Deployment']);
    const [deployment] = byKind(objects, 'Deployment');
    const pod = deployment?.spec.template.spec;
    expect(pod.serviceAccountName).to.equal('widgets');
    expect(pod.terminationGracePeriodSeconds).to.be.greaterThan(45);
    const [container] = pod.containers;
    expect(container.image).to.equal('example.com/widgets:1');
    expect(container.ports).to.deep.equal([{ name: 'health', containerPort: 9090 }]);
    expect(container.livenessProbe.httpGet).to.deep.equal({ path: '/healthz', port: 'health' });
    expect(container.readinessProbe.httpGet).to.deep.equal({ path: '/readyz', port: 'health' });
    expect(container.resources.requests).to.have.keys('cpu', 'memory');
    expect(container.env.map((e: Loose) => e.name)).to.deep.equal(['POD_NAMESPACE', 'POD_NAME']);
    expect(pod.securityContext.runAsNonRoot).to.equal(true);
    // The root filesystem is read-only; /tmp alone is writable, an emptyDir.
    expect(pod.containers[0].securityContext.readOnlyRootFilesystem).to.equal(true);
    expect(pod.containers[0].volumeMounts).to.deep.equal([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(pod.volumes).to.deep.equal([{ name: 'tmp', emptyDir: {} }]);
    const [service] = byKind(objects, 'Service');
    expect(service?.metadata.annotations).to.deep.equal({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090', 'prometheus.io/path': '/metrics' });
    expect(service?.spec.selector).to.deep.equal(deployment?.spec.selector.matchLabels);
    expect(byKind(objects, 'RoleBinding')[0]?.subjects).to.deep.equal([{ kind: 'ServiceAccount', name: 'widgets', namespace: 'apps' }]);
  });

  it('binds a ClusterRole named after the namespace when the controller watches every namespace', () => {
    const objects = controllerManifests(defined({ for: widgets }), { namespace: 'apps', image: 'w' });
    const [role] = byKind(objects, 'ClusterRole');
    const [binding] = byKind(objects, 'ClusterRoleBinding');
    expect(role?.metadata.name).to.equal('apps-widgets');
    expect(binding?.roleRef).to.deep.equal({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'apps-widgets' });
    expect(byKind(objects, 'Role')).to.deep.equal([]);
  });

  it('with webhooks: configurations with the caBundle pointing at the Service, the CRD converting through it, the certificate Secret mounted at the certificate directory', () => {
    const webhooks = { tls: { certDir: '/certs' }, validate: () => ({ allowed: true }), default: () => undefined, convert: { hub: 'v1', spokes: {} } } as unknown as DefinedController['webhooks'];
    const objects = controllerManifests(defined({ webhooks, crds: [crd] }), { namespace: 'apps', image: 'w', webhookCertificate: { caBundle: 'Q0E=', cert: 'C', key: 'K' } });
    expect(objects.map((o) => o.kind)).to.deep.equal(['CustomResourceDefinition', 'ServiceAccount', 'Role', 'RoleBinding', 'Secret', 'Service', 'Deployment', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
    const [validating] = byKind(objects, 'ValidatingWebhookConfiguration');
    expect(validating?.webhooks[0].clientConfig).to.deep.equal({ service: { name: 'widgets', namespace: 'apps', path: '/validate-example-com-v1-widget', port: 443 }, caBundle: 'Q0E=' });
    expect(validating?.webhooks[0].rules).to.deep.equal([{ operations: ['CREATE', 'UPDATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }]);
    expect(byKind(objects, 'MutatingWebhookConfiguration')[0]?.webhooks[0].clientConfig.service.path).to.equal('/mutate-example-com-v1-widget');
    expect(byKind(objects, 'CustomResourceDefinition')[0]?.spec.conversion.webhook.clientConfig).to.deep.equal({ service: { name: 'widgets', namespace: 'apps', path: '/convert', port: 443 }, caBundle: 'Q0E=' });
    expect(crd.spec).not.to.have.property('conversion');
    const pod = byKind(objects, 'Deployment')[0]?.spec.template.spec;
    expect(pod.containers[0].volumeMounts).to.deep.equal([
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'webhook-certs', mountPath: '/certs', readOnly: true },
    ]);
    expect(pod.volumes).to.deep.equal([
      { name: 'tmp', emptyDir: {} },
      { name: 'webhook-certs', secret: { secretName: 'widgets-webhook-tls' } },
    ]);
    expect(byKind(objects, 'Secret')[0]?.stringData).to.deep.equal({ 'tls.crt': 'C', 'tls.key': 'K' });
  });

  it('takes a defined custom resource in crds: its CRD, converting through the conversion webhook when the controller has one', () => {
    const dbs = { ...Database.resource, namespace: 'apps' };
    expect(controllerManifests(defined({ for: dbs, crds: [Database] }), { namespace: 'apps', image: 'w' })[0]).to.deep.equal(expectedDatabaseCrd);
    const webhooks = { tls: { certDir: '/certs' }, convert: { hub: 'v1', spokes: {} } } as unknown as DefinedController['webhooks'];
    const [converted] = controllerManifests(defined({ for: dbs, webhooks, crds: [Database] }), { namespace: 'apps', image: 'w', webhookCertificate: { caBundle: 'Q0E=' } });
    expect(converted).to.deep.equal(Database.crdConvertedBy({ service: { name: 'widgets', namespace: 'apps', path: '/convert', port: 443 }, caBundle: 'Q0E=' }));
  });

  it('prints no Secret when another writes the certificate (only its CA given), and refuses webhooks without a CA', () => {
    const webhooks = { tls: { certDir: '/certs' }, validate: () => ({ allowed: true }) } as unknown as DefinedController['webhooks'];
    expect(byKind(controllerManifests(defined({ webhooks }), { namespace: 'apps', image: 'w', webhookCertificate: { caBundle: 'Q0E=' } }), 'Secret')).to.deep.equal([]);
    expect(() => controllerManifests(defined({ webhooks }), { namespace: 'apps', image: 'w' })).to.throw(TypeError, '"widgets" has webhooks: its manifests need their CA');
  });
});

describe('controller({ permissions })', () => {
  it('refuses a wildcard at once, naming the controller', () => {
    expect(() => controller({ name: 'w', kubeConfig, for: widgets, reconcile: () => undefined, permissions: [{ resource: 'widgets', verbs: ['*' as 'get'] }] })).to.throw(TypeError, 'controller "w": permissions[0].verbs: "*" is not one of');
  });
});
