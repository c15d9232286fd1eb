import type { KubeObject } from '../../types.js';
import { isPlainObject } from '../../util/json.js';
import type { FieldError } from '../api/statusError.js';
import type { ResourceType } from '../api/resourceType.js';
import { goQuote } from '../validation/goText.js';
import type { RoleRef } from './rbacAuthorizer.js';
import { rbacGroup } from './rbacResources.js';

/**
 * A binding's `roleRef` never changes (kube's ValidateRoleBindingUpdate and
 * ValidateClusterRoleBindingUpdate): granting another role is a new
 * binding. An update that changes it is invalid, showing the new roleRef as
 * Go prints kube's internal struct:
 *   roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"view"}: cannot change roleRef
 */

/** A binding's roleRef, read defensively: a field that is no string is unset. */
export function roleRefOf(object: KubeObject): RoleRef {
  const ref = (object as { roleRef?: unknown }).roleRef;
  if (!isPlainObject(ref)) return {};
  const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  return { apiGroup: text(ref.apiGroup), kind: text(ref.kind), name: text(ref.name) };
}

/** The error of an update of a RoleBinding or ClusterRoleBinding that changes its roleRef (none for anything else). */
export function roleRefUpdateErrors(type: ResourceType, next: KubeObject, live: KubeObject): FieldError[] {
  if (!type.builtin || type.group !== rbacGroup || (type.resource !== 'rolebindings' && type.resource !== 'clusterrolebindings')) return [];
  const before = roleRefOf(live);
  const after = roleRefOf(next);
  if ((before.apiGroup ?? '') === (after.apiGroup ?? '') && (before.kind ?? '') === (after.kind ?? '') && (before.name ?? '') === (after.name ?? '')) return [];
  const shown = `rbac.RoleRef{APIGroup:${goQuote(after.apiGroup ?? '')}, Kind:${goQuote(after.kind ?? '')}, Name:${goQuote(after.name ?? '')}}`;
  return [{ field: 'roleRef', type: 'Invalid value', shown, detail: 'cannot change roleRef' }];
}
