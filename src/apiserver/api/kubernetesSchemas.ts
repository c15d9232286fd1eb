import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { deepFreeze } from '../../util/json.js';

/**
 * The OpenAPI v3 schemas of the built-in kinds, as Kubernetes publishes them (v1.34.0, by way of
 * @kubernetes/client-node's generated models: see data/README.md and
 * scripts/kubernetesOpenApi.ts). Read from data/kubernetes-openapi.json.gz the first time
 * something asks (a write of a built-in, an /openapi request), never at import or server start.
 * The data is the same for every server and never changes, so it is read once per process.
 */

export type Schema = Readonly<Record<string, unknown>>;

export interface KubernetesSchemas {
  /** Where the schemas come from. */
  readonly origin: Readonly<Record<string, string>>;
  /** By name, as the spec names them (`io.k8s.api.apps.v1.Deployment`); refs are `#/components/schemas/<name>`. */
  readonly schemas: Readonly<Record<string, Schema>>;
  /** The schema name of a kind (`apps/v1/Deployment`, `/v1/Pod`), from `x-kubernetes-group-version-kind`. */
  readonly byKind: ReadonlyMap<string, string>;
}

export const refPrefix = '#/components/schemas/';

const dataUrl = new URL('../../../data/kubernetes-openapi.json.gz', import.meta.url);

let loaded: KubernetesSchemas | undefined;

export function gvkKey(group: string, version: string, kind: string): string {
  return `${group}/${version}/${kind}`;
}

function load(): KubernetesSchemas {
  const data = JSON.parse(gunzipSync(readFileSync(dataUrl)).toString('utf8')) as {
    origin: Record<string, string>;
    schemas: Record<string, Schema>;
  };
  const byKind = new Map<string, string>();
  for (const [name, schema] of Object.entries(data.schemas)) {
    const gvks = schema['x-kubernetes-group-version-kind'];
    if (!Array.isArray(gvks)) continue;
    for (const gvk of gvks as { group: string; version: string; kind: string }[]) byKind.set(gvkKey(gvk.group, gvk.version, gvk.kind), name);
  }
  return { origin: deepFreeze(data.origin), schemas: deepFreeze(data.schemas), byKind };
}

/** Whether this process has read the schemas yet (for the test that a server's start does not). */
export function kubernetesSchemasLoaded(): boolean {
  return loaded !== undefined;
}

export function kubernetesSchemas(): KubernetesSchemas {
  loaded ??= load();
  return loaded;
}

/** The names a schema refers to, directly or not, itself included. */
export function schemaClosure(roots: Iterable<string>, schemas: Readonly<Record<string, Schema>>): Set<string> {
  const seen = new Set<string>();
  const stack = [...roots];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(refPrefix)) stack.push(value.slice(refPrefix.length));
      else visit(value);
    }
  };
  while (stack.length > 0) {
    const name = stack.pop() as string;
    if (seen.has(name) || schemas[name] === undefined) continue;
    seen.add(name);
    visit(schemas[name]);
  }
  return seen;
}
