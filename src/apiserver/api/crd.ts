import type { KubeObject } from '../../types.js';
import { isPlainObject, jsonEqual } from '../../util/json.js';
import { crdSchemaErrors, crdVersionSchema } from './crdSchema.js';
import { allVerbs, type PrinterColumn, type ResourceType, type ScaleSubresource } from './resourceType.js';
import type { FieldError } from './statusError.js';

/**
 * CustomResourceDefinitions (apiextensions.k8s.io/v1): the checks kube
 * makes before accepting one, and the resource types it serves.
 */

export interface CrdNames {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames?: string[];
  categories?: string[];
}

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema?: { openAPIV3Schema?: unknown };
  subresources?: { status?: unknown; scale?: ScaleSubresource };
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: { jsonPath: string }[];
}

export interface CrdSpec {
  group: string;
  names: CrdNames;
  scope: 'Namespaced' | 'Cluster';
  versions: CrdVersion[];
}

export function crdSpec(crd: KubeObject): CrdSpec {
  return (crd as unknown as { spec: CrdSpec }).spec;
}

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function stringField(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** What kube would reject in a CRD (empty when it is acceptable). */
export function crdValidationErrors(crd: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const spec: unknown = (crd as unknown as { spec?: unknown }).spec;
  if (!isPlainObject(spec)) return [{ field: 'spec', type: 'Required value', detail: '' }];
  const group = stringField(spec.group);
  if (group === '') errors.push({ field: 'spec.group', type: 'Required value', detail: '' });
  else if (!group.includes('.')) errors.push({ field: 'spec.group', type: 'Invalid value', value: group, detail: 'should be a domain with at least one dot' });
  const names = isPlainObject(spec.names) ? spec.names : {};
  const plural = stringField(names.plural);
  if (plural === '') errors.push({ field: 'spec.names.plural', type: 'Required value', detail: '' });
  else if (!dnsLabel.test(plural)) errors.push({ field: 'spec.names.plural', type: 'Invalid value', value: plural, detail: 'a lowercase RFC 1123 label is required' });
  if (stringField(names.kind) === '') errors.push({ field: 'spec.names.kind', type: 'Required value', detail: '' });
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    errors.push({ field: 'spec.scope', type: 'Unsupported value', detail: `${JSON.stringify(spec.scope ?? '')}: supported values: "Cluster", "Namespaced"` });
  }
  const versions = Array.isArray(spec.versions) ? (spec.versions as unknown[]) : [];
  if (versions.length === 0) errors.push({ field: 'spec.versions', type: 'Required value', detail: 'must have exactly one version marked as storage version' });
  let storage = 0;
  versions.forEach((v, i) => {
    const version = isPlainObject(v) ? v : {};
    const name = stringField(version.name);
    if (!dnsLabel.test(name)) errors.push({ field: `spec.versions[${i}].name`, type: 'Invalid value', value: name, detail: 'a DNS-1035 label is required' });
    if (version.storage === true) storage += 1;
    const schema = isPlainObject(version.schema) ? version.schema.openAPIV3Schema : undefined;
    if (!isPlainObject(schema)) errors.push({ field: `spec.versions[${i}].schema.openAPIV3Schema`, type: 'Required value', detail: 'schemas are required' });
  });
  errors.push(...schemaErrorsOf(versions));
  if (versions.length > 0 && storage !== 1) {
    errors.push({ field: 'spec.versions', type: 'Invalid value', value: versions.map((v) => (isPlainObject(v) ? v.name : v)), detail: 'must have exactly one version marked as storage version' });
  }
  const expectedName = `${plural}.${group}`;
  if (crd.metadata.name !== expectedName) {
    errors.push({ field: 'metadata.name', type: 'Invalid value', value: crd.metadata.name ?? '', detail: 'must be spec.names.plural+"."+spec.group' });
  }
  return errors;
}

/**
 * The errors of the versions' schemas (keywords, CEL rules). Kube validates a v1 CRD whose versions share one schema as
 * `spec.validation.openAPIV3Schema`, and per version (`spec.versions[i].schema.openAPIV3Schema`) otherwise.
 */
function schemaErrorsOf(versions: readonly unknown[]): FieldError[] {
  const schemas = versions.map((v) => (isPlainObject(v) && isPlainObject(v.schema) ? v.schema.openAPIV3Schema : undefined));
  if (schemas.length === 0) return [];
  if (schemas.every((s) => jsonEqual(s, schemas[0]))) return crdSchemaErrors(schemas[0], 'spec.validation.openAPIV3Schema');
  return schemas.flatMap((s, i) => crdSchemaErrors(s, `spec.versions[${i}].schema.openAPIV3Schema`));
}

/** The names a CRD is served under, with kube's defaults filled in. */
export function acceptedNames(spec: CrdSpec): CrdNames {
  const names: CrdNames = {
    plural: spec.names.plural,
    singular: spec.names.singular || spec.names.kind.toLowerCase(),
    kind: spec.names.kind,
    listKind: spec.names.listKind || `${spec.names.kind}List`,
  };
  if (spec.names.shortNames !== undefined && spec.names.shortNames.length > 0) names.shortNames = spec.names.shortNames;
  if (spec.names.categories !== undefined && spec.names.categories.length > 0) names.categories = spec.names.categories;
  return names;
}

export function storageVersion(spec: CrdSpec): string | undefined {
  return spec.versions.find((v) => v.storage)?.name;
}

/**
 * The resource types a CRD serves: one per served version, sharing one storage. Each version's schema
 * is compiled here, or taken from `previous` (the types the CRD served until now) when it is unchanged.
 */
export function crdResourceTypes(crd: KubeObject, previous: readonly ResourceType[] = []): ResourceType[] {
  const spec = crdSpec(crd);
  const names = acceptedNames(spec);
  return spec.versions
    .filter((v) => v.served)
    .map((v) =>
      Object.freeze({
        group: spec.group,
        version: v.name,
        resource: names.plural,
        singular: names.singular,
        kind: names.kind,
        listKind: names.listKind,
        namespaced: spec.scope === 'Namespaced',
        shortNames: names.shortNames ?? [],
        categories: names.categories ?? [],
        verbs: allVerbs,
        status: v.subresources?.status !== undefined && v.subresources.status !== null,
        scale: v.subresources?.scale,
        builtin: false,
        storageKey: `${spec.group}/${names.plural}`,
        selectableFields: (v.selectableFields ?? []).map((f) => f.jsonPath.replace(/^\./, '')),
        printerColumns: v.additionalPrinterColumns,
        schema: v.schema?.openAPIV3Schema,
        compiledSchema: crdVersionSchema(v.schema?.openAPIV3Schema, previous.find((p) => p.version === v.name)),
      }),
    );
}
