import type { KubeObject, Lister } from 'rxkube';

/**
 * Where a store differs from what the server holds: keys missing from it,
 * keys it has that the server does not, and keys at another
 * resourceVersion. Empty when they are equal.
 */
export function storeDifferences(store: Lister, server: readonly KubeObject[]): string[] {
  const out: string[] = [];
  const expected = new Map(server.map((o) => [o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ''}` : (o.metadata.name ?? ''), o.metadata.resourceVersion]));
  for (const [key, rv] of expected) {
    const cached = store.get(key);
    if (cached === undefined) out.push(`${key} missing (server rv ${rv ?? '?'})`);
    else if (cached.metadata.resourceVersion !== rv) out.push(`${key} at rv ${cached.metadata.resourceVersion ?? '?'}, server ${rv ?? '?'}`);
  }
  for (const key of store.keys()) if (!expected.has(key)) out.push(`${key} not on the server`);
  return out;
}
