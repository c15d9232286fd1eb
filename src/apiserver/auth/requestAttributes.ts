import type { Route } from '../http/router.js';

/**
 * What the authorizer decides on, as kube's `authorizer.Attributes` from its
 * RequestInfo: a resource request (verb, API group and version, resource and
 * subresource, namespace, name) or a non-resource one (the lowercased HTTP
 * method and the path). Empty strings stand for "none", as in kube.
 */
export interface RequestAttributes {
  readonly verb: string;
  readonly resourceRequest: boolean;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  readonly path: string;
}

const none = { apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };

export function nonResourceAttributes(verb: string, path: string): RequestAttributes {
  return { ...none, verb, resourceRequest: false, path };
}

/** The name a list or watch is restricted to by `fieldSelector=metadata.name=x`, as kube's RequestInfo reads it. */
function selectedName(query: URLSearchParams): string {
  const selector = query.get('fieldSelector');
  if (selector === null) return '';
  for (const term of selector.split(',')) {
    const m = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term);
    if (m !== null) return m[1];
  }
  return '';
}

/** The attributes of a request, given its route and the verb the server gave it (get, list, watch, create, ...). */
export function requestAttributes(route: Route, verb: string, method: string, path: string, query: URLSearchParams): RequestAttributes {
  if (route.kind !== 'resource') return nonResourceAttributes(method.toLowerCase(), path);
  let name = route.name ?? '';
  if (name === '' && (verb === 'list' || verb === 'watch')) name = selectedName(query);
  // kube's RequestInfo puts a Namespace's own name in the namespace attribute, so a RoleBinding can grant access to its Namespace.
  const namespace = route.namespace ?? (route.group === '' && route.resource === 'namespaces' ? (route.name ?? '') : '');
  return {
    verb,
    resourceRequest: true,
    apiGroup: route.group,
    apiVersion: route.version,
    resource: route.resource,
    subresource: route.subresource ?? '',
    namespace,
    name,
    path,
  };
}
