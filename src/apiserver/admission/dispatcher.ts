import type { Operation as PatchOperation } from 'fast-json-patch';
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../types.js';
import type { Logger } from '../../logger.js';
import { isPlainObject, jsonEqual } from '../../util/json.js';
import type { ResourceType } from '../api/resourceType.js';
import { badRequest, statusFor, type ApiError } from '../api/statusError.js';
import type { Cluster } from '../cluster.js';
import { applyJsonPatch } from '../writes/jsonPatch.js';
import type { JsonValue } from '../writes/jsonValue.js';
import { callWebhook, reviewUrl, WebhookCallError } from './webhookCall.js';
import { registeredWebhooks, ruleMatches, type Operation, type RegisteredWebhook, type RequestAttributes } from './webhookConfigurations.js';

/**
 * Admission as kube-apiserver's webhook plugin runs it: every matching
 * mutating webhook in turn (configurations by name), each patch applied
 * before the next is called, those with `reinvocationPolicy: IfNeeded`
 * called once more when a later one changed the object; then every matching
 * validating webhook, in parallel. A denial fails the request as
 * `admission webhook "name" denied the request: message` with the
 * webhook's code (400 at least); a webhook that cannot be called (down,
 * timed out, wrong CA, a malformed answer) fails it with a 500 under
 * `failurePolicy: Fail` and is skipped under `Ignore`. A dry-run request is
 * refused before any webhook with side effects could be called.
 */

export interface AdmissionAttempt {
  operation: Operation;
  /** The type the request addresses (its version is the request's). */
  type: ResourceType;
  subresource: string | undefined;
  namespace: string | undefined;
  name: string | undefined;
  /** The object to be stored; null for DELETE. */
  object: KubeObject | null;
  /** The live object; null for CREATE. */
  oldObject: KubeObject | null;
  dryRun: boolean;
}

export interface AdmissionOutcome {
  /** The object after every patch. */
  object: KubeObject | null;
  warnings: string[];
}

const group = 'admissionregistration.k8s.io';

function configurations(cluster: Cluster, resource: string): KubeObject[] {
  const type = cluster.registry.lookup(group, 'v1', resource);
  return type === undefined ? [] : cluster.objects(type);
}

/** The webhooks of the cluster, mutating then validating (no list is read when none is registered). */
export function webhooksIn(cluster: Cluster, logger: Logger): { mutating: RegisteredWebhook[]; validating: RegisteredWebhook[] } {
  const skip = (why: string): void => logger.warn({ why }, 'apiserver: a webhook is not called');
  return {
    mutating: registeredWebhooks(configurations(cluster, 'mutatingwebhookconfigurations'), true, skip),
    validating: registeredWebhooks(configurations(cluster, 'validatingwebhookconfigurations'), false, skip),
  };
}

function attributes(attempt: AdmissionAttempt, version: string): RequestAttributes {
  const t = attempt.type;
  return { operation: attempt.operation, group: t.group, version, resource: t.resource, subresource: attempt.subresource, namespaced: t.namespaced };
}

/** The version a webhook is sent the object in: the request's, or under matchPolicy Equivalent one its rules name. */
function matchedVersion(cluster: Cluster, webhook: RegisteredWebhook, attempt: AdmissionAttempt): string | undefined {
  if (webhook.rules.some((r) => ruleMatches(r, attributes(attempt, attempt.type.version)))) return attempt.type.version;
  if (webhook.matchPolicy === 'Exact') return undefined;
  for (const other of cluster.registry.byGroupKind(attempt.type.group, attempt.type.kind)) {
    if (other.resource === attempt.type.resource && webhook.rules.some((r) => ruleMatches(r, attributes(attempt, other.version)))) return other.version;
  }
  return undefined;
}

function labelsOf(object: KubeObject | null): Record<string, string> | undefined {
  return object?.metadata?.labels;
}

function selectorsMatch(cluster: Cluster, webhook: RegisteredWebhook, attempt: AdmissionAttempt): boolean {
  if (!webhook.objectSelector.empty && !webhook.objectSelector.matches(labelsOf(attempt.object)) && !webhook.objectSelector.matches(labelsOf(attempt.oldObject))) {
    return false;
  }
  if (webhook.namespaceSelector.empty) return true;
  const t = attempt.type;
  if (t.builtin && t.group === '' && t.resource === 'namespaces') return webhook.namespaceSelector.matches(labelsOf(attempt.object ?? attempt.oldObject));
  if (!t.namespaced || attempt.namespace === undefined) return true;
  const ns = cluster.find(cluster.namespaceType(), undefined, attempt.namespace);
  return webhook.namespaceSelector.matches(ns?.object.metadata.labels);
}

interface Matched {
  webhook: RegisteredWebhook;
  version: string;
}

/** The webhooks a request goes to, each with the version it is sent in. */
export function matching(cluster: Cluster, webhooks: readonly RegisteredWebhook[], attempt: AdmissionAttempt): Matched[] {
  const out: Matched[] = [];
  for (const webhook of webhooks) {
    const version = matchedVersion(cluster, webhook, attempt);
    if (version !== undefined && selectorsMatch(cluster, webhook, attempt)) out.push({ webhook, version });
  }
  return out;
}

function inVersion(object: KubeObject | null, attempt: AdmissionAttempt, version: string): KubeObject | null {
  if (object === null || version === attempt.type.version) return object;
  const apiVersion = attempt.type.group === '' ? version : `${attempt.type.group}/${version}`;
  return { ...object, apiVersion };
}

function review(attempt: AdmissionAttempt, version: string, object: KubeObject | null): { uid: string; body: unknown } {
  const t = attempt.type;
  const uid = randomUUID();
  const request = {
    uid,
    kind: { group: t.group, version, kind: t.kind },
    resource: { group: t.group, version, resource: t.resource },
    requestKind: { group: t.group, version: t.version, kind: t.kind },
    requestResource: { group: t.group, version: t.version, resource: t.resource },
    ...(attempt.subresource !== undefined ? { subResource: attempt.subresource, requestSubResource: attempt.subresource } : {}),
    ...(attempt.name !== undefined ? { name: attempt.name } : {}),
    ...(attempt.namespace !== undefined ? { namespace: attempt.namespace } : {}),
    operation: attempt.operation,
    userInfo: { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] },
    object: inVersion(object, attempt, version),
    oldObject: inVersion(attempt.oldObject, attempt, version),
    dryRun: attempt.dryRun,
    options: { apiVersion: 'meta.k8s.io/v1', kind: `${attempt.operation.charAt(0)}${attempt.operation.slice(1).toLowerCase()}Options` },
  };
  return { uid, body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request } };
}

interface WebhookAnswer {
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string };
  patch?: PatchOperation[];
  warnings: string[];
}

function readAnswer(body: unknown, uid: string, mutating: boolean): WebhookAnswer {
  if (!isPlainObject(body) || body.apiVersion !== 'admission.k8s.io/v1' || body.kind !== 'AdmissionReview') {
    throw new WebhookCallError(`received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview`);
  }
  const response = body.response;
  if (!isPlainObject(response)) throw new WebhookCallError('received invalid webhook response: the AdmissionReview has no response');
  if (response.uid !== uid) throw new WebhookCallError(`received invalid webhook response: expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response.uid)}`);
  if (typeof response.allowed !== 'boolean') throw new WebhookCallError('received invalid webhook response: response.allowed is not a boolean');
  const warnings = Array.isArray(response.warnings) ? response.warnings.filter((w): w is string => typeof w === 'string') : [];
  const answer: WebhookAnswer = { allowed: response.allowed, warnings, ...(isPlainObject(response.status) ? { status: response.status as WebhookAnswer['status'] } : {}) };
  if (response.patch !== undefined && response.allowed) {
    if (!mutating) throw new WebhookCallError('received invalid webhook response: a validating webhook may not return a patch');
    if (response.patchType !== 'JSONPatch') throw new WebhookCallError(`received invalid webhook response: unsupported patchType ${JSON.stringify(response.patchType)}`);
    try {
      answer.patch = JSON.parse(Buffer.from(String(response.patch), 'base64').toString('utf8')) as PatchOperation[];
    } catch {
      throw new WebhookCallError('received invalid webhook response: the patch is not base64 JSON');
    }
  }
  return answer;
}

/** The error of a denial, in kube's words (`webhookerrors.ToStatusErr`). */
export function denial(name: string, status: WebhookAnswer['status']): ApiError {
  const deniedBy = `admission webhook ${JSON.stringify(name)} denied the request`;
  const code = status?.code === undefined || status.code < 400 ? 400 : status.code;
  const message =
    status?.message !== undefined && status.message !== ''
      ? `${deniedBy}: ${status.message}`
      : status?.reason !== undefined && status.reason !== ''
        ? `${deniedBy}: ${status.reason}`
        : `${deniedBy} without explanation`;
  return statusFor(code, { message, ...(status?.reason !== undefined && status.reason !== '' ? { reason: status.reason } : {}) });
}

async function call(m: Matched, attempt: AdmissionAttempt, object: KubeObject | null, logger: Logger): Promise<WebhookAnswer | undefined> {
  const { webhook } = m;
  const { uid, body } = review(attempt, m.version, object);
  try {
    return readAnswer(await callWebhook(reviewUrl(webhook.url, webhook.timeoutSeconds), webhook.ca, webhook.timeoutSeconds, body), uid, webhook.mutating);
  } catch (error) {
    if (!(error instanceof WebhookCallError)) throw error;
    const message = `failed calling webhook ${JSON.stringify(webhook.name)}: ${error.message}`;
    if (webhook.failurePolicy === 'Ignore') {
      logger.warn({ webhook: webhook.name, why: error.message }, 'apiserver: a webhook failed and its failurePolicy is Ignore');
      return undefined;
    }
    throw statusFor(500, { message: `Internal error occurred: ${message}` });
  }
}

function checkDryRun(attempt: AdmissionAttempt, matched: readonly Matched[]): void {
  if (!attempt.dryRun) return;
  for (const { webhook } of matched) {
    if (webhook.sideEffects !== 'None' && webhook.sideEffects !== 'NoneOnDryRun') throw badRequest(`admission webhook ${JSON.stringify(webhook.name)} does not support dry run`);
  }
}

function applyPatch(name: string, object: KubeObject, patch: PatchOperation[]): KubeObject {
  try {
    // kube's own JSON patch rules, which keep a member named `__proto__` as data.
    return applyJsonPatch(object as unknown as JsonValue, patch) as unknown as KubeObject;
  } catch (error) {
    throw statusFor(500, { message: `Internal error occurred: admission webhook ${JSON.stringify(name)} returned a patch that does not apply: ${(error as Error).message}` });
  }
}

/** Runs the mutating webhooks, then the validating ones; throws the request's error (an `ApiError`). */
export async function admitWithWebhooks(cluster: Cluster, logger: Logger, attempt: AdmissionAttempt): Promise<AdmissionOutcome> {
  const { mutating, validating } = webhooksIn(cluster, logger);
  const mutators = attempt.object === null ? [] : matching(cluster, mutating, attempt);
  const validators = matching(cluster, validating, attempt);
  checkDryRun(attempt, [...mutators, ...validators]);
  let object = attempt.object;
  const warnings: string[] = [];
  const run = async (m: Matched): Promise<boolean> => {
    const answer = await call(m, attempt, object, logger);
    if (answer === undefined) return false;
    warnings.push(...answer.warnings);
    if (!answer.allowed) throw denial(m.webhook.name, answer.status);
    if (answer.patch === undefined || object === null || answer.patch.length === 0) return false;
    const next = applyPatch(m.webhook.name, object, answer.patch);
    const changed = !jsonEqual(next, object);
    object = next;
    return changed;
  };
  let lastChange = -1;
  for (const [i, m] of mutators.entries()) if (await run(m)) lastChange = i;
  // kube's reinvocation: once more, each IfNeeded webhook that ran before a later one changed the object.
  for (const [i, m] of mutators.entries()) if (m.webhook.reinvocationPolicy === 'IfNeeded' && i < lastChange) await run(m);
  const answers = await Promise.allSettled(validators.map((m) => call(m, attempt, object, logger)));
  for (const [i, settled] of answers.entries()) {
    if (settled.status === 'rejected') throw settled.reason;
    const answer = settled.value;
    if (answer === undefined) continue;
    warnings.push(...answer.warnings);
    if (!answer.allowed) throw denial((validators[i] as Matched).webhook.name, answer.status);
  }
  return { object, warnings };
}

/** Whether any webhook of the cluster could be called for the request (by its rules only). */
export function anyWebhookFor(cluster: Cluster, logger: Logger, attempt: Omit<AdmissionAttempt, 'object' | 'oldObject' | 'dryRun'>): boolean {
  const { mutating, validating } = webhooksIn(cluster, logger);
  const probe: AdmissionAttempt = { ...attempt, object: null, oldObject: null, dryRun: false };
  return [...mutating, ...validating].some((w) => matchedVersion(cluster, w, probe) !== undefined);
}
