import { createHash } from 'node:crypto';
import type { ConfigMapUse } from './references.js';
import type { ConfigMap } from './types.js';

/** The hash to stamp, or the required ConfigMaps that are missing (then nothing is stamped). */
export type ConfigHash = { hash: string; missing?: undefined } | { hash?: undefined; missing: string[] };

/**
 * The hash of the data of every ConfigMap used, by name: it changes exactly
 * when some used ConfigMap's `data` or `binaryData` changes (labels,
 * annotations and resourceVersion do not count), when one is added to or
 * removed from the template, or when an optional one appears or goes. Keys
 * are sorted, so the order the server returns them in does not matter.
 *
 * A required ConfigMap that is missing is not a change: the pods that run
 * keep what they mounted, and new ones could not start. The hash waits
 * until it exists. Only the data is hashed, so `lookup` may answer with any
 * type that has it (the soak's own ConfigMap, whose apiVersion is any string).
 */
export function configHash(uses: readonly ConfigMapUse[], lookup: (name: string) => Pick<ConfigMap, 'data' | 'binaryData'> | undefined): ConfigHash {
  const missing: string[] = [];
  const parts: unknown[] = [];
  for (const use of uses) {
    const cm = lookup(use.name);
    if (cm === undefined && !use.optional) missing.push(use.name);
    parts.push([use.name, cm === undefined ? null : [sorted(cm.data), sorted(cm.binaryData)]]);
  }
  if (missing.length > 0) return { missing };
  return { hash: createHash('sha256').update(JSON.stringify(parts)).digest('hex') };
}

function sorted(map: Record<string, string> | undefined): [string, string][] {
  return Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
