import { createHash } from 'node:crypto';
import type { ResourceRegistry } from './registry.js';
import { apiVersionOf, type ResourceType } from './resourceType.js';
import { gvkKey, kubernetesSchemas, refPrefix, schemaClosure, type Schema } from './kubernetesSchemas.js';
import { openApiV2Protobuf } from './openapiV2Protobuf.js';
import { ApiError } from './statusError.js';

/** kube-openapi's answer type for a protobuf v2 document, whichever of its two names was asked for. */
export const openApiV2ProtobufType = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/**
 * `/openapi/v3` (the index of group versions, and one document per group version) and
 * `/openapi/v2` (one document, JSON or protobuf), as kube-apiserver serves them: the paths of each kind,
 * tagged with `x-kubernetes-group-version-kind` and the `fieldValidation` parameter, and the
 * schemas of the kinds: Kubernetes's own for built-ins (kubernetesSchemas.ts), each CRD
 * version's `openAPIV3Schema` for custom resources, with `metadata` as ObjectMeta. That is what
 * `kubectl explain` reads, and the `fieldValidation` parameter tells kubectl that the server
 * validates fields itself (so it sends `fieldValidation=Strict` and does no client-side schema
 * check).
 *
 * Operations list no `requestBody` media types, so kubectl computes client-side apply patches
 * from its compiled-in types rather than from these schemas (whose patch strategies the source
 * does not keep). `/openapi/v2` is served in protobuf too (openapiV2Protobuf.ts), which
 * kubectl and client-go ask for; its operations list no `consumes` either, so kubectl's
 * client-side apply does the same with it.
 */

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

const fieldValidationDescription = 'Ignore, Warn or Strict: how the server treats unknown or duplicate fields in the object.';

const okResponse = { '200': { description: 'OK' } };

type Dialect = 'v2' | 'v3';

function operation(type: ResourceType, action: string, withValidation: boolean, dialect: Dialect): Record<string, unknown> {
  const op: Record<string, unknown> = {
    operationId: `${action}${type.kind}`,
    responses: okResponse,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: type.group, version: type.version, kind: type.kind },
  };
  if (withValidation) {
    op.parameters = [
      dialect === 'v3'
        ? { name: 'fieldValidation', in: 'query', description: fieldValidationDescription, schema: { type: 'string', uniqueItems: true } }
        : { name: 'fieldValidation', in: 'query', description: fieldValidationDescription, type: 'string', uniqueItems: true },
    ];
  }
  return op;
}

function pathsFor(type: ResourceType, dialect: Dialect): Record<string, unknown> {
  const prefix = `/${gvPath(type.group, type.version)}${type.namespaced ? '/namespaces/{namespace}' : ''}/${type.resource}`;
  const op = (action: string, withValidation: boolean): Record<string, unknown> => operation(type, action, withValidation, dialect);
  const paths: Record<string, unknown> = {
    [prefix]: { get: op('list', false), post: op('post', true) },
    [`${prefix}/{name}`]: { get: op('get', false), put: op('put', true), patch: op('patch', true), delete: op('delete', false) },
  };
  if (type.status) paths[`${prefix}/{name}/status`] = { get: op('get', false), put: op('put', true), patch: op('patch', true) };
  return paths;
}

const objectMetaRef = `${refPrefix}io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`;
const listMetaRef = `${refPrefix}io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta`;

const apiVersionProperty = {
  description:
    'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
  type: 'string',
};
const kindProperty = {
  description:
    'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
  type: 'string',
};

/** Kube's name for a custom resource's schema: the group reversed, the version, the kind (`com.example.v1.Widget`). */
export function customSchemaName(type: ResourceType, kind = type.kind): string {
  return `${type.group.split('.').reverse().join('.')}.${type.version}.${kind}`;
}

function customSchemas(type: ResourceType): Record<string, Schema> {
  const own = typeof type.schema === 'object' && type.schema !== null ? (type.schema as Record<string, unknown>) : {};
  const ownProperties = typeof own.properties === 'object' && own.properties !== null ? (own.properties as Record<string, unknown>) : {};
  const gvk = (kind: string): unknown[] => [{ group: type.group, kind, version: type.version }];
  return {
    [customSchemaName(type)]: {
      ...own,
      type: 'object',
      properties: {
        ...ownProperties,
        apiVersion: apiVersionProperty,
        kind: kindProperty,
        metadata: { description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata", allOf: [{ $ref: objectMetaRef }] },
      },
      'x-kubernetes-group-version-kind': gvk(type.kind),
    },
    [customSchemaName(type, type.listKind)]: {
      description: `${type.kind}List is a list of ${type.kind}`,
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion: apiVersionProperty,
        items: { description: `List of ${type.resource}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`, type: 'array', items: { $ref: `${refPrefix}${customSchemaName(type)}` } },
        kind: kindProperty,
        metadata: { description: 'Standard list metadata.', allOf: [{ $ref: listMetaRef }] },
      },
      'x-kubernetes-group-version-kind': gvk(type.listKind),
    },
  };
}

/** The schemas of these types and all they refer to. */
function schemasFor(types: readonly ResourceType[]): Record<string, Schema> {
  const { schemas, byKind } = kubernetesSchemas();
  const custom: Record<string, Schema> = {};
  const roots: string[] = [];
  for (const type of types) {
    if (type.builtin) {
      for (const kind of [type.kind, type.listKind]) {
        const name = byKind.get(gvkKey(type.group, type.version, kind));
        if (name !== undefined) roots.push(name);
      }
    } else {
      Object.assign(custom, customSchemas(type));
      roots.push(objectMetaRef.slice(refPrefix.length), listMetaRef.slice(refPrefix.length));
    }
  }
  const out: Record<string, Schema> = {};
  for (const name of [...schemaClosure(roots, schemas)].sort()) out[name] = schemas[name];
  return Object.assign(out, custom);
}

function groupVersionDocument(registry: ResourceRegistry, group: string, version: string): string | undefined {
  const types = registry.all().filter((t) => t.group === group && t.version === version);
  if (types.length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  for (const type of types) Object.assign(paths, pathsFor(type, 'v3'));
  return JSON.stringify({ openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas: schemasFor(types) } });
}

function v2Document(registry: ResourceRegistry): string {
  const types = registry.all();
  const paths: Record<string, unknown> = {};
  for (const type of types) Object.assign(paths, pathsFor(type, 'v2'));
  const text = JSON.stringify({ swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, definitions: schemasFor(types) });
  return text.replaceAll(`"${refPrefix}`, '"#/definitions/');
}

function hashOf(text: string): string {
  return createHash('sha512').update(text).digest('hex').toUpperCase();
}

/** The media types `/openapi/v2` serves, in kube's order, with the type each answers with. */
const v2Media = [
  { type: 'application', subtype: 'json', returned: 'application/json' },
  { type: 'application', subtype: 'com.github.proto-openapi.spec.v2@v1.0+protobuf', returned: openApiV2ProtobufType },
  { type: 'application', subtype: 'com.github.proto-openapi.spec.v2.v1.0+protobuf', returned: openApiV2ProtobufType },
];

/**
 * What an Accept header picks among `media`, as kube-openapi's handler picks (goautoneg): clauses
 * by quality, more specific first among equals, the first that matches a served type (wildcards
 * match anything); none (undefined) is a 406. No header is `*\/*`.
 */
function negotiate<T extends { type: string; subtype: string }>(accept: string | undefined, media: readonly T[]): T | undefined {
  const clauses = (accept === undefined || accept.trim() === '' ? '*/*' : accept)
    .split(',')
    .map((part, index) => {
      const [range = '', ...params] = part.split(';').map((p) => p.trim());
      const [type = '', subtype = ''] = range.split('/');
      const q = params.map((p) => /^q=([0-9.]+)$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { type, subtype, q: q === undefined ? 1 : Number(q), index };
    })
    .filter((c) => c.type !== '' && c.q > 0);
  const specificity = (c: { type: string; subtype: string }): number => (c.type === '*' ? 0 : c.subtype === '*' ? 1 : 2);
  clauses.sort((a, b) => b.q - a.q || specificity(b) - specificity(a) || a.index - b.index);
  for (const clause of clauses) {
    const found = media.find((m) => (clause.type === '*' || clause.type === m.type) && (clause.subtype === '*' || clause.subtype === m.subtype));
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A document at `/openapi/...`: JSON text, or the v2 document in protobuf. */
export interface OpenApiAnswer {
  readonly body: string | Uint8Array;
  readonly contentType: string;
}

/** The document at `/openapi/{path}` in the form the Accept header picks, or undefined for 404. */
export function openApiDocument(registry: ResourceRegistry, path: string, accept: string | undefined): OpenApiAnswer | undefined {
  if (path === 'v2') {
    const media = negotiate(accept, v2Media);
    if (media === undefined) throw new ApiError(406, 'NotAcceptable', 'only application/json and application/com.github.proto-openapi.spec.v2.v1.0+protobuf are served at /openapi/v2');
    const json = v2Document(registry);
    if (media.subtype === 'json') return { body: json, contentType: media.returned };
    return { body: openApiV2Protobuf(JSON.parse(json) as Record<string, unknown>), contentType: media.returned };
  }
  const text = openApiV3Document(registry, path);
  return text === undefined ? undefined : { body: text, contentType: 'application/json' };
}

function openApiV3Document(registry: ResourceRegistry, path: string): string | undefined {
  if (path === 'v3') {
    const versions = new Map<string, { group: string; version: string }>();
    for (const type of registry.all()) versions.set(apiVersionOf(type), { group: type.group, version: type.version });
    const paths: Record<string, unknown> = {};
    for (const { group, version } of versions.values()) {
      const key = gvPath(group, version);
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hashOf(groupVersionDocument(registry, group, version) ?? '')}` };
    }
    return JSON.stringify({ paths });
  }
  const match = /^v3\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (match === null) return undefined;
  return match[1] !== undefined ? groupVersionDocument(registry, '', match[1]) : groupVersionDocument(registry, match[2], match[3]);
}
