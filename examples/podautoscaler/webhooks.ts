import type { ControllerWebhooks } from 'rxkube';
import type { MutatingWebhookConfiguration, ValidatingWebhookConfiguration } from 'rxkube/kinds';
import { allow, deny, type ConversionSpoke, type MutateHandler, type ValidateHandler } from 'rxkube/webhooks';
import { GROUP, type PodAutoscaler, type PodAutoscalerV2 } from './types.js';

/**
 * The podautoscaler's webhooks: defaulting (`spec.minReplicas` is 1 when
 * left out), validation (`minReplicas` at most `maxReplicas`), and the
 * conversion between v1 (the storage version, the hub) and v2, which names
 * its target as an HPA does (`scaleTargetRef`). `runController` serves them
 * through `podAutoscalerWebhooks()`; the configurations below register them
 * with an API server that can reach the process.
 */

export const defaultPodAutoscaler: MutateHandler<PodAutoscaler> = (pa) => {
  if (pa.spec !== undefined && pa.spec.minReplicas === undefined) pa.spec.minReplicas = 1;
};

export const validatePodAutoscaler: ValidateHandler<PodAutoscaler> = (request) => {
  const spec = request.object?.spec;
  if (spec?.minReplicas !== undefined && spec.maxReplicas !== undefined && spec.minReplicas > spec.maxReplicas) {
    return deny(`spec.minReplicas (${spec.minReplicas}) must be at most spec.maxReplicas (${spec.maxReplicas})`, { code: 422, reason: 'Invalid' });
  }
  return allow();
};

/** v2 to the hub (v1) and back: the target's name moves between `scaleTargetRef` and `targetDeployment`. */
const v2: ConversionSpoke<PodAutoscalerV2, PodAutoscaler> = {
  toHub: ({ spec: { scaleTargetRef, ...replicas }, ...rest }) => ({ ...rest, spec: { targetDeployment: scaleTargetRef.name, ...replicas } }),
  fromHub: ({ spec: { targetDeployment, ...replicas }, ...rest }) => ({
    ...rest,
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: targetDeployment }, ...replicas },
  }),
};

/** For `runController({ webhooks: { tls, ...podAutoscalerWebhooks() } })`. */
export function podAutoscalerWebhooks(): Omit<ControllerWebhooks<PodAutoscaler>, 'tls'> {
  return { default: defaultPodAutoscaler, validate: validatePodAutoscaler, convert: { hub: 'v1', spokes: { v2 } } };
}

/** The MutatingWebhookConfiguration and ValidatingWebhookConfiguration for a webhook server at `url` whose CA is `caBundle`. */
export function podAutoscalerWebhookConfigurations(
  url: string,
  paths: { validate: string; default: string },
  caBundle: string,
): [MutatingWebhookConfiguration, ValidatingWebhookConfiguration] {
  const webhook = (name: string, path: string) => ({
    name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    clientConfig: { url: `${url}${path}`, caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [GROUP], apiVersions: ['*'], resources: ['podautoscalers'], scope: 'Namespaced' }],
  });
  return [
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'podautoscaler' }, webhooks: [webhook(`default.${GROUP}`, paths.default)] },
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'podautoscaler' }, webhooks: [webhook(`validate.${GROUP}`, paths.validate)] },
  ];
}

