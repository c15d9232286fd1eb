import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { installCrd, type CrdWaitOptions, type KubeClient, type KubeObject } from 'rxkube';
import { v2Version } from './webhooks.js';

const crdFile = new URL('./crd.yaml', import.meta.url);

/** The PodAutoscaler CustomResourceDefinition, as in `crd.yaml`. */
export function podAutoscalerCrd(): KubeObject {
  return parse(readFileSync(crdFile, 'utf8')) as KubeObject;
}

/**
 * Applies the CRD (server-side apply, idempotent) and waits until the API
 * server reports it `Established`, so that PodAutoscalers can be listed.
 */
export async function installPodAutoscalerCrd(client: KubeClient, options: CrdWaitOptions = {}): Promise<void> {
  await installCrd(client, podAutoscalerCrd(), options);
}

/**
 * Adds v2 to the CRD and converts between v1 and v2 through the
 * conversion webhook at `url` (whose CA is `caBundle`): what a cluster
 * needs once the controller serves its webhooks.
 */
export async function installConversion(client: KubeClient, url: string, caBundle: string, options: { signal?: AbortSignal } = {}): Promise<void> {
  const crd = podAutoscalerCrd() as KubeObject & { spec: { versions: unknown[]; conversion?: unknown } };
  crd.spec.versions.push(v2Version());
  crd.spec.conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url, caBundle } } };
  await client.apply(crd, { force: true, ...(options.signal ? { signal: options.signal } : {}) });
}
