import type { ControllerWebhooks } from '../controller/controllerWebhooks.js';
import type { KubeObject } from '../types.js';
import { webhookPaths } from '../sinks/webhooks/webhookPaths.js';
import { crdObjects, define, isPipeline, placeholderKubeConfig, type ControllerDefinition, type DefinedController, type DefinedPipeline } from './definition.js';
import { controllerRbac, type ScopedRules } from './rbacRules.js';

/**
 * The objects that deploy a controller definition to a cluster: its
 * CustomResourceDefinitions, a ServiceAccount, the Roles or ClusterRole
 * `controllerRbac` derives and their bindings, a Service (with the
 * scrape annotations Prometheus' kubernetes_sd configurations read, no
 * ServiceMonitor needed), the Deployment, and, when it has webhooks, their
 * configurations and serving certificate. Pure: the same input gives the
 * same objects, in the order `kubectl apply` needs them.
 */

/** Where and how the controller is deployed. */
export interface ManifestOptions {
  /** The namespace of the Deployment, ServiceAccount, Service and bindings. */
  namespace: string;
  /** The container image (built from the Dockerfile). */
  image: string;
  /** Default 1; more wants `leaderElection` (or sharding). */
  replicas?: number;
  /** Container resources (defaults: requests 100m CPU and 128Mi, limit 256Mi memory). */
  resources?: { requests: Record<string, string>; limits: Record<string, string> };
  /**
   * The webhooks' CA (`caBundle`, base64 PEM) and, unless something else
   * writes it (cert-manager), the serving certificate for the Secret the
   * pod mounts.
   */
  webhookCertificate?: { caBundle: string; cert?: string; key?: string };
}

const rbacApi = 'rbac.authorization.k8s.io';
const defaultCertDir = '/tmp/k8s-webhook-server/serving-certs';

function labelsOf(name: string): Record<string, string> {
  return { 'app.kubernetes.io/name': name, 'app.kubernetes.io/managed-by': 'rxkube' };
}

/** The serving certificate Secret's name, for a definition named `name`. */
export const webhookSecretName = (name: string): string => `${name}-webhook-tls`;

/** The DNS names the webhook Service answers to, for the serving certificate. */
export const webhookDnsNames = (name: string, namespace: string): string[] => [`${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`];

function rbacObjects(name: string, namespace: string, scopes: ScopedRules[]): KubeObject[] {
  const subject = { kind: 'ServiceAccount', name, namespace };
  return scopes.flatMap(({ namespace: scope, rules }) => {
    if (scope === undefined) {
      const roleName = `${namespace}-${name}`;
      return [
        { apiVersion: `${rbacApi}/v1`, kind: 'ClusterRole', metadata: { name: roleName, labels: labelsOf(name) }, rules },
        { apiVersion: `${rbacApi}/v1`, kind: 'ClusterRoleBinding', metadata: { name: roleName, labels: labelsOf(name) }, roleRef: { apiGroup: rbacApi, kind: 'ClusterRole', name: roleName }, subjects: [subject] },
      ];
    }
    return [
      { apiVersion: `${rbacApi}/v1`, kind: 'Role', metadata: { name, namespace: scope, labels: labelsOf(name) }, rules },
      { apiVersion: `${rbacApi}/v1`, kind: 'RoleBinding', metadata: { name, namespace: scope, labels: labelsOf(name) }, roleRef: { apiGroup: rbacApi, kind: 'Role', name }, subjects: [subject] },
    ];
  });
}

/** What the Deployment and Service read of either kind of definition. */
type Deployed = Pick<DefinedController, 'name' | 'health' | 'gracePeriod' | 'webhooks'>;

/** A pipeline's definition as the builder's fields the manifests read: it serves no webhooks. */
function deployedOf(defined: DefinedController | DefinedPipeline): Deployed {
  return isPipeline(defined) ? { name: defined.name, health: defined.health, gracePeriod: defined.gracePeriod } : defined;
}

function ports(defined: Deployed): { health: number; webhooks: number | undefined } {
  const health = defined.health === false ? undefined : defined.health?.port;
  return { health: health ?? 8080, webhooks: defined.webhooks === undefined ? undefined : (defined.webhooks.port ?? 9443) };
}

function certDirOf(webhooks: ControllerWebhooks<KubeObject>): string {
  return 'certDir' in webhooks.tls ? webhooks.tls.certDir : defaultCertDir;
}

function deployment(defined: Deployed, options: ManifestOptions): KubeObject {
  const { name } = defined;
  const port = ports(defined);
  const graceSeconds = Math.ceil((defined.gracePeriod ?? 30_000) / 1000);
  const fieldEnv = (envName: string, fieldPath: string) => ({ name: envName, valueFrom: { fieldRef: { fieldPath } } });
  const probe = (path: string, period: number) => ({ httpGet: { path, port: 'health' }, periodSeconds: period, failureThreshold: 3 });
  const container: Record<string, unknown> = {
    name: 'controller',
    image: options.image,
    env: [fieldEnv('POD_NAMESPACE', 'metadata.namespace'), fieldEnv('POD_NAME', 'metadata.name')],
    ports: [{ name: 'health', containerPort: port.health }, ...(port.webhooks !== undefined ? [{ name: 'webhooks', containerPort: port.webhooks }] : [])],
    livenessProbe: { ...probe('/healthz', 20), initialDelaySeconds: 5 },
    readinessProbe: probe('/readyz', 10),
    resources: options.resources ?? { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
  };
  // The root filesystem is read-only, so /tmp is where a controller may write: a clone cache (gitsync), a recording, a spool.
  const volumeMounts: unknown[] = [{ name: 'tmp', mountPath: '/tmp' }];
  const volumes: unknown[] = [{ name: 'tmp', emptyDir: {} }];
  if (defined.webhooks !== undefined) {
    volumeMounts.push({ name: 'webhook-certs', mountPath: certDirOf(defined.webhooks), readOnly: true });
    volumes.push({ name: 'webhook-certs', secret: { secretName: webhookSecretName(name) } });
  }
  container.volumeMounts = volumeMounts;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: options.namespace, labels: labelsOf(name) },
    spec: {
      replicas: options.replicas ?? 1,
      selector: { matchLabels: labelsOf(name) },
      template: {
        metadata: { labels: labelsOf(name) },
        spec: {
          serviceAccountName: name,
          // Longer than the controller's own grace period: in-flight reconciles finish, then the Lease is released, before the kubelet's SIGKILL.
          terminationGracePeriodSeconds: graceSeconds + 15,
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [container],
          volumes,
        },
      },
    },
  } as KubeObject;
}

function service(defined: Deployed, namespace: string): KubeObject {
  const port = ports(defined);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: defined.name,
      namespace,
      labels: labelsOf(defined.name),
      annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(port.health), 'prometheus.io/path': '/metrics' },
    },
    spec: {
      selector: labelsOf(defined.name),
      ports: [
        { name: 'health', port: port.health, targetPort: 'health' },
        ...(port.webhooks !== undefined ? [{ name: 'webhooks', port: 443, targetPort: 'webhooks' }] : []),
      ],
    },
  } as KubeObject;
}

function webhookConfigurations(defined: DefinedController, namespace: string, caBundle: string): KubeObject[] {
  const hooks = defined.webhooks as ControllerWebhooks<KubeObject>;
  const primary = defined.for;
  const paths = webhookPaths(primary);
  const group = primary.group ?? '';
  const hook = (name: string, path: string) => ({
    name: `${name}.${primary.resource}.${group === '' ? 'core' : group}`,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    timeoutSeconds: 10,
    clientConfig: { service: { name: defined.name, namespace, path, port: 443 }, caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [group], apiVersions: [primary.version], resources: [primary.resource] }],
  });
  const out: KubeObject[] = [];
  const meta = { name: `${namespace}-${defined.name}`, labels: labelsOf(defined.name) };
  if (hooks.default !== undefined) out.push({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: meta, webhooks: [hook('default', paths.default)] } as KubeObject);
  if (hooks.validate !== undefined) out.push({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: meta, webhooks: [hook('validate', paths.validate)] } as KubeObject);
  return out;
}

/** The CRDs, the one of the primary kind set to convert through the controller's conversion webhook when it has one. */
function crdsOf(defined: DefinedController | DefinedPipeline, namespace: string, caBundle: string | undefined): KubeObject[] {
  if (isPipeline(defined)) return crdObjects(defined.crds);
  const primary = defined.for;
  return crdObjects(defined.crds).map((crd) => {
    const spec = (crd as { spec?: { group?: string; names?: { plural?: string } } }).spec;
    const converts = defined.webhooks?.convert !== undefined && spec?.group === (primary.group ?? '') && spec?.names?.plural === primary.resource;
    if (!converts || caBundle === undefined) return crd;
    const clientConfig = { service: { name: defined.name, namespace, path: webhookPaths(primary).convert, port: 443 }, caBundle };
    return { ...crd, spec: { ...spec, conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig } } } } as KubeObject;
  });
}

/** Every object that deploys `defined` (a builder controller or a hand-composed pipeline), in the order to apply them. */
export function controllerManifests(defined: DefinedController | DefinedPipeline, options: ManifestOptions): KubeObject[] {
  const { name } = defined;
  const { namespace } = options;
  const deployed = deployedOf(defined);
  if (deployed.webhooks !== undefined && options.webhookCertificate === undefined) throw new TypeError(`"${name}" has webhooks: its manifests need their CA (webhookCertificate)`);
  const cert = options.webhookCertificate;
  const secret: KubeObject[] =
    deployed.webhooks !== undefined && cert?.cert !== undefined && cert.key !== undefined
      ? [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: webhookSecretName(name), namespace, labels: labelsOf(name) }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': cert.cert, 'tls.key': cert.key } } as KubeObject]
      : [];
  // A pipeline's informers are, to RBAC, what a builder's owned kinds are: listed and watched.
  const rbac = isPipeline(defined) ? controllerRbac({ name, for: defined.for, owns: [...(defined.informers ?? [])], permissions: defined.permissions }) : controllerRbac(defined);
  return [
    ...crdsOf(defined, namespace, cert?.caBundle),
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace, labels: labelsOf(name) } },
    ...rbacObjects(name, namespace, rbac),
    ...secret,
    service(deployed, namespace),
    deployment(deployed, options),
    ...(!isPipeline(defined) && defined.webhooks !== undefined && cert !== undefined ? webhookConfigurations(defined, namespace, cert.caBundle) : []),
  ];
}

/**
 * The manifests of a controller definition (what a controller module
 * exports for `rxkube manifests`), as objects: the API the command calls.
 * The definition is called with a kubeconfig that reaches nothing, since
 * only its options are read. A definition with webhooks needs
 * `options.webhookCertificate`.
 */
export function manifests<T extends KubeObject>(definition: ControllerDefinition<T>, options: ManifestOptions): KubeObject[] {
  return controllerManifests(define(definition, placeholderKubeConfig(), options.namespace), options);
}
