/** What the workload writes. */
export type ObjectKind = 'source' | 'appConfig' | 'deployment' | 'autoscaler';

/**
 * What converges: a mirror source and its twin; a PodAutoscaler and the
 * replicas of its Deployment; a Deployment's config-hash stamp and the
 * ConfigMap it mounts. Named `<kind>:<namespace>/<name>`.
 */
export type SubjectKind = 'mirror' | 'autoscaler' | 'rollout';

export const sourceName = (i: number): string => `src-${i}`;
/** A source name the workload uses once (`src-fresh-1`, `src-fresh-2`, …): never one of `sourceName`'s. */
export const freshSourceName = (n: number): string => `src-fresh-${n}`;
export const appName = (i: number): string => `app-${i}`;
export const appConfigName = (app: string): string => `${app}-config`;

export const subjectId = (kind: SubjectKind, namespace: string, name: string): string => `${kind}:${namespace}/${name}`;

export function parseSubject(id: string): { kind: SubjectKind; namespace: string; name: string } {
  const colon = id.indexOf(':');
  const slash = id.indexOf('/', colon);
  return { kind: id.slice(0, colon) as SubjectKind, namespace: id.slice(colon + 1, slash), name: id.slice(slash + 1) };
}

/** The subjects a write of that object may unsettle (apps are named after their Deployment). */
export function subjectsOf(kind: ObjectKind, name: string): [SubjectKind, string][] {
  switch (kind) {
    case 'source':
      return [['mirror', name]];
    case 'appConfig':
      return [['rollout', name]];
    case 'deployment':
      return [
        ['autoscaler', name],
        ['rollout', name],
      ];
    case 'autoscaler':
      return [['autoscaler', name]];
  }
}
