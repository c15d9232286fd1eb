import { isPlainObject } from '../../util/json.js';
import { type Plain, unset, objects } from './fields.js';

/**
 * Defaults of the kinds that extend the API, as kube 1.32 sets them:
 * admissionregistration.k8s.io/v1 webhooks and policies (pkg/apis/admissionregistration/v1/defaults.go)
 * and apiextensions.k8s.io/v1 CustomResourceDefinitions
 * (staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/defaults.go).
 */


function servicePort(clientConfig: unknown): void {
  if (isPlainObject(clientConfig) && isPlainObject(clientConfig.service) && unset(clientConfig.service.port)) clientConfig.service.port = 443;
}

function rules(list: unknown): void {
  for (const rule of objects(list)) if (unset(rule.scope)) rule.scope = '*';
}

/** SetDefaults_MatchResources: matchPolicy, both selectors, and the rules' scope. */
function matchResources(match: unknown): void {
  if (!isPlainObject(match)) return;
  if (unset(match.matchPolicy)) match.matchPolicy = 'Equivalent';
  if (unset(match.namespaceSelector)) match.namespaceSelector = {};
  if (unset(match.objectSelector)) match.objectSelector = {};
  rules(match.resourceRules);
  rules(match.excludeResourceRules);
}

/** SetDefaults_MutatingWebhook / SetDefaults_ValidatingWebhook for each webhook of a configuration. */
export function defaultAdmission(obj: Plain, mutating: boolean): void {
  for (const webhook of objects(obj.webhooks)) {
    if (unset(webhook.failurePolicy)) webhook.failurePolicy = 'Fail';
    if (unset(webhook.matchPolicy)) webhook.matchPolicy = 'Equivalent';
    if (unset(webhook.namespaceSelector)) webhook.namespaceSelector = {};
    if (unset(webhook.objectSelector)) webhook.objectSelector = {};
    if (unset(webhook.timeoutSeconds)) webhook.timeoutSeconds = 10;
    if (mutating && unset(webhook.reinvocationPolicy)) webhook.reinvocationPolicy = 'Never';
    rules(webhook.rules);
    servicePort(webhook.clientConfig);
  }
}

/** SetDefaults_ValidatingAdmissionPolicySpec (failurePolicy Fail) and its match constraints. */
export function defaultPolicy(obj: Plain): void {
  const spec = obj.spec;
  if (!isPlainObject(spec) || Object.isFrozen(spec)) return;
  if (unset(spec.failurePolicy)) spec.failurePolicy = 'Fail';
  matchResources(spec.matchConstraints);
}

/** A ValidatingAdmissionPolicyBinding's match resources. */
export function defaultPolicyBinding(obj: Plain): void {
  const spec = obj.spec;
  if (!isPlainObject(spec) || Object.isFrozen(spec)) return;
  matchResources(spec.matchResources);
}

/** SetDefaults_CustomResourceDefinitionSpec: singular and list kind from the kind, conversion `None`, webhook port 443. */
export function defaultCrd(obj: Plain): void {
  const spec = obj.spec;
  if (!isPlainObject(spec) || Object.isFrozen(spec)) return;
  const names = spec.names;
  if (isPlainObject(names) && typeof names.kind === 'string' && names.kind !== '') {
    if (unset(names.singular)) names.singular = names.kind.toLowerCase();
    if (unset(names.listKind)) names.listKind = `${names.kind}List`;
  }
  if (!isPlainObject(spec.conversion)) spec.conversion = { strategy: 'None' };
  const conversion = spec.conversion as Plain;
  if (conversion.strategy === 'Webhook' && isPlainObject(conversion.webhook)) servicePort(conversion.webhook.clientConfig);
}
