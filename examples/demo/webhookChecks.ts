import { isInvalid, KubeApiError, type KubeClient, type RunningController } from 'rxkube';
import { webhookPaths } from 'rxkube/webhooks';
import { installConversion } from '../podautoscaler/crd.js';
import { autoscalerManifest } from '../podautoscaler/manifests.js';
import { GROUP, PodAutoscaler, podAutoscalers } from '../podautoscaler/types.js';
import { podAutoscalerWebhookConfigurations } from '../podautoscaler/webhooks.js';

/**
 * The main job's webhook part, on the embedded API server (a real cluster
 * cannot call back into this process): registers the controller's webhooks
 * with the server, then checks that an invalid PodAutoscaler is denied and
 * that one written at v1 reads back at v2, converted.
 */

export async function registerWebhooks(client: KubeClient, running: RunningController<PodAutoscaler>, caBundle: string, signal: AbortSignal): Promise<void> {
  const server = await (running.webhooks as NonNullable<RunningController<PodAutoscaler>['webhooks']>);
  const url = server.url.replace('//localhost:', '//127.0.0.1:');
  const paths = webhookPaths(podAutoscalers());
  await installConversion(client, `${url}${paths.convert}`, caBundle, { signal });
  for (const config of podAutoscalerWebhookConfigurations(url, paths, caBundle)) await client.apply(config, { force: true, signal });
}

export interface WebhookReport {
  /** What the summary prints, one line each. */
  lines: string[];
  /** What did not work as it should. */
  problems: string[];
}

export async function checkWebhooks(client: KubeClient, namespace: string, signal: AbortSignal): Promise<WebhookReport> {
  const lines: string[] = [];
  const problems: string[] = [];
  const invalid = { ...autoscalerManifest(namespace, 'invalid', 'web-canary', 3), spec: { targetDeployment: 'web-canary', replicas: 3, minReplicas: 5, maxReplicas: 2 } };
  try {
    await client.create(invalid, { signal });
    problems.push('the PodAutoscaler "invalid" (minReplicas 5 > maxReplicas 2) was admitted');
  } catch (error) {
    if (error instanceof KubeApiError && isInvalid(error)) lines.push(`denied "invalid": ${error.serverMessage}`);
    else problems.push(`creating "invalid" failed otherwise: ${error instanceof Error ? error.message : String(error)}`);
  }
  const legacy = autoscalerManifest(namespace, 'legacy', 'legacy-target', 2);
  await client.create(legacy, { signal });
  const read = await client.get({ ...PodAutoscaler.versions.v2.resource, namespace, name: 'legacy' }, { signal });
  const stored = await client.get(legacy, { signal });
  if (read.apiVersion !== `${GROUP}/v2` || read.spec?.scaleTargetRef?.name !== 'legacy-target') {
    problems.push(`"legacy", written at v1, read back at v2 as ${JSON.stringify(read.spec)}`);
  } else {
    lines.push(`"legacy" written at v1 {targetDeployment: legacy-target}, read at v2 {scaleTargetRef.name: ${read.spec.scaleTargetRef.name}}`);
  }
  if (stored.spec.minReplicas !== 1) problems.push(`"legacy" was not defaulted: minReplicas is ${String(stored.spec.minReplicas)}`);
  else lines.push('"legacy" defaulted by the mutating webhook: minReplicas 1');
  return { lines, problems };
}
