import { installCrd, type CrdWaitOptions, type CustomResourceDefinitionObject, type KubeClient } from 'rxkube';
import { PodAutoscaler } from './types.js';

/**
 * The PodAutoscaler CustomResourceDefinition as a cluster without the
 * conversion webhook takes it: v1 alone, since v2 is only right once the
 * webhook converts it. (`rxkube manifests` prints both versions, converting
 * through the controller's webhook; see `definition` in controller.ts.)
 */
export function podAutoscalerCrd(): CustomResourceDefinitionObject {
  const crd = structuredClone(PodAutoscaler.crd);
  crd.spec.versions = crd.spec.versions.filter((v) => v.name === 'v1');
  return crd;
}

/**
 * Applies the CRD (server-side apply, idempotent) and waits until the API
 * server reports it `Established`, so that PodAutoscalers can be listed.
 */
export async function installPodAutoscalerCrd(client: KubeClient, options: CrdWaitOptions = {}): Promise<void> {
  await installCrd(client, podAutoscalerCrd(), options);
}

/**
 * Serves v2 beside v1 and converts between them through the conversion
 * webhook at `url` (whose CA is `caBundle`): what a cluster needs once the
 * controller serves its webhooks.
 */
export async function installConversion(client: KubeClient, url: string, caBundle: string, options: { signal?: AbortSignal } = {}): Promise<void> {
  await client.apply(PodAutoscaler.crdConvertedBy({ url, caBundle }), { force: true, ...(options.signal ? { signal: options.signal } : {}) });
}
