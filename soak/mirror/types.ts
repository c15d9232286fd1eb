import type { KubeObject, WatchedResource } from 'rxkube';

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** The label that makes a ConfigMap a source (`src`) or a twin (`dst`). */
export const MIRROR_LABEL = 'mirror';
export const SOURCE = 'src';
export const TWIN = 'dst';

/** The twin of source `name`. */
export const twinName = (name: string): string => `${name}-mirror`;

export function configMaps(namespace?: string): WatchedResource {
  return { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', ...(namespace !== undefined ? { namespace } : {}) };
}

export const isSource = (cm: KubeObject | undefined): cm is ConfigMap =>
  cm !== undefined && cm.metadata.labels?.[MIRROR_LABEL] === SOURCE && !cm.metadata.deletionTimestamp;

export const isTwin = (cm: KubeObject | undefined): boolean => cm !== undefined && cm.metadata.labels?.[MIRROR_LABEL] === TWIN;

/** The uid of the ConfigMap that controls `cm` (its controller owner reference), if any. */
export function controllerUid(cm: KubeObject): string | undefined {
  return cm.metadata.ownerReferences?.find((ref) => ref.controller === true && ref.kind === 'ConfigMap')?.uid;
}

/** Same keys, same values. */
export function sameData(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ak = Object.keys(a ?? {});
  const bk = Object.keys(b ?? {});
  return ak.length === bk.length && ak.every((k) => Object.hasOwn(b ?? {}, k) && a?.[k] === b?.[k]);
}
