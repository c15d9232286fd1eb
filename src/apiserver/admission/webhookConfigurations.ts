import type { KubeObject } from '../../types.js';
import { isPlainObject } from '../../util/json.js';
import { labelSelectorFromObject, type LabelSelector, type LabelSelectorObject } from '../selectors/labelSelector.js';

/**
 * The webhooks that `ValidatingWebhookConfiguration` and
 * `MutatingWebhookConfiguration` objects register, with kube's defaults
 * (failurePolicy Fail, matchPolicy Equivalent, timeoutSeconds 10,
 * reinvocationPolicy Never), and the rules that decide whether a request is
 * sent to one, as kube-apiserver's matchers decide: operation, group,
 * version, resource (with its wildcards for resources and subresources)
 * and scope.
 * The selectors are checked by the dispatcher, which knows the objects.
 */

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface RuleWithOperations {
  operations: readonly string[];
  apiGroups: readonly string[];
  apiVersions: readonly string[];
  resources: readonly string[];
  scope: '*' | 'Cluster' | 'Namespaced';
}

export interface RegisteredWebhook {
  /** The webhook's name, as denials name it. */
  name: string;
  /** The configuration it came from (webhooks run in the order of their configurations' names). */
  configuration: string;
  mutating: boolean;
  url: string;
  /** PEM of the CAs that may sign the webhook's certificate; undefined: the system's. */
  ca: string | undefined;
  rules: readonly RuleWithOperations[];
  failurePolicy: 'Fail' | 'Ignore';
  matchPolicy: 'Exact' | 'Equivalent';
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  sideEffects: string;
  timeoutSeconds: number;
  reinvocationPolicy: 'Never' | 'IfNeeded';
}

/** What is being asked: the resource as the request names it. */
export interface RequestAttributes {
  operation: Operation;
  group: string;
  version: string;
  resource: string;
  subresource: string | undefined;
  namespaced: boolean;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function selector(value: unknown): LabelSelector {
  return labelSelectorFromObject((isPlainObject(value) ? value : {}) as LabelSelectorObject);
}

function parseRule(value: unknown): RuleWithOperations | undefined {
  if (!isPlainObject(value)) return undefined;
  const scope = value.scope === 'Cluster' || value.scope === 'Namespaced' ? value.scope : '*';
  return { operations: strings(value.operations), apiGroups: strings(value.apiGroups), apiVersions: strings(value.apiVersions), resources: strings(value.resources), scope };
}

/** The webhooks of one configuration object; a webhook without a usable `clientConfig.url` is left out (the server serves no Services). */
export function webhooksOf(config: KubeObject, mutating: boolean, onSkip: (why: string) => void): RegisteredWebhook[] {
  const list = (config as unknown as { webhooks?: unknown }).webhooks;
  if (!Array.isArray(list)) return [];
  const out: RegisteredWebhook[] = [];
  for (const raw of list) {
    if (!isPlainObject(raw) || typeof raw.name !== 'string') continue;
    const client = isPlainObject(raw.clientConfig) ? raw.clientConfig : {};
    if (typeof client.url !== 'string') {
      onSkip(`webhook "${raw.name}" of ${config.metadata.name}: only clientConfig.url is supported, not a service`);
      continue;
    }
    let selectors: { namespaceSelector: LabelSelector; objectSelector: LabelSelector };
    try {
      selectors = { namespaceSelector: selector(raw.namespaceSelector), objectSelector: selector(raw.objectSelector) };
    } catch (error) {
      onSkip(`webhook "${raw.name}" of ${config.metadata.name}: ${(error as Error).message}`);
      continue;
    }
    out.push({
      name: raw.name,
      configuration: config.metadata.name ?? '',
      mutating,
      url: client.url,
      ca: typeof client.caBundle === 'string' && client.caBundle !== '' ? Buffer.from(client.caBundle, 'base64').toString('utf8') : undefined,
      rules: (Array.isArray(raw.rules) ? raw.rules : []).map(parseRule).filter((r): r is RuleWithOperations => r !== undefined),
      failurePolicy: raw.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
      matchPolicy: raw.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
      ...selectors,
      sideEffects: typeof raw.sideEffects === 'string' ? raw.sideEffects : 'Unknown',
      timeoutSeconds: typeof raw.timeoutSeconds === 'number' ? raw.timeoutSeconds : 10,
      reinvocationPolicy: mutating && raw.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
    });
  }
  return out;
}

function matchesOne(patterns: readonly string[], value: string): boolean {
  return patterns.includes('*') || patterns.includes(value);
}

function matchesResource(patterns: readonly string[], resource: string, subresource: string | undefined): boolean {
  const full = subresource === undefined ? resource : `${resource}/${subresource}`;
  return patterns.some((p) => {
    if (p === '*/*' || p === full) return true;
    if (p === '*') return subresource === undefined;
    const [res, sub] = p.split('/');
    if (sub === undefined) return false;
    return (res === '*' || res === resource) && (sub === '*' || sub === subresource) && subresource !== undefined;
  });
}

/** Whether a rule covers the request, with the version as given (the dispatcher tries equivalent versions for matchPolicy Equivalent). */
export function ruleMatches(rule: RuleWithOperations, request: RequestAttributes): boolean {
  if (rule.scope === 'Cluster' && request.namespaced) return false;
  if (rule.scope === 'Namespaced' && !request.namespaced) return false;
  return (
    matchesOne(rule.operations, request.operation) &&
    matchesOne(rule.apiGroups, request.group) &&
    matchesOne(rule.apiVersions, request.version) &&
    matchesResource(rule.resources, request.resource, request.subresource)
  );
}

/** Configurations, sorted by name as kube-apiserver orders them, each webhook in its list order. */
export function registeredWebhooks(configs: readonly KubeObject[], mutating: boolean, onSkip: (why: string) => void): RegisteredWebhook[] {
  const sorted = [...configs].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  return sorted.flatMap((c) => webhooksOf(c, mutating, onSkip));
}
