import { createHash } from 'node:crypto';
import type { ResourceRegistry } from './registry.js';
import { apiVersionOf, type ResourceType } from './resourceType.js';

/**
 * Enough of `/openapi/v3` for kubectl: the index of group versions and,
 * per group version, the paths of each kind with their operations tagged by
 * `x-kubernetes-group-version-kind` and the `fieldValidation` query
 * parameter. kubectl reads that to learn that the server validates fields
 * itself, so `kubectl apply` needs no client-side schema (and no
 * `/openapi/v2`, which kubectl reads as protobuf and this server does not
 * serve). No `requestBody` media types are listed, so kubectl computes
 * client-side apply patches from its compiled-in types, as it does for any
 * server that publishes no schemas. Schemas themselves are not served.
 */

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

const fieldValidation = {
  name: 'fieldValidation',
  in: 'query',
  description: 'Ignore, Warn or Strict: how the server treats unknown or duplicate fields in the object.',
  schema: { type: 'string', uniqueItems: true },
};

const okResponse = { '200': { description: 'OK' } };

function operation(type: ResourceType, action: string, withValidation: boolean): Record<string, unknown> {
  const op: Record<string, unknown> = {
    operationId: `${action}${type.kind}`,
    responses: okResponse,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: type.group, version: type.version, kind: type.kind },
  };
  if (withValidation) op.parameters = [fieldValidation];
  return op;
}

function pathsFor(type: ResourceType): Record<string, unknown> {
  const prefix = `/${gvPath(type.group, type.version)}${type.namespaced ? '/namespaces/{namespace}' : ''}/${type.resource}`;
  const paths: Record<string, unknown> = {
    [prefix]: { get: operation(type, 'list', false), post: operation(type, 'post', true) },
    [`${prefix}/{name}`]: {
      get: operation(type, 'get', false),
      put: operation(type, 'put', true),
      patch: operation(type, 'patch', true),
      delete: operation(type, 'delete', false),
    },
  };
  if (type.status) {
    paths[`${prefix}/{name}/status`] = {
      get: operation(type, 'get', false),
      put: operation(type, 'put', true),
      patch: operation(type, 'patch', true),
    };
  }
  return paths;
}

function groupVersionDocument(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const types = registry.all().filter((t) => t.group === group && t.version === version);
  if (types.length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  for (const type of types) Object.assign(paths, pathsFor(type));
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0' },
    paths,
    components: { schemas: {} },
  };
}

function hashOf(doc: unknown): string {
  return createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase();
}

/** The document at `/openapi/{path}`, or undefined for 404. */
export function openApiDocument(registry: ResourceRegistry, path: string, _query: URLSearchParams): unknown {
  if (path === 'v3') {
    const versions = new Map<string, { group: string; version: string }>();
    for (const type of registry.all()) versions.set(apiVersionOf(type), { group: type.group, version: type.version });
    const paths: Record<string, unknown> = {};
    for (const { group, version } of versions.values()) {
      const key = gvPath(group, version);
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hashOf(groupVersionDocument(registry, group, version))}` };
    }
    return { paths };
  }
  const match = /^v3\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (match === null) return undefined;
  return match[1] !== undefined ? groupVersionDocument(registry, '', match[1]) : groupVersionDocument(registry, match[2], match[3]);
}
