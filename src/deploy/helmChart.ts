import { stringify } from 'yaml';
import type { KubeObject } from '../types.js';
import { isPipeline, type DefinedController, type DefinedPipeline } from './definition.js';
import { controllerManifests, type ManifestOptions } from './manifests.js';

/**
 * `rxkube manifests --helm`: the objects `rxkube manifests` prints, as a
 * Helm chart whose default values render them unchanged (`helm template
 * --include-crds`), with values for what differs between installs: the
 * image, replicas, resources, the Prometheus scrape annotations, leader
 * election, the webhooks' certificates, and the namespace (the release's).
 *
 * The templates use a small part of Helm's language on purpose, so that a
 * test renders them exactly without Helm: `{{ .Values.<path> | toJson }}`
 * (JSON is YAML, so any value lands as the very value, typed as given),
 * `{{ .Release.Namespace }}`, and `{{- if .Values.<path> }}`,
 * `{{- if not .Values.<path> }}`, `{{- else }}`, `{{- end }}` around whole
 * fields or documents. Everything else is the plain manifests' YAML.
 */

/**
 * The namespace a definition is called with while its chart is made: every
 * occurrence of it in the objects becomes `{{ .Release.Namespace }}`. A
 * valid namespace name, so that definitions which check theirs accept it.
 */
export const releaseNamespace = 'rxkube-release-namespace';

/** Set to `false` on the controller's container, it runs without the leader election of its definition (see `rxkube run`). */
export const leaderElectionVariable = 'RXKUBE_LEADER_ELECTION';

/** One file of the chart: its path below the chart's folder, its text, and whether only its owner may read it (values holding a private key). */
export interface ChartFile {
  path: string;
  text: string;
  private: boolean;
}

/** A value the templates read: its path below `.Values`, and what it is by default. */
interface ValueSlot {
  path: string;
  value: unknown;
}

/** Marks in the objects, replaced in their YAML by template actions. */
class Marks {
  readonly slots: ValueSlot[] = [];
  /** Fields present or absent by a value, which is `true` by default: the default renders the plain manifests. */
  readonly conditions: { path: string; negate: boolean; value: unknown }[] = [];

  /** A value read from `.Values.<path>`. */
  value(path: string, value: unknown): string {
    this.slots.push({ path, value });
    return `__rxkube_value_${this.slots.length - 1}__`;
  }

  /** A field present only while `.Values.<path>` is true (or false, with `negate`). */
  when(path: string, value: unknown, negate = false): string {
    this.conditions.push({ path, negate, value });
    return `__rxkube_when_${this.conditions.length - 1}__`;
  }

  /** The YAML of `object` with its marks and the release namespace turned into template actions. */
  template(object: KubeObject): string {
    return stringify(object, { aliasDuplicateObjects: false, lineWidth: 0 })
      .replace(/^( *)(- |[^\s:-][^\s:]*: )__rxkube_when_(\d+)__$/gm, (_all, indent: string, lead: string, n: string) => {
        const { path, negate, value } = this.conditions[Number(n)] as { path: string; negate: boolean; value: unknown };
        // A whole field, or a whole list item, between an if and an end at its indent.
        return `${indent}{{- if ${negate ? 'not ' : ''}.Values.${path} }}\n${indent}${lead}${JSON.stringify(value)}\n${indent}{{- end }}`;
      })
      .replace(/(["']?)__rxkube_value_(\d+)__\1/g, (_all, _quote, n: string) => `{{ .Values.${(this.slots[Number(n)] as ValueSlot).path} | toJson }}`)
      .replaceAll(releaseNamespace, '{{ .Release.Namespace }}');
  }
}

type Container = { image?: unknown; resources?: unknown; env?: unknown[] };
type Hook = { clientConfig?: { caBundle?: unknown } };

/** Marks the fields of one object that values set. */
function markFields(object: Record<string, unknown> & KubeObject, marks: Marks, leaderElectionEnv: boolean): void {
  const spec = object.spec as Record<string, unknown> | undefined;
  switch (object.kind) {
    case 'Deployment': {
      spec!.replicas = marks.value('replicas', spec!.replicas);
      const container = (((spec!.template as { spec: { containers: Container[] } }).spec.containers)[0]) as Container;
      container.image = marks.value('image', container.image);
      container.resources = marks.value('resources', container.resources);
      // With leader election in the code, the value can turn it off (one replica, no Lease writes): `rxkube run` reads this variable.
      if (leaderElectionEnv) container.env = [...(container.env ?? []), marks.when('leaderElection.enabled', { name: leaderElectionVariable, value: 'false' }, true)];
      return;
    }
    case 'Service':
      if (object.metadata.annotations !== undefined) (object.metadata as Record<string, unknown>).annotations = marks.when('metrics.scrape', object.metadata.annotations);
      return;
    case 'Secret': {
      const data = object.stringData as Record<string, string>;
      data['tls.crt'] = marks.value('webhook.cert', data['tls.crt']);
      data['tls.key'] = marks.value('webhook.key', data['tls.key']);
      return;
    }
    case 'MutatingWebhookConfiguration':
    case 'ValidatingWebhookConfiguration':
      for (const hook of object.webhooks as Hook[]) hook.clientConfig!.caBundle = marks.value('webhook.caBundle', hook.clientConfig!.caBundle);
      return;
    case 'CustomResourceDefinition': {
      const clientConfig = (spec?.conversion as { webhook?: Hook } | undefined)?.webhook?.clientConfig;
      if (clientConfig !== undefined) clientConfig.caBundle = marks.value('webhook.caBundle', clientConfig.caBundle);
      return;
    }
  }
}

/** The default values, each with the comment values.yaml gives it. */
function valuesFile(marks: Marks): string {
  const comments: Record<string, string> = {
    image: 'The container image (built from the Dockerfile).',
    replicas: 'Replicas of the Deployment; more than one wants leader election (or sharding) in the definition.',
    resources: 'The container\'s requests and limits.',
    'metrics.scrape': 'The Service\'s prometheus.io/scrape, /port and /path annotations, which Prometheus\' Kubernetes service discovery reads.',
    'leaderElection.enabled': 'false runs the controller without the leader election its definition has (one replica only); the Lease grant stays.',
    'webhook.caBundle': 'The webhooks\' CA (base64 PEM) in the webhook configurations (and the CRD\'s conversion).',
    'webhook.cert': 'The serving certificate (PEM) for the Secret the pod mounts; empty when something else (cert-manager) writes that Secret.',
    'webhook.key': 'Its private key (PEM). This file holds it: keep it as a secret (mode 0600).',
  };
  const tree: Record<string, unknown> = {};
  const order: string[] = [];
  const known = Object.keys(comments);
  const slots = [...marks.slots, ...marks.conditions.map((c) => ({ path: c.path, value: true }))].sort((a, b) => known.indexOf(a.path) - known.indexOf(b.path));
  for (const { path, value } of slots) {
    if (order.includes(path)) continue;
    order.push(path);
    const [head, leaf] = path.split('.') as [string, string | undefined];
    if (leaf === undefined) tree[head] = value;
    else tree[head] = { ...(tree[head] as object | undefined), [leaf]: value };
  }
  return Object.entries(tree)
    .map(([key, value]) => {
      const notes = order.filter((p) => p === key || p.startsWith(`${key}.`)).map((p) => `# ${p}: ${comments[p] ?? ''}`);
      return `${notes.join('\n')}\n${stringify({ [key]: value }, { lineWidth: 0 })}`;
    })
    .join('\n');
}

/** A file name part from a kind and a name: lowercase letters, digits and dashes. */
function slug(text: string): string {
  return text.replaceAll(releaseNamespace, 'release').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

/**
 * The chart of a definition called with `releaseNamespace` as its
 * namespace: `Chart.yaml`, `values.yaml` (the options given as defaults),
 * the CRDs in `crds/` (Helm installs them first and never templates them),
 * and one template per other object in `templates/`, numbered in the order
 * `rxkube manifests` prints them. A CRD that converts through the
 * controller's webhook names its namespace and CA, so it is a template.
 */
export function helmChart(defined: DefinedController | DefinedPipeline, options: Omit<ManifestOptions, 'namespace'>): ChartFile[] {
  const objects = controllerManifests(defined, { ...options, namespace: releaseNamespace }) as (Record<string, unknown> & KubeObject)[];
  const marks = new Marks();
  const leaderElection = !isPipeline(defined) && defined.leaderElection !== undefined;
  const files: ChartFile[] = [];
  let n = 0;
  for (const object of objects) {
    markFields(object, marks, leaderElection);
    const text = marks.template(object);
    if (object.kind === 'CustomResourceDefinition' && !text.includes('{{')) {
      files.push({ path: `crds/${slug(object.metadata.name ?? 'crd')}.yaml`, text, private: false });
      continue;
    }
    const body = object.kind === 'Secret' ? `{{- if .Values.webhook.cert }}\n${text}{{- end }}\n` : text;
    files.push({ path: `templates/${String(++n).padStart(2, '0')}-${slug(object.kind ?? 'object')}-${slug(object.metadata.name ?? '')}.yaml`, text: body, private: false });
  }
  const image = options.image;
  const tag = /:([^/:@]+)$/.exec(image)?.[1];
  const chart = {
    apiVersion: 'v2',
    name: defined.name,
    description: `The ${defined.name} controller, as \`rxkube manifests\` deploys it.`,
    type: 'application',
    version: '0.1.0',
    ...(tag === undefined ? {} : { appVersion: tag }),
  };
  const values = valuesFile(marks);
  const holdsKey = marks.slots.some((s) => s.path === 'webhook.key');
  return [{ path: 'Chart.yaml', text: stringify(chart, { lineWidth: 0 }), private: false }, { path: 'values.yaml', text: values, private: holdsKey }, ...files];
}
