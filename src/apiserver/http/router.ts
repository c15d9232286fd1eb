/**
 * Maps request paths to what they address, following kube-apiserver's URL
 * layout: `/api/v1/...` for the core group, `/apis/{group}/{version}/...`
 * for the others, `namespaces/{ns}/` before namespaced resources, an
 * optional subresource after the name, and the legacy `/watch/` prefix.
 */
export type Route =
  | { kind: 'root' }
  | { kind: 'version' }
  | { kind: 'health'; check: string }
  | { kind: 'coreVersions' }
  | { kind: 'groups' }
  | { kind: 'group'; group: string }
  | { kind: 'groupVersion'; group: string; version: string }
  | { kind: 'openapi'; path: string }
  | ResourceRoute
  | { kind: 'unknown' };

export interface ResourceRoute {
  kind: 'resource';
  group: string;
  version: string;
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** Addressed through the deprecated `/watch/` prefix. */
  watchPrefix: boolean;
}

const namespaceSubresources = new Set(['status', 'finalize']);

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function resourcePath(group: string, version: string, rest: string[]): Route {
  let watchPrefix = false;
  if (rest[0] === 'watch') {
    watchPrefix = true;
    rest = rest.slice(1);
  }
  const base = { kind: 'resource' as const, group, version, watchPrefix };
  if (rest.length === 0) return { kind: 'unknown' };
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(group === '' && rest.length === 3 && namespaceSubresources.has(rest[2]))) {
    const [, namespace, resource, name, subresource, ...extra] = rest;
    if (extra.length > 0 && subresource !== 'proxy') return { kind: 'unknown' };
    return { ...base, namespace, resource, name, subresource };
  }
  const [resource, name, subresource, ...extra] = rest;
  // Only a proxy subresource has a path after it (`nodes/n1/proxy/metrics`).
  if (extra.length > 0 && subresource !== 'proxy') return { kind: 'unknown' };
  return { ...base, resource, name, subresource };
}

export function parseRoute(pathname: string): Route {
  const raw = pathname.split('/').filter((s) => s !== '');
  const segments: string[] = [];
  for (const s of raw) {
    const decoded = decode(s);
    if (decoded === undefined) return { kind: 'unknown' };
    segments.push(decoded);
  }
  if (segments.length === 0) return { kind: 'root' };
  const [head, ...tail] = segments;
  switch (head) {
    case 'version':
      return tail.length === 0 ? { kind: 'version' } : { kind: 'unknown' };
    case 'healthz':
    case 'livez':
    case 'readyz':
      return { kind: 'health', check: [head, ...tail].join('/') };
    case 'openapi':
      return { kind: 'openapi', path: tail.join('/') };
    case 'api':
      if (tail.length === 0) return { kind: 'coreVersions' };
      if (tail[0] !== 'v1') return { kind: 'unknown' };
      if (tail.length === 1) return { kind: 'groupVersion', group: '', version: 'v1' };
      return resourcePath('', 'v1', tail.slice(1));
    case 'apis':
      if (tail.length === 0) return { kind: 'groups' };
      if (tail.length === 1) return { kind: 'group', group: tail[0] };
      if (tail.length === 2) return { kind: 'groupVersion', group: tail[0], version: tail[1] };
      return resourcePath(tail[0], tail[1], tail.slice(2));
    default:
      return { kind: 'unknown' };
  }
}
