import type { Static, TSchema } from 'typebox';
import type { TypedResource, WatchedResource } from '../controller/controller.js';
import type { KubeObject, ObjectMeta } from '../types.js';
import type { ValidationRule } from './kubeSchema.js';
import { StructuralSchemaError, structural, type JsonSchemaProps } from './structural.js';

/**
 * A custom resource defined once, schema first: TypeBox schemas for its
 * `spec` and `status` give the CustomResourceDefinition (its structural
 * schema, names, versions, subresources, printer columns), the TypeScript
 * type of its objects, and the `WatchedResource` a controller is `for`, so
 * that the type flows into `ctx.object`, `ctx.store` and the client
 * without a cast. The same idea as kube-rs's `#[derive(CustomResource)]`,
 * controller-gen's markers and java-operator-sdk's `CustomResource<Spec,
 * Status>`, with the schema as the source instead of a type.
 */

/** An `additionalPrinterColumns` entry: a column `kubectl get` shows. */
export interface PrinterColumn {
  /** The column's header. */
  name: string;
  /** How the value is shown; `date` shows an age. */
  type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  /** A JSONPath into the object (`.spec.replicas`, `.status.conditions[?(@.type=="Ready")].status`). */
  jsonPath: string;
  /** What `kubectl explain` and `kubectl get -o wide` headers describe the column as. */
  description?: string;
  /** A hint of how the value is shown, as OpenAPI formats name it. */
  format?: 'int32' | 'int64' | 'float' | 'double' | 'byte' | 'date' | 'date-time' | 'password';
  /** 0 shows it in the standard view; more, only with `-o wide`. */
  priority?: number;
}

/** The `/scale` subresource: where the replicas are, so that `kubectl scale` and a HorizontalPodAutoscaler can set them. */
export interface ScaleSubresource {
  /** `.spec.replicas` style. */
  specReplicasPath: string;
  /** `.status.replicas` style. */
  statusReplicasPath: string;
  /** Where the selector of the pods is, as a string (`.status.selector`): an HPA needs it. */
  labelSelectorPath?: string;
}

/** The schemas of a version: `spec` (what the user asks for) and, optionally, `status` (what the controller found). */
export interface CustomResourceSchema {
  /** The schema of `.spec`. */
  spec: TSchema;
  /** The schema of `.status`; having one makes `/status` a subresource of its own. */
  status?: TSchema;
}

/** One version of a custom resource. */
export interface CustomResourceVersion<S extends CustomResourceSchema = CustomResourceSchema> {
  /** Its schemas; a `status` gives the version a `/status` subresource. */
  schema: S;
  /** CEL rules on the whole object (`self.metadata.name`, `self.spec`), beside those on the schemas' nodes. */
  rules?: ValidationRule[];
  /** Served over the API (default true). */
  served?: boolean;
  /** The version objects are stored in: exactly one version has it (a lone version has it by default). */
  storage?: boolean;
  /** Deprecated: requests to it get a warning (`deprecationWarning`, or kube's own). */
  deprecated?: boolean;
  /** The warning a deprecated version's requests get, instead of kube's own. */
  deprecationWarning?: string;
  /** Columns `kubectl get` shows (`additionalPrinterColumns`); kube shows the age when there are none. */
  printerColumns?: PrinterColumn[];
  /** The `/scale` subresource. */
  scale?: ScaleSubresource;
  /** Fields a field selector may use (`.spec.color`), besides `metadata.name` and `metadata.namespace`. */
  selectableFields?: string[];
}

/** What `defineCustomResource` takes. */
export interface CustomResourceOptions<V extends Readonly<Record<string, CustomResourceVersion>>> {
  /** The API group: a domain with a dot (`apps.example.com`). */
  group: string;
  /** The kind, in CamelCase (`WebApp`). */
  kind: string;
  /** The resource in URLs (default: the kind in lower case, made plural the English way: `webapps`, `policies`). */
  plural?: string;
  /** Default: the kind in lower case. */
  singular?: string;
  /** Default: the kind and `List`. */
  listKind?: string;
  /** Short names for kubectl (`wa`). */
  shortNames?: string[];
  /** Groups kubectl can get at once (`all`). */
  categories?: string[];
  /** `Namespaced` objects live in a namespace; `Cluster` ones do not. */
  scope: 'Namespaced' | 'Cluster';
  /** The versions, by name (`v1`, `v1beta1`). */
  versions: V;
  /** Labels and annotations of the CustomResourceDefinition object. */
  labels?: Record<string, string>;
  /** Annotations of the CustomResourceDefinition object. */
  annotations?: Record<string, string>;
}

/** The type of an object of one version: `apiVersion`, `kind`, `metadata`, `spec` and, with a status schema, an optional `status`. */
export type CustomObject<S extends CustomResourceSchema> = {
  /** `group/version`. */
  apiVersion: string;
  /** The kind, as defined. */
  kind: string;
  metadata: ObjectMeta;
  /** What the user asks for, typed by the version's `spec` schema. */
  spec: Static<S['spec']>;
} & (S extends { status: infer Status extends TSchema } ? { status?: Static<Status> } : unknown);

/** The name of the storage version among `V`: the one marked `storage: true`, or the only one. */
export type StorageVersionOf<V> = [{ [K in keyof V]: V[K] extends { storage: true } ? K : never }[keyof V]] extends [never]
  ? keyof V & string
  : { [K in keyof V]: V[K] extends { storage: true } ? K : never }[keyof V] & string;

/** One version of a defined custom resource, as a controller watches it. */
export interface DefinedVersion<O extends KubeObject> {
  /** `group/version`. */
  readonly apiVersion: string;
  /**
   * For `controller({ for })`, `owns`, `watches`, and for `ctx.client`
   * (`{ ...X.resource, namespace, name }`, `{ ...X.resource, namespace }`):
   * carries the type of the objects, and their `apiVersion` so that it
   * addresses them too.
   */
  readonly resource: TypedResource<O>;
}

/** The CustomResourceDefinition object (apiextensions.k8s.io/v1) `defineCustomResource` makes. */
export interface CustomResourceDefinitionObject extends KubeObject {
  /** Always `apiextensions.k8s.io/v1`. */
  apiVersion: 'apiextensions.k8s.io/v1';
  /** Always `CustomResourceDefinition`. */
  kind: 'CustomResourceDefinition';
  /** The CRD's spec, as `kubectl apply` would send it. */
  spec: {
    group: string;
    names: { plural: string; singular: string; kind: string; listKind: string; shortNames?: string[]; categories?: string[] };
    scope: 'Namespaced' | 'Cluster';
    versions: Record<string, unknown>[];
    conversion?: Record<string, unknown>;
  };
}

/** Where the API server reaches a conversion webhook (`spec.conversion.webhook.clientConfig`). */
export type ConversionClientConfig = { url: string; caBundle?: string } | { service: { name: string; namespace: string; path?: string; port?: number }; caBundle?: string };

/** What every defined custom resource has, whatever its versions: what takes a definition of any kind (`installCrd`, a definition's `crds`) asks for. */
export interface DefinedCustomResource {
  /** The API group. */
  readonly group: string;
  /** The kind. */
  readonly kind: string;
  /** The resource in URLs. */
  readonly plural: string;
  /** Whether its objects live in a namespace. */
  readonly scope: 'Namespaced' | 'Cluster';
  /** The version objects are stored in. */
  readonly storageVersion: string;
  /** The storage version's `group/version`. */
  readonly apiVersion: string;
  /** The storage version, as a controller watches it: `controller({ for: X.resource })`, or `{ ...X.resource, namespace }`. */
  readonly resource: WatchedResource;
  /** Every version, by name. */
  readonly versions: Readonly<Record<string, DefinedVersion<KubeObject>>>;
  /** The CustomResourceDefinition: for `installCrd`, a definition's `crds`, `rxkube manifests`. */
  readonly crd: CustomResourceDefinitionObject;
  /** The CRD converting between its versions through the webhook at `clientConfig` (what `rxkube manifests` sets for a controller's `webhooks.convert`). */
  crdConvertedBy(clientConfig: ConversionClientConfig): CustomResourceDefinitionObject;
}

/** What `defineCustomResource` returns, typed by its versions. `ObjectOf<typeof X>` is the type of its objects. */
export interface CustomResource<V extends Readonly<Record<string, CustomResourceVersion>>> extends DefinedCustomResource {
  /** The name of the version objects are stored in. */
  readonly storageVersion: StorageVersionOf<V>;
  /** The storage version, as a controller watches it and the client addresses it, carrying the type of its objects. */
  readonly resource: TypedResource<CustomObject<V[StorageVersionOf<V>]['schema']>>;
  /** Every version, by name, each carrying the type of its objects. */
  readonly versions: { readonly [K in keyof V]: DefinedVersion<CustomObject<V[K]['schema']>> };
  /** An object of the storage version: `apiVersion` and `kind` filled in. */
  make(object: Omit<CustomObject<V[StorageVersionOf<V>]['schema']>, 'apiVersion' | 'kind'>): CustomObject<V[StorageVersionOf<V>]['schema']>;
}

/** The type of the objects of a defined custom resource: of its storage version, or of `Version`. */
export type ObjectOf<R extends DefinedCustomResource, Version extends keyof R['versions'] = R['storageVersion']> = R['versions'][Version] extends DefinedVersion<infer O> ? O : never;

const dnsLabel = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** The English plural kube-rs and controller-gen give a kind's lower-case name. */
export function pluralOf(singular: string): string {
  if (/(s|x|z|ch|sh)$/.test(singular)) return `${singular}es`;
  if (/[^aeiou]y$/.test(singular)) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}

function objectSchema(schema: TSchema, path: string): JsonSchemaProps {
  const converted = structural(schema as JsonSchemaProps, path);
  if (converted.type !== 'object') throw new StructuralSchemaError(path, 'must be an object schema (Type.Object)');
  return converted;
}

/** A version of the CRD (`spec.versions[i]`). */
function crdVersion(name: string, version: CustomResourceVersion, storage: boolean): Record<string, unknown> {
  const { schema } = version;
  const properties: JsonSchemaProps = { spec: objectSchema(schema.spec, 'spec') };
  if (schema.status !== undefined) properties.status = objectSchema(schema.status, 'status');
  const root: JsonSchemaProps = { type: 'object', required: ['spec'], properties };
  if (version.rules !== undefined && version.rules.length > 0) root['x-kubernetes-validations'] = version.rules;
  const subresources: Record<string, unknown> = {};
  if (schema.status !== undefined) subresources.status = {};
  if (version.scale !== undefined) subresources.scale = version.scale;
  return {
    name,
    served: version.served ?? true,
    storage,
    ...(version.deprecated !== undefined ? { deprecated: version.deprecated } : {}),
    ...(version.deprecationWarning !== undefined ? { deprecationWarning: version.deprecationWarning } : {}),
    schema: { openAPIV3Schema: root },
    ...(Object.keys(subresources).length > 0 ? { subresources } : {}),
    ...(version.printerColumns !== undefined && version.printerColumns.length > 0 ? { additionalPrinterColumns: version.printerColumns } : {}),
    ...(version.selectableFields !== undefined && version.selectableFields.length > 0 ? { selectableFields: version.selectableFields.map((jsonPath) => ({ jsonPath })) } : {}),
  };
}

/** The name of the storage version, or an error naming what is wrong with the versions. */
function storageVersionName(kind: string, versions: Readonly<Record<string, CustomResourceVersion>>): string {
  const names = Object.keys(versions);
  if (names.length === 0) throw new TypeError(`defineCustomResource(${kind}): versions: needs at least one version`);
  for (const name of names) {
    if (!dnsLabel.test(name)) throw new TypeError(`defineCustomResource(${kind}): versions.${name}: a version's name must be a DNS-1035 label (v1, v1beta1)`);
  }
  const marked = names.filter((n) => versions[n]?.storage === true);
  if (marked.length === 1) return marked[0] as string;
  if (marked.length === 0 && names.length === 1) return names[0] as string;
  throw new TypeError(`defineCustomResource(${kind}): versions: exactly one version must be the storage version (storage: true), not ${marked.length === 0 ? 'none' : marked.join(', ')}`);
}

function checkNames<V extends Readonly<Record<string, CustomResourceVersion>>>(options: CustomResourceOptions<V>): void {
  const what = `defineCustomResource(${options.kind})`;
  if (typeof options.kind !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(options.kind)) throw new TypeError(`${what}: kind must be a CamelCase name (WebApp)`);
  if (typeof options.group !== 'string' || !options.group.includes('.')) throw new TypeError(`${what}: group must be a domain with at least one dot (apps.example.com), not ${JSON.stringify(options.group)}`);
  if (options.scope !== 'Namespaced' && options.scope !== 'Cluster') throw new TypeError(`${what}: scope must be Namespaced or Cluster`);
  for (const [field, value] of [['plural', options.plural], ['singular', options.singular]] as const) {
    if (value !== undefined && !dnsLabel.test(value)) throw new TypeError(`${what}: ${field} must be a lower-case DNS label, not ${JSON.stringify(value)}`);
  }
}

/**
 * Defines a custom resource from TypeBox schemas: one definition gives its
 * CustomResourceDefinition (`.crd`), the `WatchedResource` a controller is
 * `for` (`.resource`, typed), and the type of its objects
 * (`ObjectOf<typeof X>`).
 *
 * ```ts
 * export const WebApp = defineCustomResource({
 *   group: 'apps.example.com',
 *   kind: 'WebApp',
 *   scope: 'Namespaced',
 *   versions: { v1: { schema: { spec: Type.Object({ image: Type.String() }), status: Type.Object({ ready: Type.Optional(Type.Boolean()) }) } } },
 * });
 * export type WebApp = ObjectOf<typeof WebApp>;
 * ```
 *
 * The schemas must have a structural form (a type at every level, no
 * `$ref`, no `additionalProperties` beside `properties`, no tuple or
 * intersection): what has none throws a `StructuralSchemaError` naming
 * the field, as the definition is made. CEL rules are compiled where the
 * API server is at hand: `checkCustomResource` of rxkube/testing runs
 * kube's whole CRD validation (rules included) in a test.
 */
export function defineCustomResource<const V extends Readonly<Record<string, CustomResourceVersion>>>(options: CustomResourceOptions<V>): CustomResource<V> {
  checkNames(options);
  const kind = options.kind;
  const storageVersion = storageVersionName(kind, options.versions);
  const singular = options.singular ?? kind.toLowerCase();
  const plural = options.plural ?? pluralOf(singular);
  const versions = Object.entries(options.versions).map(([name, version]) => {
    try {
      return crdVersion(name, version, name === storageVersion);
    } catch (error) {
      if (error instanceof StructuralSchemaError) throw new StructuralSchemaError(`${kind} ${name} ${error.path}`, error.reason);
      throw error;
    }
  });
  const names = {
    plural,
    singular,
    kind,
    listKind: options.listKind ?? `${kind}List`,
    ...(options.shortNames !== undefined && options.shortNames.length > 0 ? { shortNames: options.shortNames } : {}),
    ...(options.categories !== undefined && options.categories.length > 0 ? { categories: options.categories } : {}),
  };
  const metadata: ObjectMeta = {
    name: `${plural}.${options.group}`,
    ...(options.labels !== undefined ? { labels: options.labels } : {}),
    ...(options.annotations !== undefined ? { annotations: options.annotations } : {}),
  };
  const crd: CustomResourceDefinitionObject = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata,
    spec: { group: options.group, names, scope: options.scope, versions },
  };
  const resourceOf = (version: string) => ({ group: options.group, version, resource: plural, kind, apiVersion: `${options.group}/${version}` });
  const defined = Object.fromEntries(Object.keys(options.versions).map((v) => [v, Object.freeze({ apiVersion: `${options.group}/${v}`, resource: Object.freeze(resourceOf(v)) })]));
  const apiVersion = `${options.group}/${storageVersion}`;
  return Object.freeze({
    group: options.group,
    kind,
    plural,
    scope: options.scope,
    storageVersion: storageVersion as StorageVersionOf<V>,
    apiVersion,
    resource: defined[storageVersion]?.resource as CustomResource<V>['resource'],
    versions: Object.freeze(defined) as CustomResource<V>['versions'],
    crd,
    crdConvertedBy: (clientConfig: ConversionClientConfig): CustomResourceDefinitionObject => ({
      ...crd,
      spec: { ...crd.spec, conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig } } },
    }),
    make: (object: Omit<CustomObject<V[StorageVersionOf<V>]['schema']>, 'apiVersion' | 'kind'>) => ({ apiVersion, kind, ...object }) as CustomObject<V[StorageVersionOf<V>]['schema']>,
  });
}

/** Whether `value` is what `defineCustomResource` returned (where a CRD object or a definition is taken). */
export function isCustomResource(value: unknown): value is DefinedCustomResource {
  return typeof value === 'object' && value !== null && typeof (value as Partial<DefinedCustomResource>).crdConvertedBy === 'function' && typeof (value as Partial<DefinedCustomResource>).crd === 'object';
}
