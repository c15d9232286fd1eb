import { goQuote } from '../validation/goText.js';
import type { PolicyRule } from './policyRule.js';

/**
 * Whether one set of rules grants everything another grants, by kube's
 * RBAC comparison (component-helpers' `Covers`): each rule asked for is
 * broken down into atoms of one API group, resource, verb and resource
 * name (or one non-resource URL and verb), and every atom must be granted
 * by a single held rule, where `*` covers any verb, group or resource,
 * `*\/sub` any resource's subresource `sub`, a rule without resourceNames
 * any name (but a rule with names never a request for all), and a URL
 * ending in `*` every path it prefixes. What is not covered is listed as
 * kube lists it in a refusal: atoms of one group, resource and name merged
 * into one rule of several verbs, each written as Go's `%q` prints the
 * lists (`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`).
 */

type Atom = PolicyRule;

/** The atoms of a rule, in kube's order: group, then resource, then verb, then name; then each URL with each verb. */
export function breakdownRule(rule: PolicyRule): Atom[] {
  const atoms: Atom[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        const base = { apiGroups: [group], resources: [resource], verbs: [verb] };
        const names = rule.resourceNames ?? [];
        if (names.length === 0) atoms.push(base);
        else for (const name of names) atoms.push({ ...base, resourceNames: [name] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs ?? []) atoms.push({ nonResourceURLs: [url], verbs: [verb] });
  return atoms;
}

function holds(list: readonly string[] | undefined, values: readonly string[] | undefined, wildcard?: string): boolean {
  const held = list ?? [];
  if (wildcard !== undefined && held.includes(wildcard)) return true;
  return (values ?? []).every((v) => held.includes(v));
}

function resourcesCovered(held: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  const list = held ?? [];
  if (holds(list, wanted, '*')) return true;
  return (wanted ?? []).every((path) => {
    if (list.includes(path)) return true;
    const slash = path.indexOf('/');
    return slash >= 0 && list.includes(`*/${path.slice(slash + 1)}`);
  });
}

function urlCovered(held: string, path: string): boolean {
  return held === path || (held.endsWith('*') && path.startsWith(held.replace(/\*+$/, '')));
}

function covers(owner: PolicyRule, atom: Atom): boolean {
  const ownerNames = owner.resourceNames ?? [];
  const atomNames = atom.resourceNames ?? [];
  const namesCovered = ownerNames.length === 0 || (atomNames.length > 0 && holds(ownerNames, atomNames));
  return (
    holds(owner.verbs, atom.verbs, '*') &&
    holds(owner.apiGroups, atom.apiGroups, '*') &&
    resourcesCovered(owner.resources, atom.resources) &&
    namesCovered &&
    (atom.nonResourceURLs ?? []).every((path) => (owner.nonResourceURLs ?? []).some((held) => urlCovered(held, path)))
  );
}

/** The atoms of `wanted` that no rule of `held` covers (none: `held` grants all of `wanted`). */
export function uncoveredRules(held: readonly PolicyRule[], wanted: readonly PolicyRule[]): Atom[] {
  return wanted.flatMap(breakdownRule).filter((atom) => !held.some((owner) => covers(owner, atom)));
}

/** Atoms of one group, resource and (at most one) name merged into one rule with their verbs in order; other rules as they are. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const merged = new Map<string, { apiGroups: readonly string[]; resources: readonly string[]; resourceNames?: readonly string[]; verbs: string[] }>();
  const others: PolicyRule[] = [];
  for (const rule of rules) {
    const names = rule.resourceNames ?? [];
    const simple = (rule.nonResourceURLs ?? []).length === 0 && names.length <= 1 && rule.apiGroups?.length === 1 && rule.resources?.length === 1;
    if (!simple) {
      others.push(rule);
      continue;
    }
    const key = JSON.stringify([rule.apiGroups, rule.resources, names]);
    const existing = merged.get(key);
    if (existing !== undefined) existing.verbs.push(...(rule.verbs ?? []));
    else merged.set(key, { apiGroups: rule.apiGroups ?? [], resources: rule.resources ?? [], ...(names.length > 0 ? { resourceNames: names } : {}), verbs: [...(rule.verbs ?? [])] });
  }
  return [...others, ...merged.values()];
}

/** A list of strings as Go's `%q` prints a `[]string`: `["a" "b"]`. */
export function goQuotedList(values: readonly string[]): string {
  return `[${values.map(goQuote).join(' ')}]`;
}

/** A rule as kube writes it in an escalation refusal: only its non-empty lists, in a fixed order. */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  const add = (label: string, values: readonly string[] | undefined): void => {
    if (values !== undefined && values.length > 0) parts.push(`${label}:${goQuotedList(values)}`);
  };
  add('APIGroups', rule.apiGroups);
  add('Resources', rule.resources);
  add('NonResourceURLs', rule.nonResourceURLs);
  add('ResourceNames', rule.resourceNames);
  add('Verbs', rule.verbs);
  return `{${parts.join(', ')}}`;
}
