import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../types.js';
import { isPlainObject } from '../../util/json.js';
import { apiVersionOf, type ResourceType } from '../api/resourceType.js';
import { statusFor, type ApiError } from '../api/statusError.js';
import type { Cluster } from '../cluster.js';
import { callWebhook, reviewUrl, WebhookCallError } from '../admission/webhookCall.js';

/**
 * CRDs with `spec.conversion.strategy: Webhook`: their objects are stored
 * in the storage version and converted by the CRD's conversion webhook
 * (a `ConversionReview` of apiextensions.k8s.io/v1) when read or written
 * through another version. A conversion that fails fails the request with
 * a 500 naming the webhook's message, as kube-apiserver does.
 */

export interface WebhookConversion {
  url: string;
  ca: string | undefined;
  /** The version the objects are stored in. */
  storageVersion: string;
}

/** The conversion webhook of the CRD that serves `type`, when the CRD asks for one. */
export function webhookConversionFor(cluster: Cluster, type: ResourceType): WebhookConversion | undefined {
  if (type.builtin) return undefined;
  const crdType = cluster.registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions') as ResourceType;
  const crd = cluster.find(crdType, undefined, `${type.resource}.${type.group}`);
  const spec = (crd?.object as { spec?: { conversion?: unknown; versions?: { name: string; storage?: boolean }[] } } | undefined)?.spec;
  const conversion = spec?.conversion;
  if (!isPlainObject(conversion) || conversion.strategy !== 'Webhook' || !isPlainObject(conversion.webhook)) return undefined;
  const client = isPlainObject(conversion.webhook.clientConfig) ? conversion.webhook.clientConfig : {};
  const storageVersion = spec?.versions?.find((v) => v.storage === true)?.name;
  if (typeof client.url !== 'string' || storageVersion === undefined) return undefined;
  const ca = typeof client.caBundle === 'string' && client.caBundle !== '' ? Buffer.from(client.caBundle, 'base64').toString('utf8') : undefined;
  return { url: client.url, ca, storageVersion };
}

function failed(type: ResourceType, desired: string, why: string): ApiError {
  return statusFor(500, { message: `Internal error occurred: conversion webhook for ${desired}, Kind=${type.kind} failed: ${why}` });
}

/** `objects` in `desiredApiVersion`, converted by the webhook (objects already in that version are not sent). */
export async function convertObjects(conversion: WebhookConversion, type: ResourceType, objects: readonly KubeObject[], desiredApiVersion: string): Promise<KubeObject[]> {
  const pending = objects.filter((o) => o.apiVersion !== desiredApiVersion);
  if (pending.length === 0) return [...objects];
  const uid = randomUUID();
  const review = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid, desiredAPIVersion: desiredApiVersion, objects: pending } };
  let answer: unknown;
  try {
    answer = await callWebhook(reviewUrl(conversion.url, 30), conversion.ca, 30, review);
  } catch (error) {
    if (!(error instanceof WebhookCallError)) throw error;
    throw failed(type, desiredApiVersion, error.message);
  }
  const response = isPlainObject(answer) && answer.kind === 'ConversionReview' && isPlainObject(answer.response) ? answer.response : undefined;
  if (response === undefined) throw failed(type, desiredApiVersion, 'the answer is not a ConversionReview with a response');
  if (response.uid !== uid) throw failed(type, desiredApiVersion, `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response.uid)}`);
  const result = isPlainObject(response.result) ? response.result : {};
  if (result.status !== 'Success') throw failed(type, desiredApiVersion, typeof result.message === 'string' ? result.message : 'the webhook did not report success');
  const converted = Array.isArray(response.convertedObjects) ? (response.convertedObjects as KubeObject[]) : [];
  if (converted.length !== pending.length) throw failed(type, desiredApiVersion, `expected ${pending.length} converted objects, got ${converted.length}`);
  for (const [i, object] of converted.entries()) {
    const original = pending[i] as KubeObject;
    if (!isPlainObject(object) || object.apiVersion !== desiredApiVersion) throw failed(type, desiredApiVersion, `converted object ${i} is not in ${desiredApiVersion}`);
    if (object.metadata?.uid !== original.metadata.uid || object.metadata?.name !== original.metadata.name) {
      throw failed(type, desiredApiVersion, `converted object ${i} changed its name or uid`);
    }
  }
  let next = 0;
  return objects.map((o) => (o.apiVersion === desiredApiVersion ? o : (converted[next++] as KubeObject)));
}

/** The apiVersion of `type` in another of its versions. */
export function apiVersionIn(type: ResourceType, version: string): string {
  return apiVersionOf({ group: type.group, version });
}
