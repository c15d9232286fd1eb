import type { ControllerWebhooks, KubeObject } from 'rxkube';
import { allow, deny, type ConvertFunction, type MutateHandler, type ValidateHandler } from 'rxkube/webhooks';
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

const toHub: ConvertFunction = (object) => {
  const { spec, ...rest } = object as PodAutoscalerV2;
  const { scaleTargetRef, ...replicas } = spec;
  return { ...rest, spec: { targetDeployment: scaleTargetRef.name, ...replicas } } as KubeObject;
};

const fromHub: ConvertFunction = (object) => {
  const { spec, ...rest } = object as PodAutoscaler;
  const { targetDeployment, ...replicas } = spec;
  return { ...rest, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: targetDeployment }, ...replicas } } as KubeObject;
};

/** For `runController({ webhooks: { tls, ...podAutoscalerWebhooks() } })`. */
export function podAutoscalerWebhooks(): Omit<ControllerWebhooks<PodAutoscaler>, 'tls'> {
  return { default: defaultPodAutoscaler, validate: validatePodAutoscaler, convert: { hub: 'v1', spokes: { v2: { toHub, fromHub } } } };
}

/** The MutatingWebhookConfiguration and ValidatingWebhookConfiguration for a webhook server at `url` whose CA is `caBundle`. */
export function podAutoscalerWebhookConfigurations(url: string, paths: { validate: string; default: string }, caBundle: string): KubeObject[] {
  const webhook = (name: string, path: string) => ({
    name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    clientConfig: { url: `${url}${path}`, caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [GROUP], apiVersions: ['*'], resources: ['podautoscalers'], scope: 'Namespaced' }],
  });
  return [
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'podautoscaler' }, webhooks: [webhook(`default.${GROUP}`, paths.default)] } as KubeObject,
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'podautoscaler' }, webhooks: [webhook(`validate.${GROUP}`, paths.validate)] } as KubeObject,
  ];
}

