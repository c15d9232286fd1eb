import type { ResourceRegistry } from './registry.js';
import { apiVersionOf, type ResourceType } from './resourceType.js';

/**
 * Discovery documents in the shapes clients read: the legacy ones
 * (`APIVersions`, `APIGroupList`, `APIGroup`, `APIResourceList`) and the
 * aggregated `APIGroupDiscoveryList` (apidiscovery.k8s.io/v2) that kubectl
 * asks for first and that saves it one request per group version.
 */

/** Kube's version priority: GA before beta before alpha, higher numbers first, others last by name. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (m === null) return undefined;
    const stage = m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0;
    return [Number(m[1]), stage, m[3] === undefined ? 0 : Number(m[3])];
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa === undefined || pb === undefined) {
    if (pa !== undefined) return -1;
    if (pb !== undefined) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (pa[1] !== pb[1]) return pb[1] - pa[1];
  if (pa[0] !== pb[0]) return pb[0] - pa[0];
  return pb[2] - pa[2];
}

interface GroupInfo {
  name: string;
  versions: string[];
}

/** kube-apiserver's order of the built-in groups in discovery. */
const builtinGroupOrder = [
  '',
  'apps',
  'events.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'networking.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
];

function groups(registry: ResourceRegistry): GroupInfo[] {
  const byGroup = new Map<string, Set<string>>();
  for (const type of registry.all()) {
    let set = byGroup.get(type.group);
    if (set === undefined) {
      set = new Set();
      byGroup.set(type.group, set);
    }
    set.add(type.version);
  }
  const rank = (g: string): number => {
    const i = builtinGroupOrder.indexOf(g);
    return i === -1 ? builtinGroupOrder.length : i;
  };
  return [...byGroup.entries()]
    .map(([name, versions]) => ({ name, versions: [...versions].sort(compareVersions) }))
    .sort((a, b) => rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function typesOf(registry: ResourceRegistry, group: string, version: string): ResourceType[] {
  return registry
    .all()
    .filter((t) => t.group === group && t.version === version)
    .sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
}

function groupVersion(group: string, version: string): { groupVersion: string; version: string } {
  return { groupVersion: apiVersionOf({ group, version }), version };
}

export function coreVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function apiGroup(info: GroupInfo): object {
  return {
    name: info.name,
    versions: info.versions.map((v) => groupVersion(info.name, v)),
    preferredVersion: groupVersion(info.name, info.versions[0]),
  };
}

export function groupList(registry: ResourceRegistry): object {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups(registry)
      .filter((g) => g.name !== '')
      .map(apiGroup),
  };
}

export function groupDocument(registry: ResourceRegistry, group: string): object | undefined {
  const info = groups(registry).find((g) => g.name === group && group !== '');
  return info === undefined ? undefined : { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(info) };
}

const subresourceVerbs = ['get', 'patch', 'update'];

function subresources(type: ResourceType): { name: string; kind: string; group?: string; version?: string; verbs: readonly string[] }[] {
  const out: { name: string; kind: string; group?: string; version?: string; verbs: readonly string[] }[] = [];
  if (type.status) out.push({ name: 'status', kind: type.kind, verbs: subresourceVerbs });
  if (type.scale !== undefined) out.push({ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: subresourceVerbs });
  out.push(...(type.extraSubresources ?? []));
  return out;
}

function optionalLists(type: ResourceType): Record<string, readonly string[]> {
  const out: Record<string, readonly string[]> = {};
  if (type.shortNames.length > 0) out.shortNames = type.shortNames;
  if (type.categories.length > 0) out.categories = type.categories;
  return out;
}

export function resourceList(registry: ResourceRegistry, group: string, version: string): object | undefined {
  const types = typesOf(registry, group, version);
  if (types.length === 0) return undefined;
  const resources: object[] = [];
  for (const type of types) {
    resources.push({
      name: type.resource,
      singularName: type.singular,
      namespaced: type.namespaced,
      kind: type.kind,
      verbs: type.verbs,
      ...optionalLists(type),
    });
    for (const sub of subresources(type)) {
      const extra: Record<string, string> = {};
      if (sub.group !== undefined) extra.group = sub.group;
      if (sub.version !== undefined) extra.version = sub.version;
      resources.push({ name: `${type.resource}/${sub.name}`, singularName: '', namespaced: type.namespaced, ...extra, kind: sub.kind, verbs: sub.verbs });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf({ group, version }), resources };
}

function aggregatedResource(type: ResourceType): object {
  return {
    resource: type.resource,
    responseKind: { group: type.group, version: type.version, kind: type.kind },
    scope: type.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: type.singular,
    verbs: type.verbs,
    ...optionalLists(type),
    subresources: subresources(type).map((sub) => ({
      subresource: sub.name,
      responseKind: { group: sub.group ?? type.group, version: sub.version ?? type.version, kind: sub.kind },
      verbs: sub.verbs,
    })),
  };
}

/** The aggregated discovery of `/api` (`core` true) or `/apis`. */
export function aggregatedDiscovery(registry: ResourceRegistry, core: boolean, apiVersion: string): object {
  const items = groups(registry)
    .filter((g) => (g.name === '') === core)
    .map((g) => ({
      metadata: { name: g.name, creationTimestamp: null },
      versions: g.versions.map((version) => ({
        version,
        resources: typesOf(registry, g.name, version).map(aggregatedResource),
        freshness: 'Current',
      })),
    }));
  return { kind: 'APIGroupDiscoveryList', apiVersion, metadata: {}, items };
}

/**
 * Which aggregated discovery version the Accept header asks for, if any
 * (`application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`).
 */
export function aggregatedDiscoveryVersion(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  for (const part of (accept ?? '').split(',')) {
    const params = new Map(
      part
        .split(';')
        .slice(1)
        .map((p) => p.trim().split('=') as [string, string]),
    );
    if (params.get('as') !== 'APIGroupDiscoveryList' || params.get('g') !== 'apidiscovery.k8s.io') continue;
    const v = params.get('v');
    if (v === 'v2' || v === 'v2beta1') return v;
  }
  return undefined;
}
