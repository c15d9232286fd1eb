import type { RequestAttributes } from './requestAttributes.js';

/**
 * One rule of a Role or ClusterRole, and whether it allows a request, by
 * kube's RBAC matching: `*` matches any verb, group, resource or URL; a
 * resource rule names `resource` or `resource/subresource` (or
 * `*\/subresource`); `resourceNames`, when given, must name the object
 * (so it never allows a create, or a list without `metadata.name`); a
 * non-resource URL ending in `*` matches every path it prefixes.
 */
export interface PolicyRule {
  readonly verbs?: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

function has(list: readonly string[] | undefined, value: string): boolean {
  return list !== undefined && (list.includes('*') || list.includes(value));
}

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    if (subresource !== '' && r === `*/${subresource}`) return true;
  }
  return false;
}

function nameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (name !== '' && names.includes(name));
}

function urlMatches(rule: PolicyRule, path: string): boolean {
  for (const url of rule.nonResourceURLs ?? []) {
    if (url === '*' || url === path) return true;
    if (url.endsWith('*') && path.startsWith(url.slice(0, -1))) return true;
  }
  return false;
}

export function ruleAllows(rule: PolicyRule, request: RequestAttributes): boolean {
  if (!has(rule.verbs, request.verb)) return false;
  if (!request.resourceRequest) return urlMatches(rule, request.path);
  return has(rule.apiGroups, request.apiGroup) && resourceMatches(rule, request.resource, request.subresource) && nameMatches(rule, request.name);
}
