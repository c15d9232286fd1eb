/**
 * A Kubernetes group and kind, as in `schema.GroupKind`: `{ group: '', kind: 'Pod' }` for the
 * core group, `{ group: 'apps', kind: 'Deployment' }` otherwise. The version is left out on
 * purpose: patch strategies and field ownership do not depend on it for the kinds we serve.
 */
export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

/** `Deployment.apps`, or `Pod` for the core group: the form kube uses in messages. */
export function formatGroupKind(gk: GroupKind): string {
  return gk.group === '' ? gk.kind : `${gk.kind}.${gk.group}`;
}
