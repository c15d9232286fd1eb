import { crdValidationErrors } from '../apiserver/api/crd.js';
import { invalid } from '../apiserver/api/statusError.js';
import { isCustomResource, type DefinedCustomResource } from '../customResources/defineCustomResource.js';
import type { KubeObject } from '../types.js';

/**
 * Checks a custom resource's CRD as kube-apiserver checks one that is
 * written (the embedded API server's own validation: names, versions, the
 * structural schema's keywords, and every CEL rule of
 * `x-kubernetes-validations` compiled with its `message`,
 * `messageExpression`, `reason`, `fieldPath` and `optionalOldSelf`), and
 * throws kube's `Invalid` error naming each field when it would be
 * refused. Here rather than in `defineCustomResource` because the
 * library does not carry the API server (the CEL compiler is the
 * server's); call it in a test so that a typo in a rule fails there, not
 * at `kubectl apply`:
 *
 * ```ts
 * it('has a CRD the API server accepts', () => checkCustomResource(WebApp));
 * ```
 *
 * The memory client of `runReconcile` and `memoryClient` runs it on every
 * definition given in `resources`.
 */
export function checkCustomResource(resource: DefinedCustomResource | KubeObject): void {
  const crd = isCustomResource(resource) ? resource.crd : resource;
  const errors = crdValidationErrors(crd);
  if (errors.length > 0) throw invalid({ group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' }, crd.metadata.name ?? '', errors);
}
