import { joinKey, type KubeObject } from '../../types.js';
import type { Cluster } from '../cluster.js';
import type { ResourceType } from '../api/resourceType.js';
import { ruleAllows, type PolicyRule } from './policyRule.js';
import { rbacGroup } from './rbacResources.js';
import type { RequestAttributes } from './requestAttributes.js';
import { mastersGroup, serviceAccountUserName, type UserInfo } from './user.js';

/**
 * Kube's RBAC authorizer over the cluster's current Roles, ClusterRoles and
 * bindings, read from storage on every decision, so that a change to any
 * of them counts from the next request on. `system:masters` is allowed
 * everything first (kube's privileged-group authorizer). Then the
 * ClusterRoleBindings, then the RoleBindings of the request's namespace;
 * the first rule that allows the request decides, and the reason says
 * which binding it came from. A binding whose role is missing is no
 * permission, and the reason of a refusal names it
 * (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`).
 */

export interface Decision {
  readonly allowed: boolean;
  readonly reason: string;
}

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

/** What a binding refers to: a Role (in the binding's namespace) or a ClusterRole. */
export interface RoleRef {
  readonly apiGroup?: string;
  readonly kind?: string;
  readonly name?: string;
}

/** The rules of a binding's role, or why it has none: a role that does not exist, or a kind that is no role. */
export interface RoleReference {
  readonly rules: readonly PolicyRule[];
  readonly error?: string;
  /** Set when the role does not exist. */
  readonly missing?: { readonly resource: 'roles' | 'clusterroles'; readonly name: string };
}

/** Who names a missing role (see `roleReferenceRules`). */
export type RoleLookup = 'lister' | 'registry';

interface Binding extends KubeObject {
  roleRef?: RoleRef;
  subjects?: Subject[];
}

interface Role extends KubeObject {
  rules?: PolicyRule[];
}

/** Where a rule came from, in kube's words: `RoleBinding "b/ns" of Role "r" to User "u"`. */
export type RuleVisitor = (source: () => string, rule: PolicyRule | undefined, error: string | undefined) => boolean;

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `ServiceAccount ${JSON.stringify(`${s.name ?? ''}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind ?? ''} ${JSON.stringify(s.name ?? '')}`;
}

function appliesTo(user: UserInfo, s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === user.name;
    case 'Group':
      return s.name !== undefined && user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return ns !== '' && s.name !== undefined && user.name === serviceAccountUserName(ns, s.name);
    }
    default:
      return false;
  }
}

export class RbacAuthorizer {
  constructor(private readonly cluster: Cluster) {}

  private type(resource: string): ResourceType {
    return this.cluster.registry.lookup(rbacGroup, 'v1', resource) as ResourceType;
  }

  private objects<T extends KubeObject>(resource: string, namespace?: string): T[] {
    const key = this.type(resource).storageKey;
    const store = this.cluster.store;
    if (namespace === undefined) {
      const { keys, objects } = store.current(key);
      return keys.map((k) => objects.get(k)?.object as T);
    }
    return store.keysIn(key, namespace).map((k) => store.get(key, k)?.object as T);
  }

  /**
   * The rules of the role a binding in `namespace` ("" for a ClusterRoleBinding) refers to. A
   * missing role is named as `lookup` names it: `role.rbac.authorization.k8s.io` as kube's
   * authorizer (its listers) says, `roles.rbac.authorization.k8s.io` as its RBAC storage (the
   * registry) says.
   */
  roleReferenceRules(roleRef: RoleRef | undefined, namespace: string, lookup: RoleLookup = 'lister'): RoleReference {
    const kind = roleRef?.kind;
    const name = roleRef?.name ?? '';
    if (kind !== 'ClusterRole' && kind !== 'Role') return { rules: [], error: `unsupported role reference kind: ${JSON.stringify(kind ?? '')}` };
    const resource = kind === 'Role' ? 'roles' : 'clusterroles';
    const found = kind === 'Role' && namespace === '' ? undefined : this.cluster.store.get(this.type(resource).storageKey, joinKey(kind === 'Role' ? namespace : undefined, name));
    if (found !== undefined) return { rules: (found.object as Role).rules ?? [] };
    const named = lookup === 'lister' ? kind.toLowerCase() : resource;
    return { rules: [], error: `${named}.${rbacGroup} ${JSON.stringify(name)} not found`, missing: { resource, name } };
  }

  /** Visits every rule that applies to `user` in `namespace` (cluster-wide ones only for ""), until `visit` returns false. */
  visitRulesFor(user: UserInfo, namespace: string, visit: RuleVisitor, lookup: RoleLookup = 'lister'): void {
    for (const binding of this.objects<Binding>('clusterrolebindings')) {
      const subject = binding.subjects?.find((s) => appliesTo(user, s, ''));
      if (subject === undefined) continue;
      const { rules, error } = this.roleReferenceRules(binding.roleRef, '', lookup);
      const source = (): string =>
        `ClusterRoleBinding ${JSON.stringify(binding.metadata.name)} of ${binding.roleRef?.kind ?? ''} ${JSON.stringify(binding.roleRef?.name ?? '')} to ${describeSubject(subject, '')}`;
      if (error !== undefined && !visit(source, undefined, error)) return;
      for (const rule of rules) if (!visit(source, rule, undefined)) return;
    }
    if (namespace === '') return;
    for (const binding of this.objects<Binding>('rolebindings', namespace)) {
      const subject = binding.subjects?.find((s) => appliesTo(user, s, namespace));
      if (subject === undefined) continue;
      const { rules, error } = this.roleReferenceRules(binding.roleRef, namespace, lookup);
      const source = (): string =>
        `RoleBinding ${JSON.stringify(`${binding.metadata.name}/${namespace}`)} of ${binding.roleRef?.kind ?? ''} ${JSON.stringify(binding.roleRef?.name ?? '')} to ${describeSubject(subject, namespace)}`;
      if (error !== undefined && !visit(source, undefined, error)) return;
      for (const rule of rules) if (!visit(source, rule, undefined)) return;
    }
  }

  authorize(user: UserInfo, request: RequestAttributes): Decision {
    if (user.groups.includes(mastersGroup)) return { allowed: true, reason: '' };
    let allowedBy: string | undefined;
    const errors: string[] = [];
    this.visitRulesFor(user, request.namespace, (source, rule, error) => {
      if (error !== undefined) errors.push(error);
      if (rule !== undefined && ruleAllows(rule, request)) {
        allowedBy = source();
        return false;
      }
      return true;
    });
    if (allowedBy !== undefined) return { allowed: true, reason: `RBAC: allowed by ${allowedBy}` };
    if (errors.length === 0) return { allowed: false, reason: '' };
    return { allowed: false, reason: `RBAC: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}` };
  }
}
