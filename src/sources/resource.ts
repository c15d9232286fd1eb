/**
 * Which collection a source lists and watches: a resource of an API group
 * version, in one namespace or across all of them.
 */
export interface ResourceRef {
  /** The API group; "" (or omitted) for the core group (`/api/v1`). */
  group?: string;
  version: string;
  /** The plural resource name, as in the URL: `pods`, `deployments`. */
  resource: string;
  /** One namespace; omitted for all namespaces or a cluster-scoped resource. */
  namespace?: string;
}

/** The collection's URL path: `/api/v1/namespaces/ns/pods`, `/apis/apps/v1/deployments`. */
export function collectionPath(ref: ResourceRef): string {
  const base = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  const ns = ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : '';
  return `${base}${ns}/${ref.resource}`;
}

/** How a resource reads in messages and metric labels: `deployments.apps` or `pods`. */
export function resourceName(ref: ResourceRef): string {
  return ref.group ? `${ref.resource}.${ref.group}` : ref.resource;
}

/** `pods in namespace "x"` or `pods in all namespaces`, for error messages. */
export function describeResource(ref: ResourceRef): string {
  return `${resourceName(ref)} ${ref.namespace ? `in namespace "${ref.namespace}"` : 'in all namespaces'}`;
}
