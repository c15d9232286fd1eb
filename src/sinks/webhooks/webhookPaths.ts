/**
 * Where each webhook of a kind is served, at the paths kubebuilder gives
 * them (`/validate-<group>-<version>-<kind>`, `/mutate-…`, `/convert`), so a
 * webhook configuration written for controller-runtime fits; `runController`
 * serves its `webhooks` there.
 */
export function webhookPaths(resource: { group?: string; version: string; kind: string }): { validate: string; default: string; convert: string } {
  const name = `${(resource.group ?? '') === '' ? 'core' : (resource.group as string).replace(/\./g, '-')}-${resource.version}-${resource.kind.toLowerCase()}`;
  return { validate: `/validate-${name}`, default: `/mutate-${name}`, convert: '/convert' };
}

